package badger

import (
	stdsync "sync"
	"sync/atomic"
	_ "unsafe" // go:linkname, below

	bdg "github.com/dgraph-io/badger/v4"
)

// Badger's compactors each wake every 50 ms to look for work, written or
// not: two of them cost an idle gateway about 1 % of a small box's core
// (0.1 % without them), on a machine that runs for years. Badger has no
// option for it, so the store stops them once it is idle and has nothing
// to compact, and starts them again before its next write. Under load
// Badger compacts exactly as it would anyway.
//
// Badger pauses its compactors the same way around its own Flatten and
// DropPrefix, with these two functions, which it does not export. They
// are reached by name: a Badger release that renames them fails the
// build, and TestCompactions_Idle, which counts Badger's compactor
// goroutines, fails on one that changes what they do.
//
//go:linkname stopCompactions github.com/dgraph-io/badger/v4.(*DB).stopCompactions
func stopCompactions(db *bdg.DB)

//go:linkname startCompactions github.com/dgraph-io/badger/v4.(*DB).startCompactions
func startCompactions(db *bdg.DB)

// compactions pauses and resumes Badger's compactors (see above).
//
//   - Only the writer pauses them (idle), between batches, once nothing
//     was written for a while and no level needs compacting. A memtable
//     written out late (after its last write) may still make a level
//     need it: idle, called again, then resumes them. Stopping waits for
//     a compaction still running (Badger does not count what it is
//     compacting in a level's score), which can only be one begun just
//     before the store fell idle: an update that comes meanwhile waits
//     for it.
//   - Everything that writes resumes them first (resume): the writer's
//     commits and updates, which run in the writer too. (Value-log GC
//     rewrites what it moves, outside the writer; the next idle check
//     resumes them once that needs compacting.)
//   - Whatever else would stop and start them holds them running
//     (hold): Badger's Flatten and DropPrefix end by starting them, and
//     would otherwise start a second set over a paused one.
//
// mu is held by idle and resume while they stop or start, and by hold
// throughout; paused changes only under mu. The writer never waits for
// mu held by hold: hold resumes first, and while it holds mu nothing
// pauses them, so the writer's resume finds them running and returns.
type compactions struct {
	db     *bdg.DB
	mu     stdsync.Mutex
	paused atomic.Bool
}

// idle is told by the writer that nothing was written for a while. It
// reports whether the compactors are paused after it.
func (c *compactions) idle() bool {
	if !c.mu.TryLock() {
		return false // held (see hold): running, and to stay so
	}
	defer c.mu.Unlock()
	work := c.work()
	switch p := c.paused.Load(); {
	case !p && !work:
		stopCompactions(c.db)
		c.paused.Store(true)
	case p && work:
		c.start()
	}
	return c.paused.Load()
}

// work reports whether a compactor would compact: Badger scores a level
// at 1 or more once it needs to be (L0 by its number of tables, the
// others by size), and compacts nothing below that.
func (c *compactions) work() bool {
	for _, l := range c.db.Levels() {
		if l.Score >= 1 {
			return true
		}
	}
	return false
}

// resume starts the compactors if they are paused, before a write.
func (c *compactions) resume() {
	if !c.paused.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start()
}

// start starts the compactors if they are paused; mu is held.
func (c *compactions) start() {
	if c.paused.Load() {
		startCompactions(c.db)
		c.paused.Store(false)
	}
}

// hold keeps the compactors running until the function it returns is
// called.
func (c *compactions) hold() (release func()) {
	c.mu.Lock()
	c.start()
	return c.mu.Unlock
}
