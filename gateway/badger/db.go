package badger

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

var _ gateway.Store = (*DB)(nil)

// DB is the gateway's Badger store.
type DB struct {
	db   *bdg.DB
	dir  string
	opts Options
	log  *slog.Logger

	reqs     chan *request
	excl     chan func() // run by the writer between batches
	ctr      counters    // owned by the writer goroutine
	cmt      commitState // the last commit, owned by the writer goroutine
	wit      *witness
	wal      *walSync     // nil: Badger syncs its own log
	syncQ    chan syncJob // commits to sync, then answer; see syncer
	viewMu   stdsync.Mutex
	view     *view // what readers read: the newest synced commit; see View
	dirMu    stdsync.Mutex
	dirAt    int64        // the data dir's stamp when it was last synced
	syncHook func() error // tests: runs before each commit's sync; an error fails it
	compact  compactions
	builders builderPool // Badger's buffers for building tables, drained by the writer
	refused  []refusal   // updates that failed, to answer after the syncs before them; owned by the writer
	health   atomic.Pointer[error]
	onHealth atomic.Pointer[func()]
	onQuiet  atomic.Pointer[func()]
	healthMu stdsync.Mutex
	// failedAt is the last commit (Gen) before the latest storage error:
	// only the witness of a later commit says storage works again.
	failedAt uint64
	disk     atomic.Pointer[gateway.DiskState]
	recovery atomic.Pointer[gateway.Recovery]

	keys, peak atomic.Uint64 // keys stored now, and the most since space was last reclaimed
	burst      chan struct{} // the writer says a burst goes on (see pageOuts)

	txnBytes, txnCount int // one transaction's budget, below Badger's limit

	closing chan struct{}
	wg      stdsync.WaitGroup
	once    stdsync.Once
	gcMu    stdsync.Mutex
}

type request struct {
	ctx  context.Context
	fn   func(gateway.Tx) error
	done chan error
	// lazy: the update needs no sync of its own (gateway.WithoutSync). It
	// is answered once committed, and synced with the next update that
	// needs a sync, or at most idleSync later (see syncer).
	lazy bool
}

// Per-entry overhead Badger counts against a transaction, with room.
const entryOverhead = 32

// Update implements gateway.Store.
func (d *DB) Update(ctx context.Context, fn func(gateway.Tx) error) error {
	var t0 time.Time
	if d.opts.Observer != nil {
		t0 = time.Now()
	}
	req := &request{ctx: ctx, fn: fn, done: make(chan error, 1), lazy: gateway.SyncDeferred(ctx)}
	select {
	case d.reqs <- req:
	case <-d.closing:
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "store is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued the update runs to the end: its caller learns the outcome
	// even if it stops waiting, so nothing is half-known.
	err := <-req.done
	if d.opts.Observer != nil {
		d.opts.Observer.Updated(time.Since(t0))
	}
	return err
}

// View implements gateway.Store.
func (d *DB) View(ctx context.Context, fn func(gateway.ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v := d.acquire()
	if v == nil {
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "store is closed")
	}
	defer d.release(v)
	return fn(&tx{txn: v.txn, now: d.opts.Now})
}

// view is a read transaction that sees every commit up to one that is on
// disk and none after it. The writer opens one after each commit, and the
// syncer makes it the one readers take once that commit is synced; every
// reader that starts meanwhile shares it (a read-only Badger transaction
// is safe for concurrent reads). So a reader never waits for a sync, nor
// sees a commit that is not on disk yet.
type view struct {
	txn  *bdg.Txn
	refs int // readers, and one while it is the newest; under DB.viewMu
}

// acquire returns the newest view, for a reader to release when done, or
// nil once the store is closed.
func (d *DB) acquire() *view {
	d.viewMu.Lock()
	defer d.viewMu.Unlock()
	if d.view != nil {
		d.view.refs++
	}
	return d.view
}

// release lets go of a view; the last reader of one no longer the newest
// ends its transaction.
func (d *DB) release(v *view) {
	d.viewMu.Lock()
	v.refs--
	done := v.refs == 0
	d.viewMu.Unlock()
	if done {
		v.txn.Discard()
	}
}

// publish makes txn the view readers take from now on.
func (d *DB) publish(txn *bdg.Txn) {
	d.viewMu.Lock()
	old := d.view
	d.view = &view{txn: txn, refs: 1}
	d.viewMu.Unlock()
	if old != nil {
		d.release(old)
	}
}

// update runs a Badger update outside the writer's batches and syncs it.
// It runs in the writer goroutine (see exclusive), or in Open before the
// writer starts: so no view the writer opens holds it before it is synced.
func (d *DB) update(fn func(txn *bdg.Txn) error) error {
	d.compact.resume()
	if err := d.db.Update(fn); err != nil {
		return err
	}
	return d.syncLog()
}

// Close finishes queued updates and closes the database. Badger writes its
// memtable out as a table when it closes; on a disk without room for it
// (below the reserve) that write would kill the process, so the memtable
// is left in its log, where every acknowledged write already is, to be
// replayed at the next start.
func (d *DB) Close() error {
	var err error
	d.once.Do(func() {
		close(d.closing)
		d.wg.Wait()
		d.viewMu.Lock()
		v := d.view
		d.view = nil // readers from now on are told the store is closed
		d.viewMu.Unlock()
		d.release(v)
		if !d.roomToClose() {
			d.log.Warn("disk low: closing without writing the memtable out; its writes are durable in its log and replay at the next start", "data_dir", d.dir)
			err = d.wit.close()
			return
		}
		err = d.db.Close()
		if werr := d.wit.close(); err == nil {
			err = werr
		}
		if d.wal != nil {
			d.wal.close()
		}
	})
	return err
}

// roomToClose reports whether there is room to write the memtables out.
func (d *DB) roomToClose() bool {
	free, err := freeBytes(d.dir)
	if err != nil {
		return true
	}
	var logs int64
	entries, _ := os.ReadDir(d.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".mem") {
			if n, err := allocatedBytes(filepath.Join(d.dir, e.Name())); err == nil {
				logs += n
			}
		}
	}
	return free >= uint64(logs)+16<<20
}

func jsonMarshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode event: %w", err)
	}
	return b, nil
}
