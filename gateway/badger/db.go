package badger

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/skl"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

var _ gateway.Store = (*DB)(nil)

// Options tune the store. The zero value is what the gateway runs with.
type Options struct {
	// MinFreeBytes is the reserve: below this much free space on the data
	// disk, writes are refused with EUNAVAILABLE before Badger is asked to
	// grow its files, Health says "disk low", and Open refuses to start.
	// Default 96 MiB; never less than 4 memtables and 16 MiB.
	MinFreeBytes uint64
	// Memory (see docs/config.md, [storage]). Defaults 8 MiB, 8 MiB, 0.
	MemtableSize   int64
	BlockCacheSize int64
	IndexCacheSize int64
	// MaxBatch is the most updates committed with one sync. Default 512.
	MaxBatch int
	// GCInterval is how often value-log GC runs. Default 10 minutes.
	GCInterval time.Duration
	// DiskCheckEvery is how often free space is read, idle or not, and
	// new files' directory entries are synced. Default 2 s.
	DiskCheckEvery time.Duration
	Logger         *slog.Logger
	Now            func() time.Time
	// Observer, if set, is told how long each sync and each update took.
	Observer gateway.StoreObserver

	scratch bool // a scratch copy (Check): no compactions, which delete tables
	ownSync bool // the store syncs Badger's log itself (see walSync)
	// badgerSync leaves the sync to Badger where the store would sync
	// its log itself: the way of other systems and of value logs in use,
	// for tests on Linux.
	badgerSync bool
	// idleHook, for tests, is told after each check of an idle writer
	// whether Badger's compactors are paused (see compactions).
	idleHook func(paused bool)
}

