package sync_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/sync")

// The wire format is a contract between releases: a gateway and a cloud of
// different versions must keep understanding each other's frames.
func TestFrame_Golden(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	taskState := sync.TaskEvent{TaskNo: "order_1_station_hot", Version: 3, OrderID: "1", Station: "hot",
		PrinterID: "hot-1", Status: "done", Attempt: 1, Source: "pos", CreatedAt: at, PrintedAt: &at, UpdatedAt: at}
	receiptState := sync.ReceiptEvent{TaskNo: "order_1_station_hot", Attempt: 1, State: storeprint.ReceiptPrinted,
		PrinterID: "hot-1", PayloadSHA256: "ab", ProcessID: "0042", At: at}
	task, _ := json.Marshal(taskState)
	receipt, _ := json.Marshal(receiptState)
	for _, tc := range []struct {
		name  string
		frame sync.Frame
	}{
		{"hello", sync.Frame{Type: sync.FrameHello, GatewayID: "gw-1", StoreID: "store-001", Version: "1.0.0", DownCursor: 7,
			Incarnation: "5f2c9a0e7b1d4c36", LastSeq: 43, Compacted: 40, Resync: true}},
		{"welcome", sync.Frame{Type: sync.FrameWelcome, StoreID: "store-001", Cursor: 41, Resync: true}},
		{"welcome_behind", sync.Frame{Type: sync.FrameWelcome, StoreID: "store-001", Cursor: 43, Behind: true, Resync: true}},
		{"events", sync.Frame{Type: sync.FrameEvents, Events: []sync.Event{
			{Seq: 42, Kind: sync.KindTask, TaskNo: "order_1_station_hot", At: at, Data: task},
			{Seq: 43, Kind: sync.KindReceipt, TaskNo: "order_1_station_hot", At: at, Data: receipt},
		}}},
		{"ack", sync.Frame{Type: sync.FrameAck, Cursor: 43}},
		{"ack_dead_letters", sync.Frame{Type: sync.FrameAck, Cursor: 44, DeadLetters: []sync.DeadLetter{{Seq: 44, Reason: "task order_1_station_hot belongs to gateway gw-2 of this store"}}}},
		{"snapshot", sync.Frame{Type: sync.FrameSnapshot, Tasks: []sync.TaskEvent{taskState}, Receipts: []sync.ReceiptEvent{receiptState}, Final: true, Cursor: 40}},
		{"states", sync.Frame{Type: sync.FrameStates, Tasks: []sync.TaskEvent{taskState}}},
		{"states_final", sync.Frame{Type: sync.FrameStates, Final: true}},
		{"status", sync.Frame{Type: sync.FrameStatus, Printers: []sync.PrinterStatus{{ID: "hot-1", Status: "paper_end", Stations: []string{"hot"}, Backup: "pass-1", At: at}}}},
		{"down", sync.Frame{Type: sync.FrameDown, Commands: []sync.Command{
			{Seq: 8, ID: "c-8", Kind: storeprint.CommandOrder, Order: json.RawMessage(`{"order_id":"w-1","items":[{"name":"面","qty":1,"station":"hot"}]}`), CreatedAt: at},
			{Seq: 9, ID: "c-9", Kind: storeprint.CommandRetry, TaskNo: "order_1_station_hot", Operator: "amy", Reason: "jam", CreatedAt: at},
		}}},
		{"down_redelivered", sync.Frame{Type: sync.FrameDown, Cursor: 12, Commands: []sync.Command{
			{Seq: 8, ID: "c-8", Kind: storeprint.CommandOrder, Order: json.RawMessage(`{"order_id":"w-1","items":[{"name":"面","qty":1,"station":"hot"}]}`), CreatedAt: at},
		}}},
		{"down_ack", sync.Frame{Type: sync.FrameDownAck, Seq: 9}},
		{"error", sync.Frame{Type: sync.FrameError, Error: "gateway revoked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sync.Encode(&tc.frame)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("..", "testdata", "sync", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(got)+"\n" != string(want) {
				t.Fatalf("frame changed:\ngot  %s\nwant %s", got, want)
			}
			back, err := sync.Decode(want)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := sync.Encode(back)
			if string(again) != string(got) {
				t.Fatalf("decode and encode changed the frame:\ngot  %s\nwant %s", again, got)
			}
		})
	}
}

// Frames of the first release (testdata/sync/v1.0) still decode, and
// encode again to the same bytes: a new side understands an old one.
func TestFrame_OldFrames(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "sync", "v1.0", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no old frames: %v", err)
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := sync.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		again, _ := sync.Encode(f)
		if string(again)+"\n" != string(b) {
			t.Fatalf("%s changed:\ngot  %s\nwant %s", filepath.Base(path), again, b)
		}
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in string }{
		{"ErrVersion", `{"v":2,"type":"ack","cursor":1}`},
		{"ErrType", `{"v":1,"type":"launch"}`},
		{"ErrJSON", `{"v":1,"type":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sync.Decode([]byte(tc.in)); err == nil {
				t.Fatalf("decoded %s", tc.in)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"hello", "events", "down", "ack"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "sync", name+".json")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := sync.Decode(b)
		if err != nil {
			return
		}
		if fr.V != sync.ProtocolVersion || fr.Type == "" {
			t.Fatalf("accepted %+v", fr)
		}
		if _, err := sync.Encode(fr); err != nil {
			t.Fatalf("a decoded frame does not encode: %v", err)
		}
	})
}
