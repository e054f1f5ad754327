package gateway

import (
	"context"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
)

// changes fans out "something changed" to subscribers (the LAN page's live
// updates). A subscriber sees at least one signal after every change.
type changes struct {
	mu   stdsync.Mutex
	subs map[chan struct{}]struct{}
	gen  uint64 // grows with every change
}

func (c *changes) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
}

// Subscribe returns a channel that receives a value after changes to tasks,
// printers or failovers, and a function that ends the subscription.
func (g *Gateway) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	g.changes.mu.Lock()
	if g.changes.subs == nil {
		g.changes.subs = map[chan struct{}]struct{}{}
	}
	g.changes.subs[ch] = struct{}{}
	g.changes.mu.Unlock()
	return ch, func() {
		g.changes.mu.Lock()
		delete(g.changes.subs, ch)
		g.changes.mu.Unlock()
	}
}

// Notify tells subscribers that something they show changed outside the
// store: the sync link, the data disk.
func (g *Gateway) Notify() { g.changes.signal() }

// Generation grows by one with every change subscribers are told of: a
// snapshot read at one generation is current until it moves.
func (g *Gateway) Generation() uint64 {
	g.changes.mu.Lock()
	defer g.changes.mu.Unlock()
	return g.changes.gen
}

// notifyingStore signals subscribers after every successful update and
// after a write that failed for storage trouble, and keeps the gateway's
// in-memory times (see times) in step with every task it commits: the one
// place where a task's stored next_at becomes a wait on the monotonic
// clock, whichever path wrote it.
type notifyingStore struct {
	Store
	c     *changes
	times *times
	now   func() time.Time
}

func (s notifyingStore) Update(ctx context.Context, fn func(Tx) error) error {
	var puts []putTask
	err := s.Store.Update(ctx, func(tx Tx) error {
		puts = puts[:0] // fn may run more than once
		return fn(observedTx{Tx: tx, puts: &puts})
	})
	if err == nil {
		now := s.now()
		for _, p := range puts {
			switch {
			case !p.status.Open():
				s.times.forget(p.seq)
			case p.created:
				s.times.accepted(p.seq, p.nextAt.Sub(now))
			case p.rescheduled:
				s.times.dueIn(p.seq, p.nextAt.Sub(now))
			}
		}
	}
	if err == nil || storeprint.ErrorCode(err) == storeprint.EUNAVAILABLE {
		s.c.signal() // a change, or storage trouble people must see
	}
	return err
}

// putTask is what a committed task write tells the in-memory times.
type putTask struct {
	seq         uint64
	status      storeprint.Status
	nextAt      time.Time
	created     bool // a new task
	rescheduled bool // next_at changed
}

// observedTx notes every task it stores.
type observedTx struct {
	Tx
	puts *[]putTask
}

func (x observedTx) PutTask(t *Task) error {
	old, err := x.Tx.Task(t.TaskNo)
	if err != nil && !isNotFound(err) {
		return err
	}
	if err := x.Tx.PutTask(t); err != nil {
		return err
	}
	*x.puts = append(*x.puts, putTask{
		seq: t.Seq, status: t.Status, nextAt: t.NextAt,
		created: old == nil, rescheduled: old != nil && (!old.NextAt.Equal(t.NextAt) || !old.Status.Open()),
	})
	return nil
}
