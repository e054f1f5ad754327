package sync

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
)

// benchEvents is a batch of an outbox after an outage: each task's
// queued, printing, three receipt steps and done, as the gateway writes
// them.
func benchEvents(n int) []Event {
	base := time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
	out := make([]Event, 0, n)
	for i := 0; len(out) < n; i++ {
		no := fmt.Sprintf("order_b%07d_station_hot", i)
		created := base.Add(time.Duration(i) * time.Second)
		task := func(v uint64, st storeprint.Status, at time.Time) {
			t := TaskEvent{TaskNo: no, Version: v, OrderID: fmt.Sprintf("b%07d", i), Station: "hot", PrinterID: "hot-1",
				Status: st, CreatedAt: created, UpdatedAt: at}
			if st == storeprint.StatusDone {
				t.Attempt, t.PrintedAt = 1, &at
			}
			b, _ := json.Marshal(t)
			out = append(out, Event{Seq: uint64(len(out) + 1), Kind: KindTask, TaskNo: no, At: at, Data: b})
		}
		receipt := func(st storeprint.ReceiptState, at time.Time) {
			b, _ := json.Marshal(ReceiptEvent{TaskNo: no, Attempt: 1, State: st, PrinterID: "hot-1",
				PayloadSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", ProcessID: "0042", At: at})
			out = append(out, Event{Seq: uint64(len(out) + 1), Kind: KindReceipt, TaskNo: no, At: at, Data: b})
		}
		task(1, storeprint.StatusQueued, created)
		task(2, storeprint.StatusPrinting, created.Add(10*time.Millisecond))
		receipt(storeprint.ReceiptPrepared, created.Add(11*time.Millisecond))
		receipt(storeprint.ReceiptSubmitted, created.Add(20*time.Millisecond))
		receipt(storeprint.ReceiptPrinted, created.Add(900*time.Millisecond))
		task(3, storeprint.StatusDone, created.Add(901*time.Millisecond))
	}
	return out[:n]
}

// BenchmarkEventsFrame reads a 500-event frame as the cloud does (the
// frame, then each event's data) and writes one as the gateway does.
func BenchmarkEventsFrame(b *testing.B) {
	events := benchEvents(500)
	frame, err := Encode(&Frame{Type: FrameEvents, Events: events})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			f, err := Decode(frame)
			if err != nil {
				b.Fatal(err)
			}
			CheckEvents(f.Events)
			if f.Events[499].checked.err != nil {
				b.Fatal(f.Events[499].checked.err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Encode(&Frame{Type: FrameEvents, Events: events}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
