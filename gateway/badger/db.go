package badger

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	stdsync "sync"
	"sync/atomic"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

var _ gateway.Store = (*DB)(nil)

// Options tune the store. The zero value is what the gateway runs with.
type Options struct {
	// MinFreeBytes: below this much free space on the data disk, writes are
	// refused with EUNAVAILABLE before Badger is asked to grow its files.
	// Default 96 MiB.
	MinFreeBytes uint64
	// MaxBatch is the most updates committed with one sync. Default 512.
	MaxBatch int
	// GCInterval is how often value-log GC runs. Default 10 minutes.
	GCInterval time.Duration
	Logger     *slog.Logger
	Now        func() time.Time
}

// DB is the gateway's Badger store.
type DB struct {
	db   *bdg.DB
	dir  string
	opts Options
	log  *slog.Logger

	reqs   chan *request
	ctr    counters // owned by the writer goroutine
	health atomic.Pointer[error]

	closing chan struct{}
	wg      stdsync.WaitGroup
	once    stdsync.Once
}

type request struct {
	ctx  context.Context
	fn   func(gateway.Tx) error
	done chan error
}

// memTableSize is Badger's memtable (and write-ahead log file) size. It is
// kept small so the reserve of free space the store needs stays small.
const memTableSize = 32 << 20

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*DB, error) {
	if opts.MinFreeBytes == 0 {
		opts.MinFreeBytes = 96 << 20
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 512
	}
	if opts.GCInterval == 0 {
		opts.GCInterval = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	bo := bdg.DefaultOptions(dir).
		WithSyncWrites(true).
		WithNumVersionsToKeep(1).
		WithMemTableSize(memTableSize).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
		WithLogger(badgerLogger{opts.Logger}).
		WithMetricsEnabled(false)
	bdb, err := bdg.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("open badger in %s: %w", dir, err)
	}
	d := &DB{
		db: bdb, dir: dir, opts: opts, log: opts.Logger,
		reqs:    make(chan *request, 4*opts.MaxBatch),
		closing: make(chan struct{}),
	}
	if err := d.loadCounters(); err != nil {
		bdb.Close()
		return nil, err
	}
	if err := d.newIncarnation(); err != nil {
		bdb.Close()
		return nil, err
	}
	if err := d.countStatuses(); err != nil {
		bdb.Close()
		return nil, err
	}
	d.wg.Add(2)
	go d.writer()
	go d.gc()
	return d, nil
}

var (
	metaTaskSeq  = key(spaceMeta, "task_seq")
	metaEventSeq = key(spaceMeta, "event_seq")
	metaAuditSeq = key(spaceMeta, "audit_seq")
	metaFormat   = key(spaceMeta, "format")
)

func (d *DB) loadCounters() error {
	return d.db.View(func(txn *bdg.Txn) error {
		if item, err := txn.Get(metaFormat); err == nil {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return fmt.Errorf("read format: %w", err)
			}
			if len(v) != 1 || v[0] > formatVersion {
				return fmt.Errorf("data in %s was written by a newer release (format %v); upgrade the gateway", d.dir, v)
			}
		}
		for _, c := range []struct {
			k []byte
			p *uint64
		}{{metaTaskSeq, &d.ctr.task}, {metaEventSeq, &d.ctr.event}, {metaAuditSeq, &d.ctr.audit}} {
			item, err := txn.Get(c.k)
			if errors.Is(err, bdg.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("read counters: %w", err)
			}
			v, err := item.ValueCopy(nil)
			if err != nil || len(v) != 8 {
				return fmt.Errorf("read counter %q: bad value", c.k)
			}
			*c.p = binary.BigEndian.Uint64(v)
		}
		return nil
	})
}

// newIncarnation gives a data dir its incarnation (gateway.MetaIncarnation)
// when it is created: a random number, written once, that tells the cloud
// this data started afresh. A data dir that already holds anything keeps
// what it has (one made before incarnations has none), and a copy of a
// data dir carries its incarnation with it.
func (d *DB) newIncarnation() error {
	return d.db.Update(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{})
		it.Rewind()
		empty := !it.Valid()
		it.Close()
		if !empty {
			return nil
		}
		var b [8]byte
		for binary.BigEndian.Uint64(b[:]) == 0 {
			if _, err := rand.Read(b[:]); err != nil {
				return fmt.Errorf("make the data dir's incarnation: %w", err)
			}
		}
		return txn.Set(key(spaceMeta, "user", gateway.MetaIncarnation), b[:])
	})
}

