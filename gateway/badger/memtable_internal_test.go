package badger

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger/badgertest"
)

// tables counts the store's tables, on every level.
func tables(d *DB) int {
	n := 0
	for _, l := range d.db.Levels() {
		n += l.NumTables
	}
	return n
}

// A store writes its memtables out at its own size, below the one Badger
// is opened with for the largest transaction: new, and after a crash
// that left a memtable in its log for Badger to replay at start. The
// largest transaction still fits.
func TestWriteOutAt(t *testing.T) {
	// Not parallel: TestCompactions_Idle counts every compactor in the
	// process, and opening a store stops and starts them.
	const size = 2 << 20
	opts := Options{MinFreeBytes: 1, MemtableSize: size}

	dir := t.TempDir()
	d, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// About 3 MiB: a table at 2 MiB, none at Badger's 8 MiB.
	writeTasks(t, d, "a", 3000)
	waitFor(t, "a memtable written out at 2 MiB", func() bool { return tables(d) >= 1 })

	// Under 2 MiB more, left in the log: a copy of the directory now is
	// what a crash leaves.
	before := tables(d)
	writeTasks(t, d, "b", 1000)
	if got := tables(d); got != before {
		t.Fatalf("got %d tables after under a memtable's worth, want %d", got, before)
	}
	crashed := t.TempDir()
	badgertest.CopyTree(t, dir, crashed)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d, err = Open(crashed, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	replayed := tables(d)
	if replayed <= before {
		t.Fatalf("got %d tables after the replay, want more than %d", replayed, before)
	}
	writeTasks(t, d, "c", 5000)
	waitFor(t, "two memtables written out at 2 MiB after a replay", func() bool { return tables(d) >= replayed+2 })

	// The largest order's transaction: 900 KiB, 45 % of the memtable.
	err = d.Update(context.Background(), func(tx gateway.Tx) error {
		return tx.PutTask(&gateway.Task{TaskNo: "big", OrderID: "big", Station: "hot", PrinterID: "p1",
			Status: storeprint.StatusQueued, Seq: tx.NextTaskSeq(), CreatedAt: time.Now(),
			Note: strings.Repeat("x", 900<<10)})
	})
	if err != nil {
		t.Fatalf("a 900 KiB task with a 2 MiB memtable: %v", err)
	}
}
