package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway"
)

func TestOrder_Validate(t *testing.T) {
	t.Parallel()
	ok := func() *gateway.Order {
		return &gateway.Order{OrderID: "A-1.x_2", Table: "外卖", Items: []gateway.Item{{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "少辣"}}}
	}
	t.Run("OK", func(t *testing.T) {
		if err := ok().Validate(); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		change func(*gateway.Order)
		want   string
	}{
		{"NoOrderID", func(o *gateway.Order) { o.OrderID = "" }, "order_id"},
		{"LongOrderID", func(o *gateway.Order) { o.OrderID = strings.Repeat("a", 65) }, "order_id"},
		{"SlashInOrderID", func(o *gateway.Order) { o.OrderID = "a/b" }, "order_id"},
		{"NoItems", func(o *gateway.Order) { o.Items = nil }, "items"},
		{"NoName", func(o *gateway.Order) { o.Items[0].Name = " " }, "items[0].name"},
		{"ZeroQty", func(o *gateway.Order) { o.Items[0].Qty = 0 }, "items[0].qty"},
		{"BadStation", func(o *gateway.Order) { o.Items[0].Station = "hot line" }, "items[0].station"},
		{"ControlChar", func(o *gateway.Order) { o.Items[0].Note = "a\x1b@b" }, "control character"},
		{"BadUTF8", func(o *gateway.Order) { o.Note = "\xff" }, "UTF-8"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			o := ok()
			tc.change(o)
			err := o.Validate()
			if gateway.ErrorCode(err) != gateway.EINVALID || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want invalid naming %q", err, tc.want)
			}
		})
	}
}

func TestOrder_Digest(t *testing.T) {
	t.Parallel()
	a := &gateway.Order{OrderID: "1", Items: []gateway.Item{{Name: "x", Qty: 1, Station: "hot"}}}
	b := &gateway.Order{OrderID: "1", Items: []gateway.Item{{Name: "x", Qty: 2, Station: "hot"}}}
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
		var o gateway.Order
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			return
		}
		if err := o.Validate(); err != nil {
			if gateway.ErrorCode(err) != gateway.EINVALID {
				t.Fatalf("got code %s for bad input, want invalid", gateway.ErrorCode(err))
			}
			return
		}
		if !gateway.ValidID(o.OrderID) || len(o.Items) == 0 {
			t.Fatalf("accepted %+v", o)
		}
		for _, s := range o.Stations() {
			if !gateway.ValidID(s) || len(o.ItemsFor(s)) == 0 {
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
