package sync

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The scanner agrees with encoding/json on everything it reads: same
// value, and nothing encoding/json would refuse.
func FuzzScan(f *testing.F) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("", 8*3600))
	task, _ := json.Marshal(TaskEvent{TaskNo: "order_1_station_hot", Version: 3, OrderID: "1", Station: "hot", PrinterID: "hot-1",
		Status: "done", Attempt: 1, LastError: "paper end", Reason: "stale", Source: "pos", CopyOf: "order_0_station_hot",
		BackupFrom: "cold-1", CreatedAt: at, PrintedAt: &at, UpdatedAt: at})
	receipt, _ := json.Marshal(ReceiptEvent{TaskNo: "order_1_station_hot", Attempt: 2, State: "printed", PrinterID: "hot-1",
		PayloadSHA256: "9f86", ProcessID: "0001", JobID: "7", Reprint: true, ConfirmedBy: "transmit_status", At: at})
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
		// Each twice over the same kept strings: the second read takes
		// them from what the first kept.
		c := &strs{}
		for range 2 {
			var st, jt TaskEvent
			if scanTask(b, &st, c) {
				if err := json.Unmarshal(b, &jt); err != nil || !reflect.DeepEqual(st, jt) {
					t.Fatalf("task %q: scanned %+v, encoding/json %+v, %v", in, st, jt, err)
				}
			}
			var sr, jr ReceiptEvent
			if scanReceipt(b, &sr, c) {
				if err := json.Unmarshal(b, &jr); err != nil || !reflect.DeepEqual(sr, jr) {
					t.Fatalf("receipt %q: scanned %+v, encoding/json %+v, %v", in, sr, jr, err)
				}
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
	receipt, _ := json.Marshal(ReceiptEvent{TaskNo: "order_1_station_hot", Attempt: 1, State: "printed", PrinterID: "hot-1",
		ConfirmedBy: "process_id", At: at})
	frame, _ := Encode(&Frame{Type: FrameEvents, Events: []Event{
		{Seq: 1, Kind: KindTask, TaskNo: "order_1_station_hot", At: at, Data: task},
		{Seq: 2, Kind: KindReceipt, TaskNo: "order_1_station_hot", At: at, Data: receipt},
	}})
	if !scanTask(task, &TaskEvent{}, nil) {
		t.Errorf("task %s: not scanned", task)
	}
	if !scanReceipt(receipt, &ReceiptEvent{}, nil) {
		t.Errorf("receipt %s: not scanned", receipt)
	}
	if !scanEventsFrame(frame, &Frame{}) {
		t.Errorf("frame %s: not scanned", frame)
	}
}

// appendEventsFrame writes what encoding/json writes, byte for byte.
func FuzzAppendEventsFrame(f *testing.F) {
	f.Add(uint64(1), KindTask, "order_1_station_hot", `{"task_no":"order_1_station_hot","version":1}`, int64(1764590400), int64(5), 8*3600)
	f.Add(uint64(2), "x<", "", `[1, 2]`, int64(-62135596800), int64(0), 0)
	f.Add(uint64(3), KindReceipt, "t", `"a\u2028&"`, int64(253402300800), int64(999999999), -3600)
	f.Add(uint64(4), KindAudit, "", ``, int64(0), int64(1), 60)
	f.Fuzz(func(t *testing.T, seq uint64, kind, taskNo, data string, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).In(time.FixedZone("", offset%(48*3600)))
		fr := &Frame{V: ProtocolVersion, Type: FrameEvents, Events: []Event{
			{Seq: seq, Kind: kind, TaskNo: taskNo, At: at, Data: json.RawMessage(data)},
			{Seq: seq + 1, Kind: KindTask, At: at, Data: json.RawMessage(`{}`)},
		}}
		got, ok := appendEventsFrame(nil, fr)
		if !ok {
			return
		}
		want, err := json.Marshal(fr)
		if err != nil || string(got) != string(want) {
			t.Fatalf("wrote %s\nencoding/json %s, %v", got, want, err)
		}
	})
}

// plainRun stops where a byte-by-byte reading stops, with the same bits.
func TestPlainRun(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		// Plain bytes with at most two that stop a run among them.
		b := rapid.SliceOfN(rapid.SampledFrom([]byte{'a', 0x20, 0x7f, 0x80, 0xe2, 0xff}), 0, 40).Draw(t, "b")
		for n := rapid.IntRange(0, 2).Draw(t, "stops"); n > 0 && len(b) > 0; n-- {
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.SampledFrom([]byte{'"', '\\', 0x00, 0x1f}).Draw(t, "stop")
		}
		from := rapid.IntRange(0, len(b)).Draw(t, "from")
		want, high := from, byte(0)
		for want < len(b) && b[want] >= 0x20 && b[want] != '"' && b[want] != '\\' {
			high |= b[want]
			want++
		}
		if i, h := plainRun(b, from); i != want || h&0x80 != high&0x80 {
			t.Fatalf("plainRun(%q, %d) = %d, %#x; want %d, %#x", b, from, i, h, want, high)
		}
	})
}
