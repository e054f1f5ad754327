package badger

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A task kept compact reads back as its JSON would: the same task, times
// in the same zones; one the compact form cannot hold stays JSON.
func TestCompactTask_SameAsJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := drawTask(t)
		if rapid.Bool().Draw(t, "compactable") {
			compactable(st)
		}
		js, err := appendStoredTask([]byte{formatVersion}, st)
		compact, ok := appendCompactTask(nil, st)
		if err != nil {
			if ok {
				t.Fatalf("JSON refuses the task (%v), the compact form took it", err)
			}
			return
		}
		var want storedTask
		if err := decodeTask(js, &want); err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		var got storedTask
		if err := decodeTask(compact, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("\n got  %+v\n want %+v", got, want)
		}
		for n := 0; n < len(compact); n++ {
			if err := decodeTask(compact[:n], &got); err == nil {
				t.Fatalf("cut to %d of %d bytes: got no error", n, len(compact))
			}
		}
	})
}

// compactable makes a drawn task one the compact form holds, as the
// gateway's are: valid UTF-8, times in zones of whole minutes.
func compactable(st *storedTask) {
	t := &st.Task
	for _, p := range []*string{&t.TaskNo, &t.OrderID, &t.Station, &t.PrinterID, &t.FirstPrinter, (*string)(&t.Status),
		&t.LastError, (*string)(&t.Reason), (*string)(&t.Source), &t.Table, &t.Note, &t.CopyOf, &t.BackupFrom, &t.LeaseToken} {
		*p = strings.ToValidUTF8(*p, "?")
	}
	for i := range t.Items {
		it := &t.Items[i]
		it.Name, it.Station, it.Note = strings.ToValidUTF8(it.Name, "?"), strings.ToValidUTF8(it.Station, "?"), strings.ToValidUTF8(it.Note, "?")
	}
	for _, p := range []*time.Time{&t.CreatedAt, &t.NextAt, t.PrintedAt, &t.UpdatedAt, &t.LeaseExpires, t.RecalledAt} {
		if p == nil {
			continue
		}
		if _, off := p.Zone(); off%60 != 0 {
			*p = p.UTC()
		}
	}
}

// The compact form knows every field of a task: one added must be added
// to it too (and to appendStoredTask, see TestAppendJSON_Fields).
func TestCompactTask_Fields(t *testing.T) {
	t.Parallel()
	if n := len(reflect.VisibleFields(reflect.TypeFor[gateway.Task]())); n != 29 {
		t.Errorf("gateway.Task has %d fields, appendCompactTask and decodeTask know 29: add the new ones there and here", n)
	}
}

// A ticket's task as the store writes it: compact, well under half its JSON.
func TestCompactTask_Size(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("CST", 8*3600))
	st := &storedTask{Task: gateway.Task{TaskNo: "A0000001_hot", OrderID: "A0000001", Station: "hot", PrinterID: "hot-1", FirstPrinter: "hot-1",
		Status: storeprint.StatusPrinting, Attempt: 1, Source: storeprint.SourcePOS, Table: "T12",
		Items: []storeprint.Item{{Name: "宫保鸡丁", Qty: 1, Station: "hot", Note: "少辣"}, {Name: "鱼香肉丝", Qty: 2, Station: "hot"}},
		Seq:   7, Version: 2, CreatedAt: at, NextAt: at, UpdatedAt: at,
		LeaseToken: "0123456789abcdef0123456789abcdef", LeaseExpires: at.Add(30 * time.Second)}, EventSeq: 12}
	js, err := appendStoredTask([]byte{formatVersion}, st)
	if err != nil {
		t.Fatal(err)
	}
	compact, ok := appendCompactTask(nil, st)
	if !ok {
		t.Fatal("not compact")
	}
	if len(compact) > len(js)*2/5 {
		t.Errorf("got %d bytes compact, want at most %d (two fifths of its %d bytes of JSON)", len(compact), len(js)*2/5, len(js))
	}
}
