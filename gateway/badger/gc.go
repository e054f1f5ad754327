package badger

import (
	"fmt"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
)

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
			d.runValueLogGC()
		}
	}
}

func (d *DB) runValueLogGC() {
	d.gcMu.Lock()
	defer d.gcMu.Unlock()
	for d.db.RunValueLogGC(0.5) == nil {
	}
}

// ReclaimSpace gives the space of deleted data back, after a retention
// sweep. Badger drops a deleted key's data only when compaction carries the
// deletion down to the level that holds it. Once a tenth of the keys have
// gone since the last time, the memtables (which hold the latest
// deletions) are written out and every level is compacted into one; that
// rewrites the store, so not more often. Value-log GC runs every time.
// (The peak is the most keys stored since the last time: it races with
// the writer only towards compacting a little early or late.)
func (d *DB) ReclaimSpace() error {
	d.gcMu.Lock()
	defer d.gcMu.Unlock()
	defer d.compact.hold()() // DropPrefix and Flatten stop and start them
	if keys, peak := d.keys.Load(), d.peak.Load(); keys < peak-peak/10 {
		// Writing the memtables out blocks Badger's writes: do it between
		// two of the writer's batches, so updates wait instead of failing.
		err := d.exclusive(func() error {
			if err := d.update(func(txn *bdg.Txn) error { return txn.Set(metaFlush, []byte{1}) }); err != nil {
				return err
			}
			return d.db.DropPrefix(metaFlush) // and with it, every memtable written out
		})
		if err != nil {
			return fmt.Errorf("write the memtables out: %w", err)
		}
		if err := d.db.Flatten(2); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
		d.peak.Store(keys)
	}
	for d.db.RunValueLogGC(0.5) == nil {
	}
	return nil
}

var metaFlush = key(spaceMeta, "flush")
