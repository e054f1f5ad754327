package sync

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The scanner agrees with encoding/json on everything it reads: same
// value, and nothing encoding/json would refuse.
func FuzzScan(f *testing.F) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("", 8*3600))
	task, _ := json.Marshal(TaskEvent{TaskNo: "order_1_station_hot", Version: 3, OrderID: "1", Station: "hot", PrinterID: "hot-1",
		Status: "done", Attempt: 1, LastError: "paper end", Reason: "stale", Source: "pos", CopyOf: "order_0_station_hot",
		BackupFrom: "cold-1", CreatedAt: at, PrintedAt: &at, UpdatedAt: at})
	receipt, _ := json.Marshal(ReceiptEvent{TaskNo: "order_1_station_hot", Attempt: 2, State: "printed", PrinterID: "hot-1",
		PayloadSHA256: "9f86", ProcessID: "0001", JobID: "7", Reprint: true, At: at})
	frame, _ := Encode(&Frame{Type: FrameEvents, Events: []Event{
		{Seq: 1, Kind: KindTask, TaskNo: "order_1_station_hot", At: at, Data: task},
		{Seq: 2, Kind: KindReceipt, At: at, Data: receipt},
		{Seq: 3, Kind: "x", At: at, Data: json.RawMessage(`[1,-2.5e+3,"a\u00e9\n",{"b":[true,false,null]},{}]`)},
	}})
	for _, s := range []string{string(task), string(receipt), string(frame),
		`{"v":1,"type":"events","events":[]}`, `{"v":1,"type":"events","events":[{"seq":1,"data":null}]}`,
		`{"version":01}`, `{"attempt":-1}`, `{"printed_at":null}`, `{"task_no":"a"} x`, `{"Task_No":"a"}`,
		`{"v":1,"type":"events","events":[{"data":"\ud800"}],"events":[{"seq":2}]}`, `{"data": [1, 2 ,3] }`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b := []byte(in)
		var st, jt TaskEvent
		if scanTask(b, &st) {
			if err := json.Unmarshal(b, &jt); err != nil || !reflect.DeepEqual(st, jt) {
				t.Fatalf("task %q: scanned %+v, encoding/json %+v, %v", in, st, jt, err)
			}
		}
		var sr, jr ReceiptEvent
		if scanReceipt(b, &sr) {
			if err := json.Unmarshal(b, &jr); err != nil || !reflect.DeepEqual(sr, jr) {
				t.Fatalf("receipt %q: scanned %+v, encoding/json %+v, %v", in, sr, jr, err)
			}
		}
		var sf, jf Frame
		if scanEventsFrame(b, &sf) {
			if err := json.Unmarshal(b, &jf); err != nil || !reflect.DeepEqual(sf, jf) {
				t.Fatalf("frame %q: scanned %+v, encoding/json %+v, %v", in, sf, jf, err)
			}
		}
		s := &scanner{b: b}
		if _, ok := s.value(0); ok && s.end() && !json.Valid(b) {
			t.Fatalf("value %q: scanned, and encoding/json refuses it", in)
		}
	})
}

// What the gateway writes takes the scanner's path, not encoding/json's.
func TestScan_GatewayShapes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	task, _ := json.Marshal(TaskEvent{TaskNo: "order_1_station_hot", Version: 3, OrderID: "1", Station: "hot", PrinterID: "hot-1",
		Status: "done", Attempt: 1, CreatedAt: at, PrintedAt: &at, UpdatedAt: at})
	receipt, _ := json.Marshal(ReceiptEvent{TaskNo: "order_1_station_hot", Attempt: 1, State: "printed", PrinterID: "hot-1", At: at})
	frame, _ := Encode(&Frame{Type: FrameEvents, Events: []Event{
		{Seq: 1, Kind: KindTask, TaskNo: "order_1_station_hot", At: at, Data: task},
		{Seq: 2, Kind: KindReceipt, TaskNo: "order_1_station_hot", At: at, Data: receipt},
	}})
	if !scanTask(task, &TaskEvent{}) {
		t.Errorf("task %s: not scanned", task)
	}
	if !scanReceipt(receipt, &ReceiptEvent{}) {
		t.Errorf("receipt %s: not scanned", receipt)
	}
	if !scanEventsFrame(frame, &Frame{}) {
		t.Errorf("frame %s: not scanned", frame)
	}
}
