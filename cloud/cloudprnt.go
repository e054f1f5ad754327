package cloud

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/storeprint/storeprint"
)

// Star CloudPRNT printers that poll the cloud.
//
// A small store without a gateway box can have its cloud orders (delivery,
// online) printed by Star printers that poll the cloud at
// /v1/cloudprnt/{store_id}, each with a token of its own (its CloudPRNT
// password). The tasks, receipts, alerts and dedup are the same as a
// gateway's: one task per order and station, an attempt per ticket handed
// out, a prepared receipt before its first byte, submitted once written,
// printed on the printer's confirmation (DELETE code 200 OK), and a
// ticket handed out and not confirmed within the printer's confirm
// timeout flagged attention_required (uncertain) for a person.

// CloudPRNTTokenPrefix starts a CloudPRNT printer's token.
const CloudPRNTTokenPrefix = "spc1."

// DefaultCloudPRNTConfirmTimeout is how long a handed-out ticket may go
// unconfirmed before it is uncertain, unless the printer says otherwise.
const DefaultCloudPRNTConfirmTimeout = 30 * time.Second

// CloudPRNTPrinter is a Star printer that polls the cloud for a store.
type CloudPRNTPrinter struct {
	StoreID        string        `json:"store_id"`
	PrinterID      string        `json:"printer_id"`
	MAC            string        `json:"mac"`
	Stations       []string      `json:"stations"` // the stations it prints; empty: all of the store's
	ConfirmTimeout time.Duration `json:"-"`
	CreatedAt      time.Time     `json:"created_at"`
}

// Validate checks the printer's fields and puts its MAC address in the
// form printers send it.
func (p *CloudPRNTPrinter) Validate() error {
	if err := validID("store_id", p.StoreID); err != nil {
		return err
	}
	if err := validID("printer_id", p.PrinterID); err != nil {
		return err
	}
	hw, err := net.ParseMAC(strings.TrimSpace(p.MAC))
	if err != nil || len(hw) != 6 {
		return storeprint.Errorf(storeprint.EINVALID, "mac %q is not a MAC address like 00:11:62:1d:9a:b7", p.MAC)
	}
	p.MAC = hw.String()
	if p.Stations == nil {
		p.Stations = []string{}
	}
	for _, s := range p.Stations {
		if err := validID("station", s); err != nil {
			return err
		}
	}
	if p.ConfirmTimeout == 0 {
		p.ConfirmTimeout = DefaultCloudPRNTConfirmTimeout
	}
	if p.ConfirmTimeout < time.Second || p.ConfirmTimeout > 10*time.Minute {
		return storeprint.Errorf(storeprint.EINVALID, "confirm_timeout %s is not between 1s and 10m", p.ConfirmTimeout)
	}
	return nil
}

// NewCloudPRNTToken returns a new token for a CloudPRNT printer of a store.
func NewCloudPRNTToken(storeID string) string {
	return CloudPRNTTokenPrefix + b64.EncodeToString([]byte(storeID)) + "." + secret()
}

// CloudPRNTJobToken is the jobToken of a ticket handed to a printer: the
// task and the attempt its fetch starts.
func CloudPRNTJobToken(taskNo string, attempt int) string {
	return taskNo + "~" + strconv.Itoa(attempt)
}

// ParseCloudPRNTJobToken reads a jobToken.
func ParseCloudPRNTJobToken(token string) (taskNo string, attempt int, err error) {
	taskNo, n, ok := strings.Cut(token, "~")
	attempt, aerr := strconv.Atoi(n)
	if !ok || aerr != nil || attempt < 1 || !validTaskNo(taskNo) {
		return "", 0, storeprint.Errorf(storeprint.ENOTFOUND, "no print job %q", token)
	}
	return taskNo, attempt, nil
}

func validTaskNo(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// CloudPRNTPoll is what a printer's poll says.
type CloudPRNTPoll struct {
	StatusCode string                  // its printer status code
	State      storeprint.PrinterState // what the code means
	Printing   bool                    // printingInProgress
}

// CloudPRNTService serves the CloudPRNT printers of stores without a
// gateway.
type CloudPRNTService interface {
	// CreateCloudPRNTPrinter registers a printer (admin only) and
	// returns its token, shown once; only its hash is kept. A store with
	// a gateway in service is ECONFLICT: its gateway prints its orders.
	CreateCloudPRNTPrinter(ctx context.Context, p *CloudPRNTPrinter, note Note) (token string, err error)

	// AuthenticateCloudPRNT returns the printer of a store with the MAC
	// address mac, if token is its token. An unknown printer is
	// ENOTFOUND, a wrong token EUNAUTHORIZED.
	AuthenticateCloudPRNT(ctx context.Context, storeID, mac, token string) (*CloudPRNTPrinter, error)

	// PollCloudPRNT records a poll (the printer's state, that it is
	// there), flags the tickets it was handed and did not confirm in time
	// (or reports failed), and returns the jobToken of the next ticket
	// for it, or "" when there is none or it cannot print now.
	PollCloudPRNT(ctx context.Context, p *CloudPRNTPrinter, poll CloudPRNTPoll) (token string, err error)

	// FetchCloudPRNT hands out the ticket of a jobToken: it starts the
	// attempt and writes its prepared receipt, and returns the ticket's
	// bytes (text/plain). A ticket no longer to be had is ENOTFOUND.
	FetchCloudPRNT(ctx context.Context, p *CloudPRNTPrinter, token string) ([]byte, error)

	// FetchedCloudPRNT records that the ticket's bytes were written (the
	// submitted receipt), or not (err): the attempt stays open until its
	// confirmation or its timeout.
	FetchedCloudPRNT(ctx context.Context, p *CloudPRNTPrinter, token string, err error) error

	// ConfirmCloudPRNT takes the printer's confirmation of a ticket: code
	// 2xx printed (done), 5xx not printed (back to the queue), anything
	// else uncertain (attention_required). A ticket not in flight is
	// ENOTFOUND.
	ConfirmCloudPRNT(ctx context.Context, p *CloudPRNTPrinter, token, code string) error
}

// TicketText renders a cloud order's ticket for one station as plain text
// (what a CloudPRNT printer gets as text/plain, printed and cut): the
// store, the station, order, table and time, the station's items with
// their notes, the order's note, and the task_no alone as the last line.
// Control characters never reach the printer.
func TicketText(storeID string, o *storeprint.Order, station, taskNo string, acceptedAt time.Time, width int) []byte {
	if width == 0 {
		width = 48
	}
	var b strings.Builder
	line := func(s string) {
		b.WriteString(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(s, "?")))
		b.WriteByte('\n')
	}
	line(storeID)
	line(station)
	line("Order: " + o.OrderID)
	if o.Table != "" {
		line("Table: " + o.Table)
	}
	line("Time: " + acceptedAt.UTC().Format("2006-01-02 15:04:05") + " UTC")
	rule := strings.Repeat("-", width)
	line(rule)
	for _, it := range o.Items {
		if it.Station != station {
			continue
		}
		line(fmt.Sprintf("%d x %s", it.Qty, it.Name))
		if it.Note != "" {
			line("  - " + it.Note)
		}
	}
	if o.Note != "" {
		line("Note: " + o.Note)
	}
	line(rule)
	line(taskNo)
	return []byte(b.String())
}