func (o Options) withDefaults() Options {
	if o.MemtableSize == 0 {
		o.MemtableSize = int64(gateway.DefaultMemtableSize)
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = int64(gateway.DefaultBlockCacheSize)
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = uint64(gateway.DefaultReserve)
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 512
	}
	if o.GCInterval == 0 {
		o.GCInterval = 10 * time.Minute
	}
	if o.DiskCheckEvery == 0 {
		o.DiskCheckEvery = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// badgerOptions are Badger's settings for the store: every write synced
// (by Badger, or by the store itself with o.ownSync, see walSync), one
// version per key, checksums verified on every block read (and every
// table read whole at start, see inspect), small memtables for a small
// machine, and every value kept in the tree, none in the value log.
func badgerOptions(dir string, o Options, readOnly bool) bdg.Options {
	if o.scratch {
		return badgerOptions(dir, Options{MemtableSize: o.MemtableSize, BlockCacheSize: o.BlockCacheSize, Logger: o.Logger}, readOnly).
			WithNumCompactors(0).WithNumLevelZeroTables(1 << 20).WithNumLevelZeroTablesStall(1<<20 + 1)
	}
	bo := bdg.DefaultOptions(dir)
	bo.TableSizeMultiplier = 1 // compactions build whole tables in memory: keep every one small
	bo.BaseTableSize = 1 << 20
	return bo.
		WithSyncWrites(!o.ownSync).
		WithNumVersionsToKeep(1).
		WithMemTableSize(o.MemtableSize).
		WithNumMemtables(2).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(8).
		WithBlockCacheSize(o.BlockCacheSize).
		WithIndexCacheSize(o.IndexCacheSize).
		WithValueThreshold(valueThreshold(o.MemtableSize)).
		WithValueLogFileSize(16 << 20).
		WithNumCompactors(2).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true).
		WithDetectConflicts(false).
		WithReadOnly(readOnly).
		WithLogger(badgerLogger{o.Logger}).
		WithMetricsEnabled(false)
}

// valueThreshold is the size from which Badger would put a value in the
// value log instead of the tree: as large as Badger allows (1 MiB, and
// no more than a transaction's limit). Updates with a value this large
// are refused (ETOOLARGE), so the value log stays empty.
func valueThreshold(memtableSize int64) int64 {
	return min(1<<20, memtableSize*15/100)
}

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
	refused  []refusal // updates that failed, to answer after the syncs before them; owned by the writer
	health   atomic.Pointer[error]
	onHealth atomic.Pointer[func()]
	onQuiet  atomic.Pointer[func()]
	healthMu stdsync.Mutex
	// failedAt is the last commit (Gen) before the latest storage error:
	// only the witness of a later commit says storage works again.
	failedAt uint64
	disk     atomic.Pointer[DiskState]
	recovery atomic.Pointer[Recovery]

	keys, peak atomic.Uint64 // keys stored now, and the most since space was last reclaimed

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
	}
	d.compact.db = bdb
	maxBatch := opts.MemtableSize * 15 / 100
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
	if err := checkTables(dir, in, bdb); err != nil {
		return fail(err)
	}
	if err := d.loadCounters(); err != nil {
		return fail(err)
	}
	if err := d.newIncarnation(); err != nil {
		return fail(err)
	}
	if err := d.countStatuses(); err != nil {
		return fail(err)
	}
	if err := d.verify(w, aside, in.mems); err != nil {
		return fail(err)
	}
	if err := d.syncLog(); err != nil {
		return fail(err) // what Open wrote (the incarnation, counters, the commit state)
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
	d.wg.Add(3)
	go d.writer()
	go d.syncer()
	go d.gc()
	return d, nil
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
		return gateway.Errorf(gateway.EUNAVAILABLE, "store is closed")
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
		return gateway.Errorf(gateway.EUNAVAILABLE, "store is closed")
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

// syncLog makes Badger's log durable when the store syncs it itself (see
// walSync); Badger syncs it otherwise.
func (d *DB) syncLog() error {
	if d.wal == nil {
		return nil
	}
	return d.wal.sync()
}

// observedSyncLog is syncLog for the commits of jobs, timed for the
// observer when the store syncs the log itself.
func (d *DB) observedSyncLog(jobs []syncJob) error {
	if d.wal == nil || d.opts.Observer == nil {
		return d.syncLog()
	}
	t0 := time.Now()
	err := d.syncLog()
	if err == nil {
		n := 0
		for _, j := range jobs {
			n += len(j.reqs)
		}
		d.opts.Observer.Synced(time.Since(t0), n)
	}
	return err
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

// Health implements gateway.Store.
func (d *DB) Health() error {
	if p := d.health.Load(); p != nil {
		return *p
	}
	return nil
}

// OnHealthChange sets a function called after Health changes (trouble
// found, its reason changed, trouble over): the LAN page's live updates
// follow the disk with it.
func (d *DB) OnHealthChange(fn func()) { d.onHealth.Store(&fn) }

// OnQuietSync sets a function called after a sync that no update waited
// for (see syncer) let readers see commits of updates that needed no
// sync of their own: their callers were answered before readers could
// see them, so whatever follows the store learns of them here.
func (d *DB) OnQuietSync(fn func()) { d.onQuiet.Store(&fn) }

// fail records a storage error seen after commit gen.
func (d *DB) fail(gen uint64, err error) {
	d.healthMu.Lock()
	defer d.healthMu.Unlock()
	d.failedAt = gen
	d.setHealth(err)
}

// witnessed clears a storage error seen before commit gen, now witnessed.
func (d *DB) witnessed(gen uint64) {
	d.healthMu.Lock()
	defer d.healthMu.Unlock()
	if gen > d.failedAt && d.Health() != nil {
		d.setHealth(nil)
	}
}

func (d *DB) setHealth(err error) {
	if err == nil {
		if d.health.Swap(nil) != nil {
			d.log.Info("storage writes succeed again")
			d.healthChanged()
		}
		return
	}
	if old := d.health.Swap(&err); old == nil || (*old).Error() != err.Error() {
		d.log.Error("storage trouble", "err", err)
		d.healthChanged()
	}
}

func (d *DB) healthChanged() {
	if fn := d.onHealth.Load(); fn != nil && *fn != nil {
		(*fn)()
	}
}

// DiskState is the data disk's free space as last read.
type DiskState struct {
	FreeBytes    uint64    `json:"free_bytes"`
	ReserveBytes uint64    `json:"reserve_bytes"`
	Low          bool      `json:"low"` // below the reserve: new orders are refused
	CheckedAt    time.Time `json:"checked_at"`
}

// Disk returns the data disk's free space as last read (every
// DiskCheckEvery), or nil when it cannot be read.
func (d *DB) Disk() *DiskState { return d.disk.Load() }

// readDisk reads the free space and reports a disk low on it.
func (d *DB) readDisk() *DiskState {
	free, err := freeBytes(d.dir)
	if err != nil {
		d.disk.Store(nil)
		return nil
	}
	s := &DiskState{FreeBytes: free, ReserveBytes: d.opts.MinFreeBytes, Low: free < d.opts.MinFreeBytes, CheckedAt: d.opts.Now()}
	d.disk.Store(s)
	return s
}

func (d *DB) diskLow(s *DiskState) error {
	return gateway.Errorf(gateway.EUNAVAILABLE, "disk low: %d MiB free on the data disk (%s), below the %d MiB the gateway keeps in reserve; new orders are refused until space is freed",
		s.FreeBytes>>20, d.dir, s.ReserveBytes>>20)
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
	if n := uint64(in.memBytes + 2*o.MemtableSize + 16<<20); n > need && o.MinFreeBytes > 1 {
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

// writer applies queued updates in batches, one Badger transaction per
// batch. It commits a batch and hands it to the syncer, which syncs it
// and answers its updates, and meanwhile runs and commits the next
// batches, up to syncAhead of them waiting (see syncer). Every
// DiskCheckEvery, busy or idle, it reads the free space, syncs the
// directory if files came or went, pages out the tables once a memtable's
// worth was written, and gives memory back after a burst.
func (d *DB) writer() {
	defer d.wg.Done()
	tick := time.NewTicker(d.opts.DiskCheckEvery)
	defer tick.Stop()
	var sinceTrim int64    // bytes committed since memory was last given back
	var sincePageOut int64 // bytes committed since tables were last paged out
	trims := 0             // times left to give memory back after a burst
	lastWrite := time.Now()
	for {
		var first *request
		select {
		case first = <-d.reqs:
		case fn := <-d.excl:
			fn()
			continue
		case <-tick.C:
			d.monitor()
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
		sinceTrim += n
		sincePageOut += n
		lastWrite = time.Now()
	}
}

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
		d.fail(d.cmt.Gen, gateway.Errorf(gateway.EUNAVAILABLE, "storage write failed: %v", err))
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
		if s > d.txnBytes || c > d.txnCount || int64(t.largest()) >= valueThreshold(d.opts.MemtableSize) {
			d.refuse(r, gateway.Errorf(gateway.ETOOLARGE, "update too large to store in one transaction (%d bytes)", s))
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
		err = gateway.Errorf(gateway.EUNAVAILABLE, "storage write failed: %v", err)
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

// syncAhead is how many commits the writer may have waiting for the
// syncer beyond the one being synced; one sync covers them all.
const syncAhead = 8

// syncJob is a commit, in Badger's memtable and log, to sync and answer,
// and updates that failed since the last commit. Those ran against
// commits not synced yet, so their answers wait for those syncs too.
type syncJob struct {
	commit  bool // false: no commit, only refusals
	cmt     commitState
	ctr     counters
	at      time.Time
	reqs    []*request
	refused []refusal
	view    *bdg.Txn // the store as of this commit, for readers once it is synced
}

// refusal is an update that failed, with its error.
type refusal struct {
	r   *request
	err error
}

// idleSync is the longest a commit waits for a sync when no update asks
// for one: a commit of updates that need no sync of their own
// (gateway.WithoutSync), and the witness of the newest synced commit.
const idleSync = time.Second

// syncer syncs the commits, with the new files' directory entries, lets
// readers see them (the newest's view) and answers their updates. The
// writer goes on committing meanwhile: one sync covers every commit
// waiting when it starts (group commit), and commits are synced and
// answered in the order they were made. A sync that one update alone
// waits for holds off up to gatherWait for a second one.
//
// A commit whose updates need no sync of their own (their answers went
// out when they were committed) waits for the next commit that does, and
// rides on its sync; when none comes within idleSync it is synced on its
// own.
//
// The witness rides on the syncs too (see flush): a sync writes it, in
// the same flush as Badger's log, with the newest commit synced before,
// once that commit has waited idleSync/2 for it; a quiet store writes it
// after its last sync, at most idleSync after that commit was answered.
// So a busy store writes its witness about twice a second, never once a
// commit, and a store printing a ticket now and then no more often than
// it syncs its log. The witness is never ahead of the store: a power cut
// leaves the store ahead of its witness by at most the commits of the
// last second, which is sound; only their loss could go unseen. Close
// records the last commit before it returns.
func (d *DB) syncer() {
	defer d.wg.Done()
	s := &syncState{d: d, durable: syncJob{commit: true, cmt: d.cmt, ctr: d.ctr}, witnessed: d.cmt.Gen}
	timer := time.NewTimer(idleSync)
	timer.Stop()
	defer timer.Stop()
	var pending []syncJob
	for {
		select {
		case <-timer.C:
			pending = s.flush(pending, true)
			s.arm(timer, pending)
			continue
		case job, ok := <-d.syncQ:
			if !ok {
				s.flush(pending, true)
				return
			}
			pending = append(pending, job)
		}
		closed := false
	more:
		for {
			select {
			case j, ok := <-d.syncQ:
				if !ok {
					closed = true
					break more
				}
				pending = append(pending, j)
			default:
				break more
			}
		}
		if closed {
			s.flush(pending, true)
			return
		}
		if waiters(pending) > 0 {
			if waiters(pending) == 1 {
				g := time.NewTimer(gatherWait)
			gather:
				for {
					select {
					case j, ok := <-d.syncQ:
						if !ok {
							closed = true
							break gather
						}
						pending = append(pending, j)
						if waiters(pending) > 1 {
							break gather
						}
					case <-g.C:
						break gather
					}
				}
				g.Stop()
				if closed {
					s.flush(pending, true)
					return
				}
			}
			pending = s.flush(pending, false)
		}
		s.arm(timer, pending)
	}
}

// gatherWait is how long a sync that one update alone waits for holds
// off for a second one: a store's stations print side by side, and the
// prepared receipts and confirmations of an order's tickets come within
// a millisecond of each other as often as not. Where more wait, the sync
// starts at once.
const gatherWait = time.Millisecond

// waiters counts the updates that wait for the sync of jobs.
func waiters(jobs []syncJob) int {
	n := 0
	for _, j := range jobs {
		n += len(j.reqs) + len(j.refused)
	}
	return n
}

// syncState is the syncer's own.
type syncState struct {
	d    *DB
	last error // of the last sync
	// durable is the newest commit synced, and witnessed the newest in
	// the witness.
	durable   syncJob
	witnessed uint64
	// lazySince is when the oldest commit waiting for a sync came, and
	// unwitSince when the oldest synced commit not in the witness was
	// synced; zero when there is none.
	lazySince, unwitSince time.Time
}

// arm sets the timer for the next sync that no update asks for: idleSync
// after the oldest commit waiting for a sync or for the witness.
func (s *syncState) arm(timer *time.Timer, pending []syncJob) {
	if len(pending) > 0 && s.lazySince.IsZero() {
		s.lazySince = time.Now()
	}
	since := s.lazySince
	if !s.unwitSince.IsZero() && (since.IsZero() || s.unwitSince.Before(since)) {
		since = s.unwitSince
	}
	if since.IsZero() {
		timer.Stop()
		return
	}
	timer.Reset(time.Until(since.Add(idleSync)))
}

// flush syncs the commits of jobs and answers their updates. A flush that
// someone waits for (idle false) writes the witness of the commit synced
// before, while the log syncs, once that commit has waited idleSync/2; an
// idle one, after the log, writes the witness of the newest commit.
func (s *syncState) flush(jobs []syncJob, idle bool) []syncJob {
	d := s.d
	defer clear(jobs)
	s.lazySince = time.Time{}
	newest := -1
	for i, j := range jobs {
		if j.commit {
			newest = i
		}
	}
	if newest < 0 {
		// Refusals only: what they read was synced already.
		for _, j := range jobs {
			for _, f := range j.refused {
				f.r.done <- cmp.Or(s.last, f.err)
			}
		}
		if idle {
			s.witness()
		}
		return jobs[:0]
	}
	var wit *syncJob
	if !idle && s.durable.cmt.Gen > s.witnessed && time.Since(s.unwitSince) >= idleSync/2 {
		w := s.durable
		wit = &w
	}
	var err error
	if d.syncHook != nil {
		err = d.syncHook()
	}
	if err == nil {
		var witErr chan error
		if wit != nil {
			// Both files in one flush: the witness holds a commit already
			// on disk, so it is never ahead, whichever lands first.
			witErr = make(chan error, 1)
			go func() { witErr <- d.wit.write(wit.cmt, wit.ctr, wit.at) }()
		}
		err = d.observedSyncLog(jobs)
		if witErr != nil {
			s.witnessed1(*wit, <-witErr)
		}
	}
	if err == nil {
		d.syncDirIfChanged()
	}
	for i, j := range jobs {
		if i == newest {
			d.publish(j.view)
		} else if j.commit {
			j.view.Discard() // never read: a newer one is here
		}
	}
	if idle && err == nil {
		if fn := d.onQuiet.Load(); fn != nil && *fn != nil {
			(*fn)()
		}
	}
	top := jobs[newest]
	if err != nil {
		err = gateway.Errorf(gateway.EUNAVAILABLE, "storage write failed: %v", err)
		d.fail(top.cmt.Gen, err)
	}
	s.last = err
	for _, j := range jobs {
		for _, f := range j.refused {
			// What it read may not be on disk: say so rather than answer from it.
			f.r.done <- cmp.Or(err, f.err)
		}
		for _, r := range j.reqs {
			r.done <- err
		}
	}
	if err == nil {
		s.durable = syncJob{commit: true, cmt: top.cmt, ctr: top.ctr, at: top.at}
		if s.unwitSince.IsZero() {
			s.unwitSince = time.Now()
		}
		if idle {
			s.witness()
		}
	}
	return jobs[:0]
}

// witness records the newest synced commit in the witness, if it is not
// there yet.
func (s *syncState) witness() {
	if s.durable.cmt.Gen <= s.witnessed {
		return
	}
	var t0 time.Time
	if s.d.opts.Observer != nil {
		t0 = time.Now()
	}
	err := s.d.wit.write(s.durable.cmt, s.durable.ctr, s.durable.at)
	if err == nil && s.d.opts.Observer != nil {
		s.d.opts.Observer.Synced(time.Since(t0), 0) // a flush of its own, counted with the syncs
	}
	s.witnessed1(s.durable, err)
}

// witnessed1 takes the outcome of writing job's commit to the witness.
func (s *syncState) witnessed1(job syncJob, err error) {
	if err != nil {
		// Committed, but not witnessed: take no more until it works.
		s.d.fail(job.cmt.Gen, gateway.Errorf(gateway.EUNAVAILABLE, "storage write failed: %v", err))
		return
	}
	s.witnessed = job.cmt.Gen
	s.d.witnessed(job.cmt.Gen)
	s.unwitSince = time.Time{}
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

// badgerLogger sends Badger's log to slog, keeping its chatter at debug.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) { b.l.Error("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Warningf(f string, a ...any) {
	msg := trim(fmt.Sprintf(f, a...))
	for _, chatter := range []string{
		"Unable to fill tables",          // a compaction with nothing to do (Flatten tries every level)
		"Block cache might be too small", // the cache is small on purpose ([storage])
		"Cache life expectancy",
	} {
		if strings.Contains(msg, chatter) {
			b.l.Debug("badger: " + msg)
			return
		}
	}
	b.l.Warn("badger: " + msg)
}
func (b badgerLogger) Infof(f string, a ...any)  { b.l.Debug("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Debugf(f string, a ...any) { b.l.Debug("badger: " + trim(fmt.Sprintf(f, a...))) }

func trim(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
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

// exclusive runs fn in the writer goroutine, between batches.
func (d *DB) exclusive(fn func() error) error {
	done := make(chan error, 1)
	select {
	case d.excl <- func() { done <- fn() }:
	case <-d.closing:
		return gateway.Errorf(gateway.EUNAVAILABLE, "store is closed")
	}
	return <-done
}
