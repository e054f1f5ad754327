package raft

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	stdsync "sync"
	"sync/atomic"

	hraft "github.com/hashicorp/raft"

	"github.com/storeprint/storeprint/gateway/badger"
)

// fsm builds the node's Badger store from the log: each entry is one
// update's write-set (badger.WriteSet), applied durably and once.
type fsm struct {
	db        *badger.DB
	log       *slog.Logger
	failpoint func(name string) // Options.Failpoint
	// failed is the first entry this node could not apply: its store is
	// behind the log from there on (Health says so).
	failed atomic.Pointer[error]

	index atomic.Uint64 // the last entry applied to the store

	mu   stdsync.Mutex
	next chan struct{} // closed at the next apply
}

// changed returns a channel closed once the next entry is applied.
func (f *fsm) changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next == nil {
		f.next = make(chan struct{})
	}
	return f.next
}

func (f *fsm) signal() {
	f.mu.Lock()
	if f.next != nil {
		close(f.next)
		f.next = nil
	}
	f.mu.Unlock()
}

var _ hraft.FSM = (*fsm)(nil)

// Apply implements raft.FSM. It returns nil or the error the store
// answered, which the leader hands to the update's caller.
func (f *fsm) Apply(l *hraft.Log) any {
	defer f.signal()
	if l.Type != hraft.LogCommand {
		f.index.Store(l.Index)
		return nil
	}
	if f.failpoint != nil {
		f.failpoint(FailpointBeforeApply)
	}
	var ws badger.WriteSet
	if err := ws.UnmarshalBinary(l.Data); err != nil {
		return f.fail(l.Index, err)
	}
	if err := f.db.Apply(context.Background(), &ws, l.Index); err != nil {
		return f.fail(l.Index, err)
	}
	f.index.Store(l.Index)
	return nil
}

func (f *fsm) fail(index uint64, err error) error {
	err = fmt.Errorf("apply log entry %d: %w", index, err)
	if f.failed.CompareAndSwap(nil, &err) {
		f.log.Error("this node's store could not apply the cluster's log; it is behind from here on", "index", index, "err", err)
	}
	return err
}

// Snapshot implements raft.FSM: the store's replicated state as of the
// last applied entry (every apply is synced, so the store's view holds it).
func (f *fsm) Snapshot() (hraft.FSMSnapshot, error) { return snapshot{f.db}, nil }

// Restore implements raft.FSM: the store takes the snapshot's state.
func (f *fsm) Restore(r io.ReadCloser) error {
	defer r.Close()
	if err := f.db.Import(context.Background(), r); err != nil {
		return err
	}
	i, _ := f.db.Applied()
	f.log.Info("this node's store took a snapshot of the cluster's state", "applied", i)
	f.failed.Store(nil)
	f.index.Store(i)
	f.signal()
	return nil
}

type snapshot struct{ db *badger.DB }

func (s snapshot) Persist(sink hraft.SnapshotSink) error {
	if err := s.db.Export(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (snapshot) Release() {}
