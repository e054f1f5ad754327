package postgres

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint/sync"
)

// FuzzNewBatch: whatever a gateway sends, the batch holds only what
// PostgreSQL can store (no NUL, valid UTF-8, JSON data) and only seqs in
// the window past the cursor, each once.
func FuzzNewBatch(f *testing.F) {
	f.Add(uint64(1), "task", "order_a_station_hot", `{"task_no":"order_a_station_hot","version":1,"status":"queued"}`)
	f.Add(uint64(2), "receipt", "t\x00", "{\"task_no\":\"t\",\"state\":\"\xff\"}")
	f.Add(uint64(3), "audit\xff", "", `{"id":"1","action":"void","reason":"\u0000"}`)
	f.Fuzz(func(t *testing.T, seq uint64, kind, taskNo, data string) {
		c := &cursorRow{seq: 1<<40 + 5, offset: 1 << 40}
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		events := []sync.Event{
			{Seq: seq, Kind: kind, TaskNo: taskNo, At: at, Data: json.RawMessage(data)},
			{Seq: seq, Kind: kind, TaskNo: taskNo, Data: json.RawMessage(data)},
		}
		b := newBatch(events, decodeEvents(events), c, at)
		if len(b.seqs) > 1 {
			t.Fatalf("a seq sent twice is stored %d times", len(b.seqs))
		}
		for i, s := range b.seqs {
			if wire := uint64(s - c.offset); wire <= c.wire() || wire > c.wire()+sync.MaxWindow {
				t.Fatalf("seq %d outside the window", wire)
			}
			for _, v := range []string{b.kinds[i], b.taskNos[i], b.datas[i]} {
				if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
					t.Fatalf("%q cannot be stored", v)
				}
			}
			if !json.Valid([]byte(b.datas[i])) {
				t.Fatalf("data %q is not JSON", b.datas[i])
			}
		}
	})
}
