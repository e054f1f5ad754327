package storeprint_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
				if r < 0x20 || r == 0x7f {
					t.Fatalf("control character accepted: %+v", it)
				}
			}
		}
	})
}

func isInvalid(err error) bool {
	var e *storeprint.InvalidError
	return errors.As(err, &e)
}
