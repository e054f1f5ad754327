package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/skl"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Open opens (creating if needed) the store in dir. Before Badger reads
// anything the data dir is inspected (see inspect) and checked for the
// reserve of free space; after, everything stored is added up and
// compared with the witness of the last commit (see verify). Damage that
// the store will not run on is a *DamageError; a store found behind its
// witness opens in the recovered state (see Recovery).
func Open(dir string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	if m := uint64(gateway.MinReserve(gateway.ByteSize(opts.MemtableSize))); opts.MinFreeBytes < m && opts.MinFreeBytes > 1 {
		opts.MinFreeBytes = m
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if err := probeLock(dir); err != nil {
		return nil, err
	}
	in, err := inspect(dir)
	if err != nil {
		return nil, err
	}
	if err := checkStartSpace(dir, opts, in); err != nil {
		return nil, err
	}
	w, err := readWitness(dir)
	if err != nil {
		return nil, err
	}
	aside := setAsideTables(dir)
	if err := setAside(dir, in.unlisted); err != nil {
		return nil, fmt.Errorf("set aside tables the MANIFEST does not list: %w", err)
	}
	for _, n := range in.unlisted {
		aside = append(aside, filepath.Join(unlistedDir, n))
	}
	opts.ownSync = ownWALSync(dir) && !opts.badgerSync
	bdb, err := bdg.Open(badgerOptions(dir, opts, false))
	if err != nil {
		return nil, explainOpenError(dir, err)
	}
	d := &DB{
		db: bdb, dir: dir, opts: opts, log: opts.Logger,
		reqs:    make(chan *request, 4*opts.MaxBatch),
		excl:    make(chan func()),
		syncQ:   make(chan syncJob, syncAhead),
		closing: make(chan struct{}),
		burst:   make(chan struct{}, 1),
	}
	d.compact.db = bdb
	d.builders = findBuilderPool(bdb)
	if !writeOutAt(bdb, dir, opts.MemtableSize, 30*time.Second) {
		d.log.Warn("the store's memtables are written out at Badger's size, not memtable_size: this Badger release does not let the store set it, or the logs replayed at start were not written out within 30s", "memtable_size", opts.MemtableSize, "badger", opts.txnMemtable())
	}
	maxBatch := opts.txnMemtable() * 15 / 100
	d.txnBytes = int(maxBatch * 8 / 10)
	d.txnCount = int(maxBatch/int64(skl.MaxNodeSize)) * 8 / 10
	fail := func(err error) (*DB, error) {
		bdb.Close()
		if d.wit != nil {
			d.wit.close()
		}
		if d.wal != nil {
			d.wal.close()
		}
		return nil, err
	}
	if opts.ownSync {
		if d.wal, err = openWALSync(dir); err != nil {
			return fail(err)
		}
	}
	if err := d.load(in, w, aside); err != nil {
		return fail(err)
	}
	if len(aside) > 0 {
		// Everything committed is here without them: they held copies.
		d.log.Info("removing tables the MANIFEST did not list; the store is whole without them", "tables", strings.Join(aside, ", "))
		if err := os.RemoveAll(filepath.Join(dir, unlistedDir)); err != nil {
			return fail(err)
		}
	}
	d.publish(d.db.NewTransaction(false)) // all of it is synced
	d.keys.Store(d.cmt.Keys)
	d.peak.Store(d.cmt.Keys)
	d.readDisk()
	d.dirAt, _ = dirStamp(d.dir)
	d.wg.Add(4)
	// The syncer starts from the state opened, read here: the writer
	// owns d.cmt and d.ctr from the moment it runs.
	synced := syncJob{commit: true, cmt: d.cmt, ctr: d.ctr}
	go d.writer()
	go d.syncer(synced)
	go d.gc()
	go d.pageOuts()
	return d, nil
}

// load reads what the store opened holds: it checks its tables, loads
// the counters, starts a new incarnation, counts the tasks by status and
// verifies everything against the witness w, then syncs what it wrote
// (the incarnation, counters, the commit state).
func (d *DB) load(in *inspection, w *witnessState, aside []string) error {
	if err := checkTables(d.dir, in, d.db); err != nil {
		return err
	}
	if err := d.loadCounters(); err != nil {
		return err
	}
	if err := d.newIncarnation(); err != nil {
		return err
	}
	if err := d.countStatuses(); err != nil {
		return err
	}
	if err := d.verify(w, aside, in.mems); err != nil {
		return err
	}
	return d.syncLog()
}

// checkTables makes sure Badger opened every table the MANIFEST lists: a
// table it cannot read it leaves out, and goes on without its data.
func checkTables(dir string, in *inspection, bdb *bdg.DB) error {
	open := map[uint64]bool{}
	for _, t := range bdb.Tables() {
		open[t.ID] = true
	}
	var missing []string
	for _, id := range in.tables {
		if !open[id] {
			missing = append(missing, fmt.Sprintf("%06d.sst", id))
		}
	}
	if len(missing) > 0 {
		return damaged(dir, "Badger left out tables the MANIFEST lists", missing...)
	}
	return nil
}

// LockedError: another process (a running gateway) has the data dir open.
type LockedError struct{ Dir string }

func (e *LockedError) Error() string {
	return "data dir " + e.Dir + " is in use by another process (is the gateway running?)"
}

// explainOpenError names the file behind an error of Badger's own.
func explainOpenError(dir string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Cannot acquire directory lock"):
		return &LockedError{Dir: dir}
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("open the store in %s: %w", dir, err)
	case errors.Is(err, bdg.ErrEncryptionKeyMismatch), strings.Contains(msg, "KEYREGISTRY"), strings.Contains(msg, "key registry"):
		return damagedf(dir, []string{"KEYREGISTRY"}, "the key registry is damaged: %s", firstLine(err))
	}
	for _, ext := range []string{".mem", ".vlog", ".sst"} {
		if f := fileIn(msg, ext); f != "" {
			return damagedf(dir, []string{f}, "Badger cannot read %s: %s", f, firstLine(err))
		}
	}
	return damagedf(dir, nil, "Badger cannot open the store: %s", firstLine(err))
}