var metaCounted = key(spaceMeta, "counted")

// countStatuses sets the per-status task counters from the status index,
// once, for data written before the counters existed.
func (d *DB) countStatuses() error {
	return d.db.Update(func(txn *bdg.Txn) error {
		if _, err := txn.Get(metaCounted); err == nil {
			return nil
		} else if !errors.Is(err, bdg.ErrKeyNotFound) {
			return fmt.Errorf("read counters: %w", err)
		}
		for _, s := range storeprint.Statuses {
			opts := bdg.DefaultIteratorOptions
			opts.Prefix, opts.PrefetchValues = prefix(spaceStatus, string(s)), false
			it := txn.NewIterator(opts)
			n := uint64(0)
			for it.Rewind(); it.Valid(); it.Next() {
				n++
			}
			it.Close()
			if err := txn.Set(statusCountKey(s), binary.BigEndian.AppendUint64(nil, n)); err != nil {
				return err
			}
		}
		return txn.Set(metaCounted, []byte{1})
	})
}

// Update implements gateway.Store.
func (d *DB) Update(ctx context.Context, fn func(gateway.Tx) error) error {
	req := &request{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case d.reqs <- req:
	case <-d.closing:
		return gateway.Errorf(gateway.EUNAVAILABLE, "store is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued the update runs to the end: its caller learns the outcome
	// even if it stops waiting, so nothing is half-known.
	return <-req.done
}

// View implements gateway.Store.
func (d *DB) View(ctx context.Context, fn func(gateway.ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.db.View(func(txn *bdg.Txn) error {
		return fn(&tx{txn: txn, now: d.opts.Now})
	})
}

// Health implements gateway.Store.
func (d *DB) Health() error {
	if p := d.health.Load(); p != nil {
		return *p
	}
	return nil
}

func (d *DB) setHealth(err error) {
	if err == nil {
		if d.health.Swap(nil) != nil {
			d.log.Info("storage writes succeed again")
		}
		return
	}
	if old := d.health.Swap(&err); old == nil || (*old).Error() != err.Error() {
		d.log.Error("storage trouble", "err", err)
	}
}

// writer applies queued updates in batches, one Badger transaction and one
// sync per batch.
func (d *DB) writer() {
	defer d.wg.Done()
	probe := time.NewTicker(time.Second)
	defer probe.Stop()
	for {
		var first *request
		select {
		case first = <-d.reqs:
		case <-probe.C:
			if d.Health() != nil {
				d.probe()
			}
			continue
		case <-d.closing:
			// Finish what was queued before Close.
			for {
				select {
				case r := <-d.reqs:
					d.commit([]*request{r})
				default:
					return
				}
			}
		}
		batch := []*request{first}
	fill:
		for len(batch) < d.opts.MaxBatch {
			select {
			case r := <-d.reqs:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		d.commit(batch)
	}
}

// probe tries a tiny write while storage is in trouble, so the gateway
// resumes by itself once writes succeed again.
func (d *DB) probe() {
	if err := d.checkSpace(); err != nil {
		d.setHealth(err)
		return
	}
	err := d.db.Update(func(txn *bdg.Txn) error {
		return txn.Set(key(spaceMeta, "probe"), []byte(d.opts.Now().UTC().Format(time.RFC3339Nano)))
	})
	if err != nil {
		d.setHealth(gateway.Errorf(gateway.EUNAVAILABLE, "storage write failed: %v", err))
		return
	}
	d.setHealth(nil)
}

func (d *DB) checkSpace() error {
	free, err := freeBytes(d.dir)
	if err != nil {
		return nil // cannot tell; let the write itself decide
	}
	if free < d.opts.MinFreeBytes {
		return gateway.Errorf(gateway.EUNAVAILABLE, "data disk is full: %d MiB free in %s, the gateway needs %d MiB",
			free>>20, d.dir, d.opts.MinFreeBytes>>20)
	}
	return nil
}

// commit applies a batch. Updates that fail are answered with their error
// and leave nothing behind; the rest are committed together.
func (d *DB) commit(batch []*request) {
	if err := d.checkSpace(); err != nil {
		d.setHealth(err)
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	for len(batch) > 0 {
		batch = d.commitSome(batch)
	}
}

// Budget of one Badger transaction, below Badger's own limit (15% of the
// memtable) with room for its per-entry overhead.
const (
	txnBudgetBytes = 3 << 20
	txnBudgetCount = 20000
	entryOverhead  = 32
)

// commitSome commits a prefix of the batch in one transaction and returns
// the updates still to run.
func (d *DB) commitSome(batch []*request) []*request {
	txn := d.db.NewTransaction(true)
	defer txn.Discard()
	ctr := d.ctr
	var accepted, rest []*request
	size, count := 0, 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		t := &tx{txn: txn, overlay: map[string][]byte{}, ctr: ctr, now: d.opts.Now}
		if err := callFn(r.fn, t); err != nil {
			r.done <- err
			continue
		}
		s, c := t.size()
		if s > txnBudgetBytes || c > txnBudgetCount {
			r.done <- gateway.Errorf(gateway.ETOOLARGE, "update too large to store in one transaction (%d bytes)", s)
			continue
		}
		if size+s > txnBudgetBytes || count+c > txnBudgetCount {
			// Commit what fits; this update runs again in the next
			// transaction, against the state this one leaves.
			rest = batch[i:]
			break
		}
		if err := t.flush(); err != nil {
			// The transaction may hold part of this update: drop it and
			// run the accepted updates again without this one.
			r.done <- fmt.Errorf("stage update: %w", err)
			return append(accepted, batch[i+1:]...)
		}
		size, count = size+s, count+c
		ctr = t.ctr
		accepted = append(accepted, r)
	}
	if len(accepted) == 0 {
		return rest
	}
	err := setCounters(txn, ctr)
	if err == nil {
		err = txn.Commit()
	}
	if err != nil {
		err = gateway.Errorf(gateway.EUNAVAILABLE, "storage write failed: %v", err)
		d.setHealth(err)
		for _, r := range accepted {
			r.done <- err
		}
		return rest
	}
	d.ctr = ctr
	d.setHealth(nil)
	for _, r := range accepted {
		r.done <- nil
	}
	return rest
}

func callFn(fn func(gateway.Tx) error, t *tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("update panicked: %v", p)
		}
	}()
	return fn(t)
}

func setCounters(txn *bdg.Txn, c counters) error {
	for _, kv := range []struct {
		k []byte
		v uint64
	}{{metaTaskSeq, c.task}, {metaEventSeq, c.event}, {metaAuditSeq, c.audit}} {
		if err := txn.Set(kv.k, binary.BigEndian.AppendUint64(nil, kv.v)); err != nil {
			return err
		}
	}
	return txn.Set(metaFormat, []byte{formatVersion})
}

// flush moves the overlay into the Badger transaction.
func (t *tx) flush() error {
	for k, v := range t.overlay {
		var err error
		if v == nil {
			err = t.txn.Delete([]byte(k))
		} else {
			err = t.txn.Set([]byte(k), v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// size estimates what the overlay adds to a Badger transaction.
func (t *tx) size() (bytes, count int) {
	for k, v := range t.overlay {
		bytes += len(k) + len(v) + entryOverhead
	}
	return bytes, len(t.overlay)
}

// gc runs value-log garbage collection periodically.
func (d *DB) gc() {
	defer d.wg.Done()
	t := time.NewTicker(d.opts.GCInterval)
	defer t.Stop()
	for {
		select {
		case <-d.closing:
			return
		case <-t.C:
			for d.db.RunValueLogGC(0.5) == nil {
			}
		}
	}
}

// Close finishes queued updates and closes the database.
func (d *DB) Close() error {
	var err error
	d.once.Do(func() {
		close(d.closing)
		d.wg.Wait()
		err = d.db.Close()
	})
	return err
}

func jsonMarshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode event: %w", err)
	}
	return b, nil
}

// badgerLogger sends Badger's log to slog, keeping its chatter at debug.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Error("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Infof(f string, a ...any)    { b.l.Debug("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.l.Debug("badger: " + trim(fmt.Sprintf(f, a...))) }

func trim(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}
