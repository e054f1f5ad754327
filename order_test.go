package storeprint_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

func TestOrder_Validate(t *testing.T) {
	t.Parallel()
	ok := func() *storeprint.Order {
		return &storeprint.Order{OrderID: "A-1.x_2", Table: "外卖", Items: []storeprint.Item{{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "少辣"}}}
	}
	t.Run("OK", func(t *testing.T) {
		if err := ok().Validate(); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		change func(*storeprint.Order)
		want   string
	}{
		{"NoOrderID", func(o *storeprint.Order) { o.OrderID = "" }, "order_id"},
		{"LongOrderID", func(o *storeprint.Order) { o.OrderID = strings.Repeat("a", 65) }, "order_id"},
		{"SlashInOrderID", func(o *storeprint.Order) { o.OrderID = "a/b" }, "order_id"},
		{"NoItems", func(o *storeprint.Order) { o.Items = nil }, "items"},
		{"NoName", func(o *storeprint.Order) { o.Items[0].Name = " " }, "items[0].name"},
		{"ZeroQty", func(o *storeprint.Order) { o.Items[0].Qty = 0 }, "items[0].qty"},
		{"BadStation", func(o *storeprint.Order) { o.Items[0].Station = "hot line" }, "items[0].station"},
		{"ControlChar", func(o *storeprint.Order) { o.Items[0].Note = "a\x1b@b" }, "control character"},
		{"BadUTF8", func(o *storeprint.Order) { o.Note = "\xff" }, "UTF-8"},
		{"DotOrderID", func(o *storeprint.Order) { o.OrderID = "." }, "order_id"},
		{"DotDotOrderID", func(o *storeprint.Order) { o.OrderID = ".." }, "order_id"},
		{"DotDotStation", func(o *storeprint.Order) { o.Items[0].Station = ".." }, "items[0].station"},
		{"RightToLeftOverride", func(o *storeprint.Order) { o.Items[0].Name = "鸡\u202e丁" }, "items[0].name contains the bidirectional control character U+202E"},
		{"LeftToRightEmbedding", func(o *storeprint.Order) { o.Items[0].Note = "\u202aa" }, "items[0].note"},
		{"FirstStrongIsolate", func(o *storeprint.Order) { o.Table = "\u2068A1" }, "table"},
		{"PopIsolate", func(o *storeprint.Order) { o.Note = "x\u2069" }, "note"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			o := ok()
			tc.change(o)
			err := o.Validate()
			if !isInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want invalid naming %q", err, tc.want)
			}
		})
	}
}

func TestOrder_Digest(t *testing.T) {
	t.Parallel()
	a := &storeprint.Order{OrderID: "1", Items: []storeprint.Item{{Name: "x", Qty: 1, Station: "hot"}}}
	b := &storeprint.Order{OrderID: "1", Items: []storeprint.Item{{Name: "x", Qty: 2, Station: "hot"}}}
	if a.Digest() == b.Digest() {
		t.Fatal("different content, same digest")
	}
	c := *a
	if a.Digest() != c.Digest() {
		t.Fatal("same content, different digest")
	}
}

// FuzzOrder feeds the POS API's body parser and validation arbitrary input:
// no panic, and whatever it accepts is printable and well-formed.
func FuzzOrder(f *testing.F) {
	f.Add(`{"order_id":"1","table":"A1","items":[{"name":"宫保鸡丁","qty":1,"station":"hot","note":"少辣"}]}`)
	f.Add(`{"order_id":"","items":[]}`)
	f.Add(`{"order_id":"x","items":[{"name":"\u001b@","qty":1,"station":"hot"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var o storeprint.Order
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			return
		}
		if err := o.Validate(); err != nil {
			if !isInvalid(err) {
				t.Fatalf("got %v for bad input, want an *InvalidError", err)
			}
			return
		}
		if !storeprint.ValidID(o.OrderID) || len(o.Items) == 0 {
			t.Fatalf("accepted %+v", o)
		}
		for _, s := range o.Stations() {
			if !storeprint.ValidID(s) || len(o.ItemsFor(s)) == 0 {
				t.Fatalf("bad station %q in %+v", s, o)
			}
		}
		for _, it := range o.Items {
			for _, r := range it.Name + it.Note + o.Note + o.Table {
				if r < 0x20 || r == 0x7f || storeprint.IsBidiControl(r) {
					t.Fatalf("control character accepted: %+v", it)
				}
			}
		}
	})
}

// FuzzCheckID: an id accepted is 1-64 of its characters and neither "."
// nor ".."; whatever is refused is an *InvalidError naming the field.
func FuzzCheckID(f *testing.F) {
	for _, s := range []string{"a", ".", "..", "...", "a.b", "", "\x00", "\xff", strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := storeprint.CheckID("store_id", s)
		if (err == nil) != storeprint.ValidID(s) {
			t.Fatalf("CheckID and ValidID disagree on %q: %v", s, err)
		}
		if err != nil {
			if !isInvalid(err) || !strings.Contains(err.Error(), "store_id") {
				t.Fatalf("got %v for %q, want an *InvalidError naming store_id", err, s)
			}
			return
		}
		if s == "." || s == ".." || len(s) > storeprint.MaxIDLen || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			t.Fatalf("accepted %q", s)
		}
	})
}

// FuzzCheckText: text accepted is valid UTF-8 with no control or
// bidirectional control character; text refused is refused naming its
// field.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"宫保鸡丁", "a\u202eb", "\u2066x\u2069", "\xff", "a\x1bb", "\u200f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := storeprint.CheckText("items[%d].name", s, 200, 3)
		if err != nil {
			if !isInvalid(err) || !strings.HasPrefix(err.Error(), "items[3].name") {
				t.Fatalf("got %v for %q, want an *InvalidError naming items[3].name", err, s)
			}
			return
		}
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > 200 {
			t.Fatalf("accepted %q", s)
		}
		for _, r := range s {
			if r < 0x20 || r == 0x7f || storeprint.IsBidiControl(r) {
				t.Fatalf("accepted %q with U+%04X", s, r)
			}
		}
	})
}

func isInvalid(err error) bool {
	var e *storeprint.InvalidError
	return errors.As(err, &e)
}
