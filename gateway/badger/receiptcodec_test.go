package badger

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A receipt kept compact reads back as its JSON would; one the compact
// form cannot hold stays JSON.
func TestCompactReceipt_SameAsJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := jsonString()
		fix := rapid.Bool().Draw(t, "compactable")
		str := func(label string) string {
			v := s.Draw(t, label)
			if fix {
				v = strings.ToValidUTF8(v, "?")
			}
			return v
		}
		tm := func(label string) time.Time {
			v := jsonTime().Draw(t, label)
			if _, off := v.Zone(); fix && off%60 != 0 {
				v = v.UTC()
			}
			return v
		}
		opt := func(label string) *time.Time {
			if rapid.Bool().Draw(t, label+" nil") {
				return nil
			}
			v := tm(label)
			return &v
		}
		digest := str("digest")
		if rapid.Bool().Draw(t, "hex") {
			digest = "9f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271"
		}
		r := &gateway.Receipt{TaskNo: str("task_no"), Attempt: rapid.IntRange(-3, 1<<40).Draw(t, "attempt"),
			State: storeprint.ReceiptState(str("state")), PrinterID: str("printer"), PayloadSHA256: digest,
			ProcessID: str("process"), JobID: str("job"), Reprint: rapid.Bool().Draw(t, "reprint"), BackupFrom: str("backup"),
			Error: str("error"), Settled: str("settled"), ConfirmedBy: storeprint.Confirm(str("confirmed_by")),
			PreparedAt: tm("prepared"), SubmittedAt: opt("submitted"), PrintedAt: opt("printed"), ConfirmedAt: opt("confirmed")}
		js, err := json.Marshal(r)
		compact, ok := appendCompactReceipt(nil, r)
		if err != nil {
			if ok {
				t.Fatalf("JSON refuses the receipt (%v), the compact form took it", err)
			}
			return
		}
		var want gateway.Receipt
		if err := decodeReceipt(append([]byte{formatVersion}, js...), &want); err != nil {
			t.Fatal(err)
		}
		if fix && !ok {
			t.Fatalf("a receipt the compact form should hold stays JSON: %+v", r)
		}
		if !ok {
			return
		}
		var got gateway.Receipt
		if err := decodeReceipt(compact, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("\n got  %+v\n want %+v", got, want)
		}
		for n := 0; n < len(compact); n++ {
			if err := decodeReceipt(compact[:n], &got); err == nil {
				t.Fatalf("cut to %d of %d bytes: got no error", n, len(compact))
			}
		}
	})
}
