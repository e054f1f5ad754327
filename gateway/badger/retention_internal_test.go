package badger

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func TestCompactOrder(t *testing.T) {
	t.Parallel()
	o := &gateway.OrderRecord{
		OrderID: "A-17", Digest: "5f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271",
		TaskNos: []string{storeprint.TaskNo("A-17", "hot"), storeprint.TaskNo("A-17", "cold")}, Printers: []string{"hot-1", "pass-1"},
		Source: storeprint.SourceCloud, Voided: true, CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 123, time.UTC),
	}
	b, ok := encodeCompactOrder(o)
	if !ok {
		t.Fatal("not compactable")
	}
	got, err := decodeCompactOrder(o.OrderID, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, o) {
		t.Fatalf("got %+v, want %+v", got, o)
	}
	if len(b) > 80 {
		t.Errorf("compact record of %d bytes, want at most 80", len(b))
	}
}

func FuzzDecodeCompactOrder(f *testing.F) {
	o := &gateway.OrderRecord{OrderID: "A-1", Digest: "abc", TaskNos: []string{storeprint.TaskNo("A-1", "hot")}, Printers: []string{"hot-1"}, CreatedAt: time.Unix(0, 5)}
	b, _ := encodeCompactOrder(o)
	f.Add(b)
	f.Add([]byte{2, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeCompactOrder("A-1", b)
		if err != nil {
			return
		}
		// What decodes encodes back to the same record.
		b2, ok := encodeCompactOrder(o)
		if !ok {
			return // stations that do not make task numbers back
		}
		o2, err := decodeCompactOrder("A-1", b2)
		if err != nil || !reflect.DeepEqual(o, o2) {
			t.Fatalf("%x: decoded %+v, re-encoded and decoded %+v %v", b, o, o2, err)
		}
	})
}

func FuzzDecodeWitness(f *testing.F) {
	s := &witnessState{ID: newWitnessID(), Cmt: commitState{Gen: 7, digest: digest{Sum: 1, Keys: 2, Tasks: 3}}, Ctr: counters{1, 2, 3}, At: time.Unix(0, 9)}
	f.Add(encodeWitness(s))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != witnessLen {
			return
		}
		got, ok := decodeWitness(b)
		if !ok {
			return
		}
		if again := encodeWitness(got); !reflect.DeepEqual(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes as %x", b, got, again)
		}
	})
}

// The compact order record is part of the disk format: its bytes are
// pinned like every other record's (see TestCodec_Golden).
func TestCompactOrder_Golden(t *testing.T) {
	t.Parallel()
	o := &gateway.OrderRecord{
		OrderID: "1", Digest: "5f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271",
		TaskNos: []string{"order_1_station_hot"}, Printers: []string{"hot-1"}, Source: storeprint.SourcePOS,
		CreatedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
	}
	got, ok := encodeCompactOrder(o)
	if !ok {
		t.Fatal("not compactable")
	}
	if want := golden(t, "order-compact", got); string(got) != string(want) {
		t.Fatalf("the disk format of a compact order record changed:\ngot  %x\nwant %x", got, want)
	}
}

// An order is stored compact from its acceptance, and read back the same;
// a record whose task numbers do not follow from its id and stations is
// stored as JSON. Both read back as stored.
func TestTx_PutOrder(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir(), Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	at := time.Date(2026, 12, 1, 12, 0, 0, 5, time.UTC)
	compact := &gateway.OrderRecord{
		OrderID: "A-1", Digest: "5f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271",
		TaskNos: []string{storeprint.TaskNo("A-1", "hot"), storeprint.TaskNo("A-1", "cold")}, Printers: []string{"hot-1", "cold-1"},
		Source: storeprint.SourcePOS, CreatedAt: at,
	}
	foreign := &gateway.OrderRecord{OrderID: "B-1", Digest: "d1", TaskNos: []string{"elsewhere"}, Printers: []string{"hot-1"},
		Source: storeprint.SourceCloud, Voided: true, CreatedAt: at}
	ctx := context.Background()
	err = d.Update(ctx, func(tx gateway.Tx) error {
		if err := tx.PutOrder(compact); err != nil {
			return err
		}
		return tx.PutOrder(foreign)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o      *gateway.OrderRecord
		format byte
	}{{compact, compactOrderVersion}, {foreign, formatVersion}} {
		err := d.View(ctx, func(rtx gateway.ReadTx) error {
			got, err := rtx.Order(tc.o.OrderID)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, tc.o) {
				t.Errorf("order %s: got %+v, want %+v", tc.o.OrderID, got, tc.o)
			}
			b, err := rtx.(*tx).get(key(spaceOrder, tc.o.OrderID))
			if err != nil {
				return err
			}
			if b[0] != tc.format {
				t.Errorf("order %s stored in format %d, want %d", tc.o.OrderID, b[0], tc.format)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
