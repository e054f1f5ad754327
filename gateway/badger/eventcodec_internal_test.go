package badger

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/sync"
)

// jsonEvent is an outbox event as the store kept it before events were
// compact, read back: what the cloud was sent.
func jsonEvent(t *testing.T, seq uint64, kind, taskNo string, at time.Time, data any) sync.Event {
	t.Helper()
	var raw []byte
	var err error
	if te, ok := data.(*sync.TaskEvent); ok {
		raw, err = sync.AppendTaskEvent(nil, te)
	} else {
		raw, err = json.Marshal(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := sync.AppendEvent([]byte{formatVersion}, &sync.Event{Seq: seq, Kind: kind, TaskNo: taskNo, At: at, Data: raw})
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeEvent(seq, b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDecodeEvent_Compact(t *testing.T) {
	t.Parallel()
	shanghai := time.FixedZone("CST", 8*3600)
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	printed := at.Add(3 * time.Second).In(shanghai)
	times := []time.Time{at, at.In(time.Local), at.In(shanghai), at.In(time.FixedZone("", -(3*3600 + 30*60))), {}}
	for i, when := range times {
		tasks := []*sync.TaskEvent{
			{TaskNo: "A1_hot", Version: 3, OrderID: "A1", Station: "hot", PrinterID: "hot-1", Status: storeprint.StatusDone,
				Attempt: 1, Source: storeprint.SourcePOS, CreatedAt: at, PrintedAt: &printed, UpdatedAt: when},
			{TaskNo: "B<&>\u2028_cold", Version: 1 << 40, OrderID: "B<&>", Station: "冷菜", PrinterID: "cold-1", Status: storeprint.StatusAttention,
				Attempt: 2, LastError: "print uncertain: \"paper\"\n", Reason: storeprint.ReasonUncertain, CopyOf: "X_hot",
				BackupFrom: "hot-2", CreatedAt: when, UpdatedAt: when},
		}
		for j, te := range tasks {
			b, ok := appendCompactTaskEvent(nil, te.TaskNo, when, te)
			if !ok {
				t.Fatalf("time %d, task %d: not compact", i, j)
			}
			got, err := decodeEvent(7, b)
			if err != nil {
				t.Fatalf("time %d, task %d: %v", i, j, err)
			}
			if want := jsonEvent(t, 7, sync.KindTask, te.TaskNo, when, te); !reflect.DeepEqual(got, want) {
				t.Errorf("time %d, task %d: got %+v (%s), want %+v (%s)", i, j, got, got.Data, want, want.Data)
			}
		}
		receipts := []*sync.ReceiptEvent{
			{TaskNo: "A1_hot", Attempt: 1, State: storeprint.ReceiptPrinted, PrinterID: "hot-1",
				PayloadSHA256: "9f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271", ProcessID: "4821",
				ConfirmedBy: "process_id", At: when},
			{TaskNo: "A1_hot", Attempt: 3, State: storeprint.ReceiptPrepared, PrinterID: "hot-1",
				PayloadSHA256: "9F2B", JobID: "17", Reprint: true, At: when},
		}
		for j, re := range receipts {
			b, ok := appendCompactReceiptEvent(nil, re.TaskNo, when, re)
			if !ok {
				t.Fatalf("time %d, receipt %d: not compact", i, j)
			}
			got, err := decodeEvent(9, b)
			if err != nil {
				t.Fatalf("time %d, receipt %d: %v", i, j, err)
			}
			if want := jsonEvent(t, 9, sync.KindReceipt, re.TaskNo, when, re); !reflect.DeepEqual(got, want) {
				t.Errorf("time %d, receipt %d: got %+v (%s), want %+v (%s)", i, j, got, got.Data, want, want.Data)
			}
		}
	}
	t.Run("ErrMalformed", func(t *testing.T) {
		te := &sync.TaskEvent{TaskNo: "A1_hot", Status: storeprint.StatusQueued, CreatedAt: at, UpdatedAt: at}
		b, _ := appendCompactTaskEvent(nil, te.TaskNo, at, te)
		for n := 1; n < len(b); n++ {
			if _, err := decodeEvent(1, b[:n]); err == nil {
				t.Fatalf("cut to %d of %d bytes: got no error", n, len(b))
			}
		}
		if _, err := decodeEvent(1, append(b, 0)); err == nil {
			t.Fatal("a byte too many: got no error")
		}
	})
	t.Run("JSONTimes", func(t *testing.T) {
		// Times whose JSON would not read back as themselves stay JSON.
		odd := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("LMT", 8*3600+343))
		te := &sync.TaskEvent{TaskNo: "A1_hot", CreatedAt: at, UpdatedAt: odd}
		if _, ok := appendCompactTaskEvent(nil, te.TaskNo, at, te); ok {
			t.Error("a zone offset with seconds: got compact")
		}
		if _, ok := appendCompactReceiptEvent(nil, "A1_hot", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), &sync.ReceiptEvent{}); ok {
			t.Error("year 10000: got compact")
		}
	})
}

// A ticket's task and receipt events are stored compact, a quarter of
// their JSON, and the outbox gives them back as the JSON the cloud was
// always sent.
func TestOutbox_CompactEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.FixedZone("CST", 8*3600))
	d, err := Open(t.TempDir(), Options{MinFreeBytes: 1, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	task := &gateway.Task{TaskNo: "A1_hot", OrderID: "A1", Station: "hot", PrinterID: "hot-1", FirstPrinter: "hot-1",
		Status: storeprint.StatusQueued, Source: storeprint.SourcePOS, Table: "T12",
		Items: []storeprint.Item{{Name: "宫保鸡丁", Qty: 1, Station: "hot", Note: "少辣"}}, CreatedAt: at, NextAt: at}
	rec := &gateway.Receipt{TaskNo: "A1_hot", Attempt: 1, State: storeprint.ReceiptPrepared, PrinterID: "hot-1",
		PayloadSHA256: "9f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271", ProcessID: "4821", PreparedAt: at}
	var want []sync.Event
	err = d.Update(ctx, func(tx gateway.Tx) error {
		task.Seq = tx.NextTaskSeq()
		if err := tx.PutTask(task); err != nil {
			return err
		}
		te := task.Event()
		want = append(want, jsonEvent(t, 1, sync.KindTask, task.TaskNo, at, &te))
		task.Status, task.Attempt = storeprint.StatusPrinting, 1
		if err := tx.PutTask(task); err != nil {
			return err
		}
		te = task.Event()
		want = append(want, jsonEvent(t, 2, sync.KindTask, task.TaskNo, at, &te))
		if err := tx.PutReceipt(rec); err != nil {
			return err
		}
		want = append(want, jsonEvent(t, 3, sync.KindReceipt, rec.TaskNo, at, rec.Event()))
		a := &gateway.AuditEntry{Action: storeprint.ActionReprint, Operator: "li", TaskNo: task.TaskNo}
		if err := tx.AppendAudit(a); err != nil {
			return err
		}
		want = append(want, jsonEvent(t, 4, sync.KindAudit, a.TaskNo, at, a.Event()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []sync.Event
	if err := d.View(ctx, func(tx gateway.ReadTx) error {
		got, err = tx.Outbox(0, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d events:\n%+v\nwant %d:\n%+v", len(got), got, len(want), want)
	}
	for i := range got {
		if !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("event %d: got data %s, want %s", i+1, got[i].Data, want[i].Data)
		}
	}
	// What each takes in the store.
	err = d.db.View(func(txn *bdg.Txn) error {
		for seq, most := range map[uint64]int{1: 120, 2: 120, 3: 120} {
			item, err := txn.Get(seqKey(spaceEvent, seq))
			if err != nil {
				return err
			}
			if n := int(item.ValueSize()); n > most {
				t.Errorf("event %d: got %d bytes stored, want at most %d", seq, n, most)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
