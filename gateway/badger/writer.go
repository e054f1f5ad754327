package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// writer applies queued updates in batches, one Badger transaction per
// batch. It commits a batch and hands it to the syncer, which syncs it
// and answers its updates, and meanwhile runs and commits the next
// batches, up to syncAhead of them waiting (see syncer). After each
// batch, and every DiskCheckEvery, it drains Badger's pool of table
// builders' buffers (see builderPool). Every DiskCheckEvery, busy or
// idle, it also reads the free space, syncs the
// directory if files came or went, pages out the tables once a memtable's
// worth was written (in a burst more often, see pageOuts), and gives
// memory back after a burst.
func (d *DB) writer() {
	defer d.wg.Done()
	tick := time.NewTicker(d.opts.DiskCheckEvery)
	defer tick.Stop()
	var sinceTrim int64    // bytes committed since memory was last given back
	var sincePageOut int64 // bytes committed since tables were last paged out
	trims := 0             // times left to give memory back after a burst
	lastWrite := time.Now()
	var window int64 // bytes committed since windowAt, to tell a burst (see pageOuts)
	windowAt := time.Now()
	for {
		var first *request
		select {
		case first = <-d.reqs:
		case fn := <-d.excl:
			fn()
			continue
		case <-tick.C:
			d.monitor()
			d.builders.drain()
			if sinceTrim > 4*d.opts.MemtableSize {
				trims, sinceTrim = 30, 0
			}
			if sincePageOut > d.opts.MemtableSize {
				// During a burst too: every memtable written out starts
				// compactions, which write new tables and read old ones
				// through their mappings, and would leave them all
				// resident until the burst is over.
				pageOutTables(d.dir)
				sincePageOut = 0
			}
			if trims > 0 && time.Since(lastWrite) > 2*d.opts.DiskCheckEvery {
				// A burst is over: hand the memory it took back to the
				// system, for a while, as Badger's compactions finish,
				// release their buffers and write their last tables.
				debug.FreeOSMemory()
				pageOutTables(d.dir)
				trims--
			}
			if time.Since(lastWrite) >= d.opts.DiskCheckEvery {
				// Nothing written since the last check: Badger's
				// compactors, done, need not wake to look (see compactions).
				paused := d.compact.idle()
				if d.opts.idleHook != nil {
					d.opts.idleHook(paused)
				}
			}
			continue
		case <-d.closing:
			// Finish what was queued before Close.
			for {
				select {
				case r := <-d.reqs:
					d.commit([]*request{r})
				default:
					close(d.syncQ)
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
		n := int64(d.commit(batch))
		d.builders.drain()
		sinceTrim += n
		sincePageOut += n
		if now := time.Now(); now.Sub(windowAt) > time.Second {
			windowAt, window = now, n
		} else if window += n; window >= d.burstBytes() {
			select {
			case d.burst <- struct{}{}: // see pageOuts
			default:
			}
			windowAt, window = now, 0
		}
		lastWrite = time.Now()
	}
}

// pageOuts pages out the store's mapped files (see pageOutTables) every
// burstPageOut in a burst, and after one while Badger's compactors still
// run (up to burstTail): every memtable written out starts compactions,
// which map their new tables whole and read the old ones through their
// mappings, and would leave the store resident until the writer's next
// check. The writer says when a burst goes on (see burstBytes); at a
// store's usual pace pageOuts waits for that, and wakes for nothing.
func (d *DB) pageOuts() {
	defer d.wg.Done()
	var tick *time.Ticker
	var hot time.Time // when the writer last said a burst went on
	for {
		if tick == nil {
			select {
			case <-d.closing:
				return
			case <-d.burst:
				hot, tick = time.Now(), time.NewTicker(burstPageOut)
			}
		}
		select {
		case <-d.closing:
			tick.Stop()
			return
		case <-d.burst:
			hot = time.Now()
		case now := <-tick.C:
			since := now.Sub(hot)
			if since <= time.Second || (since <= burstTail && !d.compact.paused.Load()) {
				pageOutTables(d.dir)
				continue
			}
			tick.Stop()
			tick = nil
		}
	}
}

// burstBytes is how much a burst commits in a second: a sixteenth of a
// memtable (half a MiB with the defaults, a few hundred orders a second).
func (d *DB) burstBytes() int64 { return d.opts.MemtableSize / 16 }

// burstPageOut is how often a burst's tables are paged out (see
// pageOuts): a compaction reads and writes a few MiB in that time.
const burstPageOut = 100 * time.Millisecond

// burstTail is how long after a burst its compactions' tables are still
// paged out every burstPageOut; the writer's checks go on after that.
const burstTail = 30 * time.Second

// monitor reads the free space: below the reserve the store is unhealthy
// ("disk low") at once, idle or not; while in trouble it tries a tiny
// write, so the gateway resumes by itself once writes succeed again.
func (d *DB) monitor() {
	d.syncDirIfChanged()
	s := d.readDisk()
	if s != nil && s.Low {
		d.fail(d.cmt.Gen, d.diskLow(s))
		return
	}
	if d.Health() == nil {
		return
	}
	err := d.update(func(txn *bdg.Txn) error {
		return txn.Set(key(spaceMeta, "probe"), []byte(d.opts.Now().UTC().Format(time.RFC3339Nano)))
	})
	if err != nil {
		d.fail(d.cmt.Gen, storeprint.Errorf(storeprint.EUNAVAILABLE, "storage write failed: %v", err))
		return
	}
	d.setHealth(nil)
}

// syncDirIfChanged makes new files' directory entries durable. Badger
// syncs the data dir after compactions but not after creating a memtable
// log or flushing one to a table, so a power cut could lose the entry of a
// file that holds acknowledged writes on file systems that do not order
// metadata.
func (d *DB) syncDirIfChanged() {
	d.dirMu.Lock()
	defer d.dirMu.Unlock()
	now, err := dirStamp(d.dir)
	if err != nil || now == d.dirAt {
		return
	}
	if err := syncDir(d.dir); err != nil {
		d.log.Error("sync data dir", "err", err)
		return
	}
	d.dirAt = now
}

// commit applies a batch and returns the bytes it committed. Updates that
// fail are answered with their error and leave nothing behind; the rest
// are committed together.
func (d *DB) commit(batch []*request) int {
	if s := d.readDisk(); s != nil && s.Low {
		err := d.diskLow(s)
		d.fail(d.cmt.Gen, err)
		for _, r := range batch {
			r.done <- err
		}
		return 0
	}
	n := 0
	for len(batch) > 0 {
		var c int
		batch, c = d.commitSome(batch)
		n += c
	}
	if len(d.refused) > 0 {
		d.syncQ <- syncJob{refused: d.refused}
		d.refused = nil
	}
	return n
}

// commitSome commits a prefix of the batch in one transaction, hands it to
// the syncer and returns the updates still to run. The updates run against
// everything committed before, synced or not: none of it is seen outside
// the writer, or answered, before it is synced, and a commit is synced
// only after the ones before it.
func (d *DB) commitSome(batch []*request) ([]*request, int) {
	d.compact.resume()
	txn := d.db.NewTransaction(true)
	defer txn.Discard()
	ctr, cmt := d.ctr, d.cmt
	var accepted, rest []*request
	size, count := 0, 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		t := &tx{txn: txn, overlay: map[string]write{}, read: map[string][]byte{}, ctr: ctr, from: ctr, now: d.opts.Now}
		if err := callFn(r.fn, t); err != nil {
			d.refuse(r, err)
			continue
		}
		s, c := t.size()
		if s > d.txnBytes || c > d.txnCount || int64(t.largest()) >= valueThreshold(d.opts.txnMemtable()) {
			d.refuse(r, storeprint.Errorf(storeprint.ETOOLARGE, "update too large to store in one transaction (%d bytes)", s))
			continue
		}
		if size+s > d.txnBytes || count+c > d.txnCount {
			// Commit what fits; this update runs again in the next
			// transaction, against the state this one leaves.
			rest = batch[i:]
			break
		}
		next := cmt.digest
		if err := t.flush(&next); err != nil {
			// The transaction may hold part of this update: drop it and
			// run the accepted updates again without this one.
			d.refuse(r, fmt.Errorf("stage update: %w", err))
			return append(accepted, batch[i+1:]...), 0
		}
		size, count = size+s, count+c
		ctr, cmt.digest = t.ctr, next
		accepted = append(accepted, r)
	}
	if len(accepted) == 0 {
		return rest, 0
	}
	cmt.Gen++
	err := setChangedCounters(txn, ctr, d.ctr)
	if err == nil {
		err = txn.Set(metaCommit, cmt.encode())
	}
	if err == nil {
		// Into Badger's memtable and log, while the commits before may
		// still be syncing; readers see it only once it is synced too.
		err = d.badgerCommit(txn, len(accepted))
	}
	if err != nil {
		err = storeprint.Errorf(storeprint.EUNAVAILABLE, "storage write failed: %v", err)
		d.fail(d.cmt.Gen, err)
		for _, r := range accepted {
			r.done <- err
		}
		return rest, 0
	}
	d.ctr, d.cmt = ctr, cmt
	d.keys.Store(cmt.Keys)
	if cmt.Keys > d.peak.Load() {
		d.peak.Store(cmt.Keys)
	}
	// The view of this commit: opened here, before the writer commits
	// anything else, so it holds this commit and those before it only.
	view := d.db.NewTransaction(false)
	// Updates that need no sync of their own are answered now; the rest
	// once synced.
	durable := accepted[:0]
	for _, r := range accepted {
		if r.lazy {
			r.done <- nil
		} else {
			durable = append(durable, r)
		}
	}
	d.syncQ <- syncJob{commit: true, cmt: cmt, ctr: ctr, at: d.opts.Now(), reqs: durable, refused: d.refused, view: view}
	d.refused = nil
	return rest, size
}

// refuse answers an update that failed: at once if it needs no sync of
// its own, else after the sync of the commits before it, which it may
// have read (see syncJob).
func (d *DB) refuse(r *request, err error) {
	if r.lazy {
		r.done <- err
		return
	}
	d.refused = append(d.refused, refusal{r, err})
}

// badgerCommit commits txn, holding n updates. Where Badger syncs its log
// itself (see walSync) the commit is the sync, and the observer is told.
func (d *DB) badgerCommit(txn *bdg.Txn, n int) error {
	if d.wal != nil || d.opts.Observer == nil {
		return txn.Commit()
	}
	t0 := time.Now()
	err := txn.Commit()
	if err == nil {
		d.opts.Observer.Synced(time.Since(t0), n)
	}
	return err
}

func callFn(fn func(gateway.Tx) error, t *tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("update panicked: %v", p)
		}
	}()
	return fn(t)
}

