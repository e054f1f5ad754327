package badger

import (
	"log/slog"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/storeprint/storeprint/gateway"
)

// Options tune the store. The zero value is what the gateway runs with.
type Options struct {
	// MinFreeBytes is the reserve: below this much free space on the data
	// disk, writes are refused with EUNAVAILABLE before Badger is asked to
	// grow its files, Health says "disk low", and Open refuses to start.
	// Default 96 MiB; never less than 4 memtables and 16 MiB.
	MinFreeBytes uint64
	// Memory (see docs/config.md, [storage]). Defaults 4 MiB, 2 MiB, 0.
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
	// Compactions build whole tables in memory, several at once: keep
	// every one small. A builder holds about twice its table uncompressed
	// and grows its buffer by doubling from twice the table size: 14 MiB
	// for a 1 MiB table, 3.5 MiB for one of 256 KiB.
	bo.TableSizeMultiplier = 1
	bo.BaseTableSize = 256 << 10
	// Every memtable written out overlaps the whole of the first level
	// below L0 (a batch writes keys of every kind), so each L0 compaction
	// reads and rewrites all of it: keep that level small, and let the
	// levels below take a table at a time.
	bo.BaseLevelSize = 2 << 20
	return bo.
		WithSyncWrites(!o.ownSync).
		WithNumVersionsToKeep(1).
		WithMemTableSize(o.txnMemtable()).
		// Memtables full and waiting to be written out, besides the one
		// being written out: each holds as much memory as the one taking
		// writes.
		WithNumMemtables(1).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(8).
		WithBlockCacheSize(o.BlockCacheSize).
		WithIndexCacheSize(o.IndexCacheSize).
		WithValueThreshold(valueThreshold(o.txnMemtable())).
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
