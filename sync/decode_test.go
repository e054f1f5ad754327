package sync_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

var at = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func mustEvent(t testing.TB, seq uint64, kind string, v any) *sync.Event {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &sync.Event{Seq: seq, Kind: kind, At: at, Data: b}
}

func task(s storeprint.Status, r storeprint.Reason, src storeprint.Source) sync.TaskEvent {
	return sync.TaskEvent{TaskNo: "order_1_station_hot", Version: 2, OrderID: "1", Station: "hot",
		PrinterID: "hot-1", Status: s, Reason: r, Source: src, Attempt: 1, CreatedAt: at, UpdatedAt: at}
}

// TestDecodeEvent_Vocabulary: every word the gateway can write is one the
// cloud's decoder accepts.
func TestDecodeEvent_Vocabulary(t *testing.T) {
	t.Parallel()
	for _, s := range storeprint.Statuses {
		for _, r := range append(storeprint.Reasons, "") {
			for _, src := range storeprint.Sources {
				if _, err := sync.DecodeEvent(mustEvent(t, 1, sync.KindTask, task(s, r, src))); err != nil {
					t.Errorf("status %s reason %q source %s: %v", s, r, src, err)
				}
			}
		}
	}
	for _, st := range storeprint.ReceiptStates {
		ev := mustEvent(t, 1, sync.KindReceipt, sync.ReceiptEvent{TaskNo: "order_1_station_hot", Attempt: 1, State: st, PrinterID: "hot-1", At: at})
		if _, err := sync.DecodeEvent(ev); err != nil {
			t.Errorf("receipt state %s: %v", st, err)
		}
	}
	for _, a := range storeprint.GatewayActions {
		ev := mustEvent(t, 1, sync.KindAudit, sync.AuditEvent{ID: "1", Action: a, Operator: "李", TaskNo: "order_1_station_hot,order_1_station_cold", At: at})
		ev.TaskNo = "order_1_station_hot,order_1_station_cold"
		if _, err := sync.DecodeEvent(ev); err != nil {
			t.Errorf("audit action %s: %v", a, err)
		}
	}
}

func TestDecodeEvent(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		d, err := sync.DecodeEvent(mustEvent(t, 7, sync.KindTask, task(storeprint.StatusDone, "", storeprint.SourcePOS)))
		if err != nil || d.Task == nil || d.Task.TaskNo != "order_1_station_hot" {
			t.Fatalf("got %+v, %v", d, err)
		}
	})
	t.Run("OKNewerKind", func(t *testing.T) {
		d, err := sync.DecodeEvent(&sync.Event{Seq: 1, Kind: "device", At: at, Data: json.RawMessage(`{"x":1}`)})
		if err != nil || d.Task != nil || d.Receipt != nil || d.Audit != nil {
			t.Fatalf("got %+v, %v", d, err)
		}
	})
	bad := func(change func(*sync.TaskEvent)) *sync.Event {
		tv := task(storeprint.StatusQueued, "", storeprint.SourcePOS)
		change(&tv)
		return mustEvent(t, 3, sync.KindTask, tv)
	}
	for _, tc := range []struct {
		name string
		ev   *sync.Event
		want string
	}{
		{"ErrSeqZero", &sync.Event{Kind: sync.KindTask, At: at}, "seq"},
		{"ErrSeqHuge", &sync.Event{Seq: 1 << 63, Kind: sync.KindTask, At: at}, "seq"},
		{"ErrNoAt", &sync.Event{Seq: 1, Kind: sync.KindTask}, "at is required"},
		{"ErrNoKind", &sync.Event{Seq: 1, At: at, Data: json.RawMessage(`{}`)}, "kind"},
		{"ErrBadJSON", &sync.Event{Seq: 1, Kind: "x", At: at, Data: json.RawMessage(`{`)}, "JSON"},
		{"ErrBadUTF8", &sync.Event{Seq: 1, Kind: "x", At: at, Data: json.RawMessage("\"\xbf\"")}, "UTF-8"},
		{"ErrBadKind", &sync.Event{Seq: 1, Kind: "x\x00", At: at, Data: json.RawMessage(`{}`)}, "kind"},
		{"ErrNULEscape", bad(func(tv *sync.TaskEvent) { tv.LastError = "a\x00b" }), "NUL"},
		{"ErrStatus", bad(func(tv *sync.TaskEvent) { tv.Status = "lost" }), "status"},
		{"ErrReason", bad(func(tv *sync.TaskEvent) { tv.Reason = "bored" }), "reason"},
		{"ErrSource", bad(func(tv *sync.TaskEvent) { tv.Source = "fax" }), "source"},
		{"ErrVersion", bad(func(tv *sync.TaskEvent) { tv.Version = 1<<62 + 1 }), "version"},
		{"ErrTaskNo", bad(func(tv *sync.TaskEvent) { tv.TaskNo = "a/b" }), "task_no"},
		{"ErrPrinterID", bad(func(tv *sync.TaskEvent) { tv.PrinterID = strings.Repeat("p", 65) }), "printer_id"},
		{"ErrReceiptState", mustEvent(t, 1, sync.KindReceipt, sync.ReceiptEvent{TaskNo: "t1", State: "lost", At: at}), "receipt state"},
		{"ErrAuditNoAction", mustEvent(t, 1, sync.KindAudit, sync.AuditEvent{ID: "1", At: at}), "action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sync.DecodeEvent(tc.ev)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(uint64(1), sync.KindTask, `{"task_no":"t","version":1,"status":"queued"}`)
	f.Add(uint64(2), sync.KindReceipt, `{"task_no":"t","attempt":1,"state":"not_sent"}`)
	f.Add(uint64(3), sync.KindAudit, `{"id":"1","action":"void","reason":"\u0000"}`)
	f.Fuzz(func(t *testing.T, seq uint64, kind, data string) {
		ev := &sync.Event{Seq: seq, Kind: kind, At: at, Data: json.RawMessage(data)}
		d, err := sync.DecodeEvent(ev)
		if err != nil {
			return
		}
		if strings.Contains(data, "\x00") || strings.Contains(strings.ToLower(data), `\u0000`) {
			t.Fatalf("accepted a NUL: %q", data)
		}
		if !utf8.ValidString(data) || !utf8.ValidString(kind) {
			t.Fatalf("accepted invalid UTF-8: %q %q", kind, data)
		}
		if d.Task != nil && (!d.Task.Status.Valid() || d.Task.Version == 0) {
			t.Fatalf("accepted task %+v", d.Task)
		}
		if d.Receipt != nil && !d.Receipt.State.Valid() {
			t.Fatalf("accepted receipt %+v", d.Receipt)
		}
	})
}

func TestCheckEvents(t *testing.T) {
	t.Parallel()
	events := []sync.Event{*mustEvent(t, 1, sync.KindTask, task(storeprint.StatusQueued, "", storeprint.SourcePOS)),
		{Seq: 2, Kind: sync.KindTask, At: at, Data: json.RawMessage(`{`)}}
	sync.CheckEvents(events)
	copied := append([]sync.Event(nil), events...)
	d1, err1 := sync.DecodeEvent(&events[0])
	d2, err2 := sync.DecodeEvent(&copied[0])
	if err1 != nil || err2 != nil || d1.Task == nil || d1.Task != d2.Task || d1.Task.TaskNo != "order_1_station_hot" {
		t.Fatalf("got %+v %v and %+v %v, want the one task checked ahead", d1, err1, d2, err2)
	}
	if _, err := sync.DecodeEvent(&events[1]); err == nil || !strings.Contains(err.Error(), "JSON") {
		t.Fatalf("got %v, want the error found ahead", err)
	}
}