// setChangedCounters writes the counters that moved since was: a commit
// rewrites only those, Open (see verify) all of them with the format.
func setChangedCounters(txn *bdg.Txn, c, was counters) error {
	for _, kv := range []struct {
		k      []byte
		v, was uint64
	}{{metaTaskSeq, c.task, was.task}, {metaEventSeq, c.event, was.event}, {metaAuditSeq, c.audit, was.audit}} {
		if kv.v == kv.was {
			continue
		}
		if err := txn.Set(kv.k, binary.BigEndian.AppendUint64(nil, kv.v)); err != nil {
			return err
		}
	}
	return nil
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
	return txn.Set(metaFormat, []byte{storeFormat})
}

// flush moves the overlay into the Badger transaction, taking each old
// value out of the digest and putting the new one in.
func (t *tx) flush(dg *digest) error {
	for _, w := range t.overlay {
		kb, v := w.k, w.v
		if !volatile(kb) {
			old, found, err := t.before(kb, v)
			if err != nil {
				return err
			}
			if found {
				dg.remove(kb, old)
			} else if v == nil {
				continue // deleting what is not there: no tombstone
			}
			if v != nil {
				dg.add(kb, v)
			}
		}
		var err error
		if v == nil {
			err = t.txn.Delete(kb)
		} else {
			err = t.txn.Set(kb, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// before returns a key's value in the transaction before this update,
// from what the update read, or reading it.
func (t *tx) before(k, next []byte) ([]byte, bool, error) {
	if v, ok := t.read[string(k)]; ok {
		return v, v != nil, nil
	}
	if next != nil && t.numberedHere(k) {
		return nil, false, nil // a new sequence number: never stored before
	}
	item, err := t.txn.Get(k)
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := item.ValueCopy(nil)
	return v, err == nil, err
}

// numberedHere reports whether k is the key of a sequence number this
// update took: an outbox event or audit entry (whose numbers a set always
// takes), or a task's status or queue entry under a task seq above the
// one before the update.
func (t *tx) numberedHere(k []byte) bool {
	if len(k) < 10 || k[1] != 0 {
		return false
	}
	switch k[0] {
	case spaceEvent, spaceAudit:
		return len(k) == 10
	case spaceStatus, spaceQueue:
		return len(k) >= 11 && k[len(k)-9] == 0 && binary.BigEndian.Uint64(k[len(k)-8:]) > t.from.task
	}
	return false
}

// largest is the length of the overlay's largest value.
func (t *tx) largest() int {
	n := 0
	for _, w := range t.overlay {
		n = max(n, len(w.v))
	}
	return n
}

// size estimates what the overlay adds to a Badger transaction.
func (t *tx) size() (bytes, count int) {
	for k, w := range t.overlay {
		bytes += len(k) + len(w.v) + entryOverhead
	}
	return bytes, len(t.overlay)
}

// exclusive runs fn in the writer goroutine, between batches.
func (d *DB) exclusive(fn func() error) error {
	done := make(chan error, 1)
	select {
	case d.excl <- func() { done <- fn() }:
	case <-d.closing:
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "store is closed")
	}
	return <-done
}
