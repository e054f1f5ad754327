package storeprint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Limits on an order's content. They keep one ticket printable and one
// request cheap to store.
const (
	MaxItems       = 200
	MaxNameLen     = 200 // characters in a dish name
	MaxNoteLen     = 500 // characters in an order or item note
	MaxTableLen    = 64
	MaxQty         = 9999
	MaxRequestLen  = 1 << 20 // 1 MiB body limit of the POS API
	MaxOperatorLen = 64      // characters in the name of the person who acts
	MaxReasonLen   = 500     // characters in why they act
)

// Order is what the POS posts: one order, items spread over stations.
type Order struct {
	OrderID string `json:"order_id"`
	Table   string `json:"table,omitempty"`
	Note    string `json:"note,omitempty"`
	Items   []Item `json:"items"`
}

// Item is one line of an order.
type Item struct {
	Name    string `json:"name"`
	Qty     int    `json:"qty"`
	Station string `json:"station"`
	Note    string `json:"note,omitempty"`
}

// Validate checks the order's shape. Station existence is checked by the
// caller, who knows the configuration.
func (o *Order) Validate() error {
	if o.OrderID == "" {
		return Invalidf("order_id is required")
	}
	if err := CheckID("order_id", o.OrderID); err != nil {
		return err
	}
	if err := CheckText("table", o.Table, MaxTableLen); err != nil {
		return err
	}
	if err := CheckText("note", o.Note, MaxNoteLen); err != nil {
		return err
	}
	if len(o.Items) == 0 {
		return Invalidf("items must not be empty")
	}
	if len(o.Items) > MaxItems {
		return Invalidf("items: at most %d items per order", MaxItems)
	}
	for i, it := range o.Items {
		if strings.TrimSpace(it.Name) == "" {
			return Invalidf("items[%d].name is required", i)
		}
		if err := CheckText("items[%d].name", it.Name, MaxNameLen, i); err != nil {
			return err
		}
		if err := CheckText("items[%d].note", it.Note, MaxNoteLen, i); err != nil {
			return err
		}
		if it.Qty < 1 || it.Qty > MaxQty {
			return Invalidf("items[%d].qty must be between 1 and %d", i, MaxQty)
		}
		if it.Station == "" {
			return Invalidf("items[%d].station is required", i)
		}
		if err := CheckID(fmt.Sprintf("items[%d].station", i), it.Station); err != nil {
			return err
		}
	}
	return nil
}

// CheckText checks free text that goes on paper: valid UTF-8, at most max
// characters, no control characters. field may hold a format for args.
func CheckText(field, s string, max int, args ...any) error {
	name := field
	if len(args) > 0 {
		name = fmt.Sprintf(field, args...)
	}
	if !utf8.ValidString(s) {
		return Invalidf("%s is not valid UTF-8", name)
	}
	if utf8.RuneCountInString(s) > max {
		return Invalidf("%s is longer than %d characters", name, max)
	}
	for _, r := range s {
		// Control characters would reach the printer as commands.
		if r < 0x20 || r == 0x7f {
			return Invalidf("%s contains a control character", name)
		}
		if IsBidiControl(r) {
			return Invalidf("%s contains the bidirectional control character U+%04X, which would reorder what people read", name, r)
		}
	}
	return nil
}

// IsBidiControl reports whether r is a bidirectional embedding, override
// or isolate (U+202A-U+202E, U+2066-U+2069): text holding one is refused,
// as a right-to-left override in an item's name would reorder what a cook
// reads.
func IsBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Stations returns the order's station names, sorted, each once.
func (o *Order) Stations() []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range o.Items {
		if !seen[it.Station] {
			seen[it.Station] = true
			out = append(out, it.Station)
		}
	}
	sort.Strings(out)
	return out
}

// ItemsFor returns the items of one station, in order.
func (o *Order) ItemsFor(station string) []Item {
	var out []Item
	for _, it := range o.Items {
		if it.Station == station {
			out = append(out, it)
		}
	}
	return out
}

// Digest is a stable fingerprint of the order's content, used to tell a
// replay (same content) from a conflicting reuse of an order_id.
func (o *Order) Digest() string {
	b, _ := json.Marshal(o) // struct of strings and ints: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
