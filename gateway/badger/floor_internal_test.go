package badger

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// floorID is the order id of the captured update: its width is that of
// every id the floor writes, so each order's keys and values keep their size.
const floorID = "b000000000"

// orderItems are the items of putOrder's order, one for each station.
var orderItems = []storeprint.Item{{Name: "宫保鸡丁", Qty: 1, Station: "hot", Note: "少辣"}, {Name: "凉拌黄瓜", Qty: 2, Station: "cold"}}

// putOrder makes the update an accepted two-station order makes: the
// lookups that find it new, its tasks and its record (BenchmarkDB_Order).
func putOrder(tx gateway.Tx, id string, now time.Time) error {
	if _, err := tx.Order(id); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
		return fmt.Errorf("order %s: %v", id, err)
	}
	rec := &gateway.OrderRecord{OrderID: id, Digest: "9f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271", Source: storeprint.SourcePOS, CreatedAt: now}
	for j, st := range []string{"hot", "cold"} {
		no := storeprint.TaskNo(id, st)
		if _, err := tx.Task(no); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
			return fmt.Errorf("task %s: %v", no, err)
		}
		t := &gateway.Task{TaskNo: no, OrderID: id, Station: st, PrinterID: st + "-1", FirstPrinter: st + "-1",
			Status: storeprint.StatusQueued, Source: storeprint.SourcePOS, Table: "A1", Items: orderItems[j : j+1],
			Seq: tx.NextTaskSeq(), CreatedAt: now, NextAt: now}
		if err := tx.PutTask(t); err != nil {
			return err
		}
		rec.TaskNos, rec.Printers = append(rec.TaskNos, no), append(rec.Printers, t.PrinterID)
	}
	return tx.PutOrder(rec)
}

// PutOrder is putOrder for the external tests (BenchmarkDB_Order).
var PutOrder = putOrder

// entry is a key and its value.
type entry struct{ k, v []byte }

