package cloud

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// Store is one restaurant of a tenant, with one gateway in service.
type Store struct {
	ID        string    `json:"store_id"`
	TenantID  string    `json:"tenant_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks the store's fields.
func (s *Store) Validate() error {
	if err := validID("store_id", s.ID); err != nil {
		return err
	}
	if err := validID("tenant_id", s.TenantID); err != nil {
		return err
	}
	return validName(s.Name)
}

// StoreStatus is a store as the HQ dashboard shows it.
type StoreStatus struct {
	Store
	Online     bool       `json:"online"` // a gateway of the store has a live sync link
	LastSeen   *time.Time `json:"last_seen"`
	Gateways   []*Gateway `json:"gateways"`
	Printers   []*Printer `json:"printers"`
	OpenAlerts int        `json:"open_alerts"` // alerts that need a person
	// AcknowledgedAlerts counts the alerts a person took on that are
	// neither resolved nor expired.
	AcknowledgedAlerts int `json:"acknowledged_alerts"`
}

// Printer is a store's printer as its gateway last reported it.
type Printer struct {
	ID        string                  `json:"printer_id"`
	Status    storeprint.PrinterState `json:"status"`
	Stations  []string                `json:"stations"`
	Backup    string                  `json:"backup"`
	Failover  bool                    `json:"failover"`       // its stations print on the backup
	Word      storeprint.Word         `json:"word,omitempty"` // its trouble, when it answers ready and is in trouble all the same
	UpdatedAt time.Time               `json:"updated_at"`
	// Kind is printer or display (a kitchen screen: ready while it
	// speaks, offline while it is silent). Open, Shown and Stale count a
	// display's tickets not bumped: all, on the screen, and past their
	// station's stale_after.
	Kind  storeprint.TargetKind `json:"kind"`
	Open  int                   `json:"open"`
	Shown int                   `json:"shown"`
	Stale int                   `json:"stale"`
}

// MaxDisplayTickets bounds the open tickets a display may report.
const MaxDisplayTickets = 1 << 20

// Validate checks a printer report.
func (p *Printer) Validate() error {
	if err := validID("printer_id", p.ID); err != nil {
		return err
	}
	switch p.Status {
	case storeprint.PrinterReady, storeprint.PrinterOffline, storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen, storeprint.PrinterUnknown:
	default:
		return storeprint.Errorf(storeprint.EINVALID, "printer %q: unknown status %q", p.ID, p.Status)
	}
	if p.Word != "" && !slices.Contains(storeprint.TroubleWords, p.Word) {
		return storeprint.Errorf(storeprint.EINVALID, "printer %q: unknown trouble %q", p.ID, p.Word)
	}
	if p.Kind == "" {
		p.Kind = storeprint.TargetPrinter
	}
	if !p.Kind.Valid() {
		return storeprint.Errorf(storeprint.EINVALID, "printer %q: unknown kind %q", p.ID, p.Kind)
	}
	if p.Open < 0 || p.Open > MaxDisplayTickets || p.Shown < 0 || p.Stale < 0 || p.Shown > p.Open || p.Stale > p.Open {
		return storeprint.Errorf(storeprint.EINVALID, "printer %q: ticket counts open %d, shown %d, stale %d do not add up", p.ID, p.Open, p.Shown, p.Stale)
	}
	for _, s := range p.Stations {
		if err := validID("station", s); err != nil {
			return err
		}
	}
	if p.Backup != "" {
		return validID("backup", p.Backup)
	}
	return nil
}

// Store list limits. A page of stores also stops before its JSON passes
// MaxStoresPageBytes (cloud/http), so one answer stays small for a chain
// of any size.
const (
	DefaultStoresLimit = 100
	MaxStoresLimit     = 1000
	MaxStoresPageBytes = 1 << 20
)

// StoreFilter pages through the stores the actor sees, in store_id order.
type StoreFilter struct {
	After string // the last store_id of the page before; empty for the first page
	Limit int    // 0: DefaultStoresLimit
}

// Validate checks the filter and fills the default limit.
func (f *StoreFilter) Validate() error {
	if f.After != "" {
		if err := validID("after", f.After); err != nil {
			return err
		}
	}
	if f.Limit < 0 || f.Limit > MaxStoresLimit {
		return storeprint.Errorf(storeprint.EINVALID, "limit must be between 1 and %d", MaxStoresLimit)
	}
	if f.Limit == 0 {
		f.Limit = DefaultStoresLimit
	}
	return nil
}

// StoreService manages stores and their alerts.
type StoreService interface {
	// CreateStore creates a store of an existing tenant (admin only). The
	// same store again changes nothing and reports created false; the
	// same id with other fields is ECONFLICT.
	CreateStore(ctx context.Context, s *Store, note Note) (created bool, err error)

	// FindStores returns a page of the stores the actor may see, in
	// store_id order, with their gateways, printers and alert counts;
	// more reports whether stores follow the page's last one.
	FindStores(ctx context.Context, f StoreFilter) (stores []*StoreStatus, more bool, err error)

	// FindAlerts lists a store's alerts: its current ones (open and
	// acknowledged, neither resolved nor expired) oldest first, or with
	// f.History every alert newest first.
	FindAlerts(ctx context.Context, storeID string, f AlertFilter) ([]*Alert, error)

	// AcknowledgeAlert records that a person took an alert on, audited:
	// it stops counting as needing a person and keeps showing, marked,
	// until its task moves on or it expires. Acknowledging it again
	// changes nothing; a resolved alert is ECONFLICT. The note must name
	// the operator.
	AcknowledgeAlert(ctx context.Context, storeID, alertID string, note Note) (*Alert, error)
}

// DefaultAlertTTL is how long an alert that nobody resolved asks for a
// person (storeprint-cloud --alert-ttl): the dashboard shows the trouble
// of today, and older alerts are history.
const DefaultAlertTTL = 24 * time.Hour

// maxDays bounds a duration in days, well within time.Duration's range.
const maxDays = 100000

// ParseDuration reads a duration in Go's units ("90m", "24h") or in days
// ("2d", "1.5d").
func ParseDuration(v string) (time.Duration, error) {
	days, ok := strings.CutSuffix(v, "d")
	if !ok {
		return time.ParseDuration(v)
	}
	n, err := strconv.ParseFloat(days, 64)
	if err != nil || math.IsNaN(n) || math.Abs(n) > maxDays {
		return 0, storeprint.Errorf(storeprint.EINVALID, "%q is not a number of days up to %d", v, maxDays)
	}
	return time.Duration(n * float64(24*time.Hour)), nil
}

// Alert states, derived from the alert's times and the alert TTL.
const (
	AlertOpen         = "open"         // needs a person
	AlertAcknowledged = "acknowledged" // a person took it on
	AlertResolved     = "resolved"     // its task left the state
	AlertExpired      = "expired"      // older than the alert TTL, never resolved
)

// Alert is something at a store a person must act on.
type Alert struct {
	StoreID   string `json:"store_id"`
	ID        string `json:"alert_id"`
	Kind      string `json:"kind"` // a task status (failed, attention_required), command_refused, dead_letter or AlertCredentialShared
	TaskNo    string `json:"task_no,omitempty"`
	PrinterID string `json:"printer_id,omitempty"`
	// PrinterKind is what PrinterID names: printer or display (a kitchen
	// screen); empty when the alert names none or the store never
	// reported it.
	PrinterKind    storeprint.TargetKind `json:"printer_kind,omitempty"`
	Message        string                `json:"message"`
	State          string                `json:"state"` // AlertOpen, AlertAcknowledged, AlertResolved, AlertExpired
	RaisedAt       time.Time             `json:"raised_at"`
	ExpiresAt      time.Time             `json:"expires_at"` // raised_at plus the alert TTL
	AcknowledgedAt *time.Time            `json:"acknowledged_at,omitempty"`
	AcknowledgedBy string                `json:"acknowledged_by,omitempty"` // the person
	ResolvedAt     *time.Time            `json:"resolved_at,omitempty"`
}

// SetState derives the alert's state and expiry from its times.
func (a *Alert) SetState(ttl time.Duration, now time.Time) {
	a.ExpiresAt = a.RaisedAt.Add(ttl)
	switch {
	case a.ResolvedAt != nil:
		a.State = AlertResolved
	case !now.Before(a.ExpiresAt):
		a.State = AlertExpired
	case a.AcknowledgedAt != nil:
		a.State = AlertAcknowledged
	default:
		a.State = AlertOpen
	}
}

// Alert list limits.
const (
	DefaultAlertLimit = 100
	MaxAlertLimit     = 1000
	MaxAlertIDLen     = 200
)

// AlertFilter selects a store's alerts.
type AlertFilter struct {
	History bool // every alert, newest first; else the current ones, oldest first
	Limit   int  // 0: DefaultAlertLimit
}

// Validate checks the filter and fills the default limit.
func (f *AlertFilter) Validate() error {
	if f.Limit < 0 || f.Limit > MaxAlertLimit {
		return storeprint.Errorf(storeprint.EINVALID, "limit must be between 1 and %d", MaxAlertLimit)
	}
	if f.Limit == 0 {
		f.Limit = DefaultAlertLimit
	}
	return nil
}

// ValidAlertID checks an alert id from a request.
func ValidAlertID(id string) error {
	if id == "" {
		return storeprint.Errorf(storeprint.EINVALID, "alert_id is required")
	}
	return checkText("alert_id", id, MaxAlertIDLen)
}
