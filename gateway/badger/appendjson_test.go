package badger

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode"

	"pgregory.net/rapid"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/sync"
)

// The hand-written encoders know every field of these types: one added
// must be added to them too.
func TestAppendJSON_Fields(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{{gateway.Task{}, 29}, {storeprint.Item{}, 4}, {sync.TaskEvent{}, 15}, {sync.Event{}, 5}} {
		if n := len(reflect.VisibleFields(reflect.TypeOf(c.v))) - unexported(reflect.TypeOf(c.v)); n != c.want {
			t.Errorf("%T has %d exported fields, the encoder (gateway/badger/appendjson.go, sync/append.go) knows %d: add the new ones there and here", c.v, n, c.want)
		}
	}
}

// unexported counts the fields encoding/json leaves out.
func unexported(t reflect.Type) int {
	n := 0
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() {
			n++
		}
	}
	return n
}

// jsonString draws strings that need every kind of escape.
func jsonString() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Just(""),
		rapid.SampledFrom([]string{"A1", "宫保鸡丁", "少辣", "<b>&amp;</b>", "a\"b\\c", "\u2028\u2029", "\x00\x1f\x7f", "\xff\xfe", "tab\tnl\nbs\bff\f"}),
		rapid.String(),
		rapid.StringOf(rapid.RuneFrom(nil, unicode.Han, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Latin)),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) }),
	)
}

func jsonTime() *rapid.Generator[time.Time] {
	return rapid.Custom(func(t *rapid.T) time.Time {
		if rapid.Bool().Draw(t, "zero") {
			return time.Time{}
		}
		sec := rapid.Int64Range(-62135596800-1000, 253402300799+1000).Draw(t, "sec")
		nsec := rapid.Int64Range(0, 999999999).Draw(t, "nsec")
		if rapid.Bool().Draw(t, "round") {
			nsec = nsec / 1000000 * 1000000
		}
		loc := rapid.SampledFrom([]*time.Location{time.UTC, time.FixedZone("", 8*3600), time.FixedZone("", -(3*3600 + 30*60)), time.FixedZone("x", 45)}).Draw(t, "loc")
		return time.Unix(sec, nsec).In(loc)
	})
}

func optTime() *rapid.Generator[*time.Time] {
	return rapid.Custom(func(t *rapid.T) *time.Time {
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		v := jsonTime().Draw(t, "time")
		return &v
	})
}

func drawTask(t *rapid.T) *storedTask {
	s := jsonString()
	n := rapid.IntRange(-3, 1<<40)
	var items []storeprint.Item
	if !rapid.Bool().Draw(t, "nil items") {
		items = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) storeprint.Item {
			return storeprint.Item{Name: s.Draw(t, "name"), Qty: n.Draw(t, "qty"), Station: s.Draw(t, "station"), Note: s.Draw(t, "note")}
		}), 0, 4).Draw(t, "items")
	}
	return &storedTask{Task: gateway.Task{
		TaskNo: s.Draw(t, "task_no"), OrderID: s.Draw(t, "order_id"), Station: s.Draw(t, "station"), PrinterID: s.Draw(t, "printer"),
		FirstPrinter: s.Draw(t, "first"), Status: storeprint.Status(s.Draw(t, "status")), Attempt: n.Draw(t, "attempt"),
		Failures: n.Draw(t, "failures"), LastError: s.Draw(t, "last_error"), Reason: storeprint.Reason(s.Draw(t, "reason")),
		Source: storeprint.Source(s.Draw(t, "source")), Table: s.Draw(t, "table"), Note: s.Draw(t, "note"), Items: items,
		CopyOf: s.Draw(t, "copy_of"), Reprint: rapid.Bool().Draw(t, "reprint"), Copies: n.Draw(t, "copies"),
		AutoReprints: n.Draw(t, "auto"), StaleOK: rapid.Bool().Draw(t, "stale_ok"), BackupFrom: s.Draw(t, "backup_from"),
		Seq: rapid.Uint64().Draw(t, "seq"), Version: rapid.Uint64().Draw(t, "version"), CreatedAt: jsonTime().Draw(t, "created"),
		NextAt: jsonTime().Draw(t, "next"), PrintedAt: optTime().Draw(t, "printed"), UpdatedAt: jsonTime().Draw(t, "updated"),
		LeaseToken: s.Draw(t, "lease"), LeaseExpires: jsonTime().Draw(t, "expires"), RecalledAt: optTime().Draw(t, "recalled"),
	}, EventSeq: rapid.Uint64Range(0, 3).Draw(t, "event_seq")}
}

// same checks that got is what encoding/json writes for v, or that both
// refuse it.
func same(t *rapid.T, v any, got []byte, err error) {
	want, werr := json.Marshal(v)
	if (err != nil) != (werr != nil) {
		t.Fatalf("error %v, encoding/json: %v", err, werr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("\n got  %s\n want %s", got, want)
	}
}

func TestAppendJSON_SameAsEncodingJSON(t *testing.T) {
	t.Run("task", rapid.MakeCheck(func(t *rapid.T) {
		st := drawTask(t)
		got, err := appendStoredTask(nil, st)
		same(t, st, got, err)
	}))
	t.Run("task event", rapid.MakeCheck(func(t *rapid.T) {
		e := drawTask(t).Event()
		got, err := sync.AppendTaskEvent(nil, &e)
		same(t, e, got, err)
	}))
	t.Run("event", rapid.MakeCheck(func(t *rapid.T) {
		e := drawTask(t).Event()
		data, err := json.Marshal(e)
		if err != nil {
			data = json.RawMessage(`{"refused":true}`) // a time encoding/json refuses: other data
		}
		if rapid.Bool().Draw(t, "nil data") {
			data = nil
		}
		ev := &sync.Event{Seq: rapid.Uint64().Draw(t, "seq"), Kind: jsonString().Draw(t, "kind"), TaskNo: jsonString().Draw(t, "task_no"), At: jsonTime().Draw(t, "at"), Data: data}
		got, err := sync.AppendEvent(nil, ev)
		same(t, ev, got, err)
	}))
}
