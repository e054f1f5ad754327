package storeprint_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
)

func TestTypeError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"order_id":"a","items":[{"name":"x","qty":"two","station":"hot"}]}`, "items[0].qty must be an integer, not a string"},
		{`{"order_id":"a","items":[{"name":"x","qty":1,"station":"hot"},{"name":"y","qty":1.5,"station":"hot"}]}`, "items[1].qty must be an integer, not 1.5"},
		{` {"order_id":"a","items":[{},{"note":{"a":[1,{"b":2}]}},{"name":["x"]}]}`, "items[1].note must be a string, not an object"},
		{`{"order_id":"a","items":[{"note":"n"},{"name":"y"},{"name":["x"]}]}`, "items[2].name must be a string, not a list"},
		{`{"order_id":"a","items":{}}`, "items must be a list, not an object"},
		{`{"order_id":5,"items":[]}`, "order_id must be a string, not a number"},
		{`{"order_id":"a","items":[{"name":"x","qty":1,"station":"hot","note":true}]}`, "items[0].note must be a string, not true or false"},
		{`[1,2]`, "the body must be a JSON object, not a list"},
	} {
		var o storeprint.Order
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(tc.body), &o); !errors.As(err, &te) {
			t.Fatalf("%s: got %v, want a type error", tc.body, err)
		}
		if got := storeprint.TypeError([]byte(tc.body), te).Error(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestUnknownField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"order_id":"a","tabel":"A1","items":[]}`, `tabel: unknown field "tabel"`},
		{`{"order_id":"a","items":[{"name":"x","qty":1,"station":"hot"},{"name":"y","qty":1,"station":"hot","price":3}]}`, `items[1].price: unknown field "price"`},
		{`{"order_id":"a","note":"x","items":[{"name":"x","qty":1,"station":"hot","extra":{"a":1}}]}`, `items[0].extra: unknown field "extra"`},
	} {
		dec := json.NewDecoder(strings.NewReader(tc.body))
		dec.DisallowUnknownFields()
		var o storeprint.Order
		err := dec.Decode(&o)
		if err == nil {
			t.Fatalf("%s: decoded", tc.body)
		}
		if got := storeprint.UnknownField([]byte(tc.body), err).Error(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestCheckBodyUTF8(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{"", `{"name":"宫保鸡丁"}`, "{\"note\":\"\u00e9\"}"} {
			if err := storeprint.CheckBodyUTF8([]byte(body)); err != nil {
				t.Errorf("%q: got %v, want nil", body, err)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			body string
			at   int
		}{
			{"\xff", 0},
			{`{"name":"宫` + "\xe4\xbf" + `"}`, 12},
			{`{"a":"b"}` + "\xc0\xaf", 9},
		} {
			err := storeprint.CheckBodyUTF8([]byte(tc.body))
			want := fmt.Sprintf("request body is not valid UTF-8 (at byte %d): text is refused, not altered", tc.at)
			if err == nil || storeprint.ErrorCode(err) != storeprint.EINVALID || storeprint.ErrorMessage(err) != want {
				t.Errorf("%q: got %v (%s), want %s %q", tc.body, err, storeprint.ErrorCode(err), storeprint.EINVALID, want)
			}
		}
	})
}
