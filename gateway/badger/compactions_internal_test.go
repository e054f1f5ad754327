package badger

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// compactors counts Badger's compactor goroutines in this process.
func compactors() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "levelsController).runCompactor(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitFor waits, yielding, until ok holds; it fails after a minute.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after a minute", what)
		}
		runtime.Gosched()
	}
}

// writeTasks stores n new tasks, 40 an update, each with a long item
// line: enough, for n in thousands, to fill several 1 MiB memtables.
func writeTasks(t *testing.T, d *DB, prefix string, n int) {
	t.Helper()
	line := strings.Repeat("kung pao chicken, no peanuts; ", 16)
	for i := 0; i < n; i += 40 {
		err := d.Update(context.Background(), func(tx gateway.Tx) error {
			for j := i; j < i+40 && j < n; j++ {
				no := fmt.Sprintf("%s-%06d", prefix, j)
				task := &gateway.Task{TaskNo: no, OrderID: no, Station: "hot", PrinterID: "p1",
					Status: storeprint.StatusQueued, Seq: tx.NextTaskSeq(), CreatedAt: time.Now(),
					Items: []storeprint.Item{{Name: line, Qty: 1}}}
				if err := tx.PutTask(task); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// belowL0 counts the tables below level 0: only a compaction puts one
// there.
func belowL0(d *DB) int {
	n := 0
	for _, l := range d.db.Levels()[1:] {
		n += l.NumTables
	}
	return n
}

// Badger's compactors are stopped while the store is idle with nothing to
// compact, and run again for whatever is written next; nothing that
// stops and starts them by itself leaves a second set running.
func TestCompactions_Idle(t *testing.T) {
	// Not parallel: it counts every compactor in the process.
	t.Run("OK", func(t *testing.T) {
		paused := make(chan bool, 1)
		d, err := Open(t.TempDir(), Options{MinFreeBytes: 1, MemtableSize: 1 << 20, DiskCheckEvery: 5 * time.Millisecond,
			idleHook: func(p bool) {
				select {
				case paused <- p:
				default:
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		for !<-paused {
		}
		waitFor(t, "stopped", func() bool { return compactors() == 0 })

		// Five memtables' worth: level 0 fills past the four tables at
		// which Badger compacts it, and only running compactors do.
		writeTasks(t, d, "t", 5000)
		waitFor(t, "compacted", func() bool { return belowL0(d) > 0 })
		// Once done (a memtable written out late may still add work), the
		// idle writer stops them again.
		waitFor(t, "paused with nothing to compact", func() bool { return d.compact.paused.Load() && !d.compact.work() })
		waitFor(t, "stopped again", func() bool { return compactors() == 0 })
	})
	t.Run("Resume", func(t *testing.T) {
		d, err := Open(t.TempDir(), Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if !d.compact.idle() {
			t.Fatal("got compactors running in a new, idle store, want them paused")
		}
		waitFor(t, "stopped", func() bool { return compactors() == 0 })
		writeTasks(t, d, "r", 1)
		waitFor(t, "running after a write", func() bool { return compactors() == 2 })
	})
	t.Run("ReclaimSpace", func(t *testing.T) {
		d, err := Open(t.TempDir(), Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		writeTasks(t, d, "s", 200)
		if !d.compact.idle() {
			t.Fatal("got compactors running, want them paused")
		}
		release := d.compact.hold()
		if d.compact.idle() {
			t.Error("got compactors paused while held, want them running")
		}
		release()
		if !d.compact.idle() {
			t.Fatal("got compactors running, want them paused")
		}
		// Its DropPrefix and Flatten each stop and start the compactors.
		d.peak.Store(2 * d.keys.Load())
		if err := d.ReclaimSpace(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "running after ReclaimSpace", func() bool { return compactors() == 2 })
		// Paused again, none is left running: a set started over paused
		// ones would be.
		if !d.compact.idle() {
			t.Fatal("got compactors running, want them paused")
		}
		waitFor(t, "stopped after ReclaimSpace", func() bool { return compactors() == 0 })
	})
}