// fileIn finds a file name with the extension (digits, then ext) in an
// error message.
func fileIn(msg, ext string) string {
	for off := 0; ; {
		i := strings.Index(msg[off:], ext)
		if i < 0 {
			return ""
		}
		i += off
		j := i
		for j > 0 && msg[j-1] >= '0' && msg[j-1] <= '9' {
			j--
		}
		if j < i {
			return msg[j : i+len(ext)]
		}
		off = i + len(ext)
	}
}

var (
	metaTaskSeq  = key(spaceMeta, "task_seq")
	metaEventSeq = key(spaceMeta, "event_seq")
	metaAuditSeq = key(spaceMeta, "audit_seq")
	metaFormat   = key(spaceMeta, "format")
	metaCommit   = key(spaceMeta, "commit")   // commitState of the last commit
	metaWitness  = key(spaceMeta, "witness")  // the witness's id
	metaRecovery = key(spaceMeta, "recovery") // the last recovery, JSON
	metaSeqsFrom = key(spaceMeta, "seqs_from")
)

func (d *DB) loadCounters() error {
	return d.db.View(func(txn *bdg.Txn) error {
		if item, err := txn.Get(metaFormat); err == nil {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return fmt.Errorf("read format: %w", err)
			}
			if len(v) != 1 || v[0] > storeFormat {
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
	return d.update(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{})
		it.Rewind()
		empty := !it.Valid()
		it.Close()
		if !empty {
			return nil
		}
		var b [8]byte
		for binary.BigEndian.Uint64(b[:]) == 0 {
			copy(b[:], storeprint.RandomBytes(len(b)))
		}
		return txn.Set(key(spaceMeta, "user", gateway.MetaIncarnation), b[:])
	})
}

var metaCounted = key(spaceMeta, "counted")

// countStatuses sets the per-status task counters from the status index,
// once, for data written before the counters existed.
func (d *DB) countStatuses() error {
	return d.update(func(txn *bdg.Txn) error {
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

// checkStartSpace refuses to start below the reserve: Badger creates and
// maps new log files at start, and writing to a mapped file on a full disk
// kills the process (SIGBUS).
func checkStartSpace(dir string, o Options, in *inspection) error {
	free, err := freeBytes(dir)
	if err != nil {
		return nil // cannot tell; Badger will say
	}
	need := o.MinFreeBytes
	if n := uint64(in.memBytes + 2*o.txnMemtable() + 16<<20); n > need && o.MinFreeBytes > 1 {
		need = n // replaying the logs writes them out as tables
	}
	if free < need {
		return &DiskLowError{Dir: dir, Free: free, Need: need}
	}
	return nil
}

// DiskLowError: too little free space to start.
type DiskLowError struct {
	Dir        string
	Free, Need uint64
}

func (e *DiskLowError) Error() string {
	return fmt.Sprintf("disk low: %d MiB free on the data disk (%s), the gateway needs %d MiB to start; free some space (old logs, old backups) and start again",
		e.Free>>20, e.Dir, e.Need>>20)
}
