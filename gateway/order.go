package gateway

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
	MaxItems      = 200
	MaxNameLen    = 200 // characters in a dish name
	MaxNoteLen    = 500 // characters in an order or item note
	MaxTableLen   = 64
	MaxQty        = 9999
	MaxRequestLen = 1 << 20 // 1 MiB body limit of the POS API
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

// ValidID reports whether s is a valid order_id or station name: 1-64
// characters of letters, digits, '-', '_' and '.'.
func ValidID(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// Validate checks the order's shape. Station existence is checked by the
// caller, who knows the configuration.
func (o *Order) Validate() error {
	if o.OrderID == "" {
		return Errorf(EINVALID, "order_id is required")
	}
	if !ValidID(o.OrderID) {
		return Errorf(EINVALID, "order_id %q must be 1-64 characters of letters, digits, '-', '_' or '.'", o.OrderID)
	}
	if err := checkText("table", o.Table, MaxTableLen); err != nil {
		return err
	}
	if err := checkText("note", o.Note, MaxNoteLen); err != nil {
		return err
	}
	if len(o.Items) == 0 {
		return Errorf(EINVALID, "items must not be empty")
	}
	if len(o.Items) > MaxItems {
		return Errorf(EINVALID, "items: at most %d items per order", MaxItems)
	}
	for i, it := range o.Items {
		if strings.TrimSpace(it.Name) == "" {
			return Errorf(EINVALID, "items[%d].name is required", i)
		}
		if err := checkText("items[%d].name", it.Name, MaxNameLen, i); err != nil {
			return err
		}
		if err := checkText("items[%d].note", it.Note, MaxNoteLen, i); err != nil {
			return err
		}
		if it.Qty < 1 || it.Qty > MaxQty {
			return Errorf(EINVALID, "items[%d].qty must be between 1 and %d", i, MaxQty)
		}
		if it.Station == "" {
			return Errorf(EINVALID, "items[%d].station is required", i)
		}
		if !ValidID(it.Station) {
			return Errorf(EINVALID, "items[%d].station %q must be 1-64 characters of letters, digits, '-', '_' or '.'", i, it.Station)
		}
	}
	return nil
}

func checkText(field, s string, max int, args ...any) error {
	name := field
	if len(args) > 0 {
		name = fmt.Sprintf(field, args...)
	}
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8", name)
	}
	if utf8.RuneCountInString(s) > max {
		return Errorf(EINVALID, "%s is longer than %d characters", name, max)
	}
	for _, r := range s {
		// Control characters would reach the printer as commands.
		if r < 0x20 || r == 0x7f {
			return Errorf(EINVALID, "%s contains a control character", name)
		}
	}
	return nil
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

// TaskNo is the idempotency key of one station's ticket of one order.
func TaskNo(orderID, station string) string {
	return "order_" + orderID + "_station_" + station
}