// orderEntries is what the store writes to Badger for one order: the
// keys and values its update adds or changes, read back from a real store.
func orderEntries(t testing.TB) []entry {
	t.Helper()
	d, err := Open(t.TempDir(), Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before := map[string][]byte{}
	all := func(fn func(k, v []byte)) {
		err := d.db.View(func(txn *bdg.Txn) error {
			it := txn.NewIterator(bdg.DefaultIteratorOptions)
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				v, err := it.Item().ValueCopy(nil)
				if err != nil {
					return err
				}
				fn(it.Item().KeyCopy(nil), v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	all(func(k, v []byte) { before[string(k)] = v })
	if err := d.Update(context.Background(), func(tx gateway.Tx) error { return putOrder(tx, floorID, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	var es []entry
	all(func(k, v []byte) {
		if old, ok := before[string(k)]; !ok || !bytes.Equal(old, v) {
			es = append(es, entry{k, v})
		}
	})
	return es
}

// TestOrderEntries holds the floor to what it stands for: one order's
// update is its tasks, its record and their index and outbox entries.
func TestOrderEntries(t *testing.T) {
	es := orderEntries(t)
	var n, withID int
	for _, e := range es {
		n += len(e.k) + len(e.v)
		if bytes.Contains(e.k, []byte(floorID)) || bytes.Contains(e.v, []byte(floorID)) {
			withID++
		}
	}
	if len(es) < 8 || n < 800 { // tasks and events are compact records (see compactTaskVersion)
		t.Fatalf("one order wrote %d entries, %d bytes: want the tasks, the record, their indexes and events", len(es), n)
	}
	if withID < len(es)/2 {
		t.Fatalf("%d of %d entries name the order: the floor could not make each order's entries its own", withID, len(es))
	}
	t.Logf("one order: %d entries, %d bytes", len(es), n)
}

// floorCommit is how many orders the floor commits in one transaction:
// about what one of the store's syncs holds under the side-by-side
// accept load (its "updates each").
const floorCommit = 6

// BenchmarkBadgerFloor is the least Badger itself costs an order, with
// nothing of the store's own around it: no lookups, no encoding, no
// digest, and no sync at all. One writer commits floorCommit orders a
// transaction on the store's Badger options. Set beside BenchmarkDB_Order (the store, synced)
// and the durable ceiling's CPU an order in BenchmarkAcceptSideBySide, it
// says how much of the store's cost is Badger's, and what a format would
// save:
//
//   - entries: exactly what the store writes for one two-station order
//     (orderEntries: its tasks, events, record and index entries, with the
//     id and sequence numbers made each order's own, and the store's
//     counters once a commit);
//   - one-value: the same bytes as one entry an order (the order's
//     entries, not the counters), and then a half and a quarter of them:
//     what Badger costs per entry, and per byte.
func BenchmarkBadgerFloor(b *testing.B) {
	var own, meta []entry
	for _, e := range orderEntries(b) {
		if e.k[0] == spaceMeta {
			meta = append(meta, e)
		} else {
			own = append(own, e)
		}
	}
	var v []byte
	for _, e := range own {
		v = append(append(v, e.k...), e.v...)
	}
	b.Run("entries", func(b *testing.B) {
		badgerFloor(b, meta, func(id []byte, seq uint64) []entry { return ownEntries(own, id, seq) })
	})
	for _, size := range []int{len(v), len(v) / 2, len(v) / 4} {
		b.Run(fmt.Sprintf("one-value-%dB", size), func(b *testing.B) {
			v := v[:size-len(key(spaceOrder, floorID))]
			badgerFloor(b, meta, func(id []byte, _ uint64) []entry {
				return []entry{{key(spaceOrder, string(id)), bytes.ReplaceAll(v, []byte(floorID), id)}}
			})
		})
	}
}

// ownEntries is es (an order's entries, without the store's counters)
// made order id's own: the id swapped into every key and value, and keys
// numbered by a sequence (events, the queue, the status index) numbered
// from seq.
func ownEntries(es []entry, id []byte, seq uint64) []entry {
	out := make([]entry, 0, len(es))
	for _, e := range es {
		k := bytes.ReplaceAll(e.k, []byte(floorID), id)
		switch e.k[0] {
		case spaceEvent, spaceQueue, spaceStatus:
			k = binary.BigEndian.AppendUint64(k[:len(k)-8], seq)
			seq++
		}
		out = append(out, entry{k, bytes.ReplaceAll(e.v, []byte(floorID), id)})
	}
	return out
}

// badgerFloor commits b.N orders, each the entries order makes for its
// id and a sequence number of its own (each order's numbers 16 apart,
// more than one order uses), floorCommit orders a transaction and the
// store's counters (meta) once with each, without syncing; it reports
// orders/s, the CPU of this process an order cost, and the bytes an order
// wrote.
func badgerFloor(b *testing.B, meta []entry, order func(id []byte, seq uint64) []entry) {
	db, err := bdg.Open(badgerOptions(b.TempDir(), Options{MinFreeBytes: 1}.withDefaults(), false).WithSyncWrites(false))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var size int
	b.ResetTimer()
	cpu0, start := processCPU(), time.Now()
	for i := 0; i < b.N; i += floorCommit {
		txn := db.NewTransaction(true)
		for j := i; j < min(i+floorCommit, b.N); j++ {
			for _, e := range order(fmt.Appendf(nil, "b%09d", j), uint64(j)*16) {
				size += len(e.k) + len(e.v)
				if err := txn.Set(e.k, e.v); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, e := range meta {
			if err := txn.Set(e.k, e.v); err != nil {
				b.Fatal(err)
			}
		}
		if err := txn.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	el, cpu := time.Since(start), processCPU()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "orders/s")
	b.ReportMetric(float64(size)/float64(b.N), "B/order")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/order")
	}
}
