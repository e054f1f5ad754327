package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
)

// storeOptions are the store's settings from the config's [storage].
func storeOptions(cfg *gateway.Config, log *slog.Logger) badger.Options {
	return badger.Options{
		Logger:         log,
		MinFreeBytes:   uint64(cfg.Storage.Reserve),
		MemtableSize:   int64(cfg.Storage.MemtableSize),
		BlockCacheSize: int64(cfg.Storage.BlockCacheSize),
		IndexCacheSize: int64(cfg.Storage.IndexCacheSize),
	}
}

// tuneCollector sets Go's garbage collector for a small box: a heap that
// grows by half its live size between collections instead of doubling
// (gateway.GCPercent), unless GOGC sets another, and the soft limit the
// storage settings call for (gateway.MemoryLimit), unless GOMEMLIMIT sets
// one.
func tuneCollector(s gateway.StorageConfig) {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(gateway.GCPercent)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(int64(gateway.MemoryLimit(s)))
	}
}

// ProcsPerCPU is how many Ps the gateway runs with for each CPU Go
// would give it, unless GOMAXPROCS sets the number. The store builds
// tables in the background (memtable flushes, compactions): each is a
// burst of CPU that holds a P for milliseconds. With Ps to spare, the
// goroutine of an order whose sync just finished runs at once, on a
// thread of its own that the kernel schedules, instead of waiting for a
// P behind the burst.
const ProcsPerCPU = 2

var tuneSchedulerOnce sync.Once

// tuneScheduler sets GOMAXPROCS to ProcsPerCPU times the default, once a
// process, unless the environment variable GOMAXPROCS is set.
func tuneScheduler() {
	tuneSchedulerOnce.Do(func() {
		if _, ok := os.LookupEnv("GOMAXPROCS"); !ok {
			runtime.GOMAXPROCS(ProcsPerCPU * runtime.GOMAXPROCS(0))
		}
	})
}

// storeError explains why the store did not open, with the way out.
func (m *Main) storeError(err error) error {
	var de *badger.DamageError
	var locked *badger.LockedError
	var low *badger.DiskLowError
	switch {
	case errors.As(err, &de):
		return fmt.Errorf("%w\nThe gateway does not start on a damaged data dir, so that nothing prints twice or goes missing unseen. Either\n"+
			"  restore the latest backup:  storeprint-gateway restore --config %s --in BACKUP\n"+
			"  or keep what is readable:   storeprint-gateway check --config %s --repair\n"+
			"then start the gateway again", err, m.ConfigPath, m.ConfigPath)
	case errors.As(err, &locked), errors.As(err, &low):
		return err
	}
	return fmt.Errorf("data_dir %s: %w", m.Config.DataDir, err)
}

// holdRecovered holds every task that was waiting when the store opened in
// the recovered state (writes lost, a restore, a repair) before anything
// prints or the POS is served.
func (m *Main) holdRecovered(ctx context.Context, log *slog.Logger) error {
	rec := m.Store.Recovery()
	if rec == nil || rec.Held {
		return nil
	}
	cause := "data dir recovered: " + rec.Cause
	n, err := m.Gateway.HoldRecovered(ctx, nil, cause)
	if err != nil {
		return fmt.Errorf("hold recovered tasks: %w", err)
	}
	printing, err := m.Gateway.Tasks(ctx, storeprint.StatusPrinting, 0)
	if err != nil {
		return err
	}
	if len(printing) > 0 {
		nos := make([]string, len(printing))
		for i, t := range printing {
			nos[i] = t.TaskNo
		}
		k, err := m.Gateway.HoldRecovered(ctx, nos, cause)
		if err != nil {
			return fmt.Errorf("hold recovered tasks: %w", err)
		}
		n += k
	}
	if rec.LostEventsTo > 0 {
		// The link counts the lost outbox events as compacted: a cloud
		// that never stored them gets a snapshot.
		if err := m.Gateway.OutboxLost(ctx, rec.LostEventsTo); err != nil {
			return err
		}
	}
	log.Warn("data dir recovered: every waiting task is held for a person", "held", n, "missing_tasks", rec.MissingTasks, "cause", rec.Cause)
	return m.Store.MarkHeld(n)
}
