package cloud

import (
	"context"
	"encoding/json"
	"time"

	"github.com/storeprint/storeprint"
)

// Dashboard limits. The dashboard shows a bounded page of stores (the ones
// in trouble first), so one answer stays small for a chain of any size.
const (
	DefaultDashboardStores = 100
	MaxDashboardStores     = 500
	MaxDashboardQueue      = 200 // current alerts: those that need a person first, each part oldest first
	MaxDashboardPrinters   = 200 // printers in trouble
	MaxDashboardLinkEvents = 50  // link events of the last DashboardLinkWindow, newest first
	// DashboardLinkWindow is how long the dashboard shows a link event
	// (gateway data reset, store resynchronised...).
	DashboardLinkWindow = 7 * 24 * time.Hour
	// MaxDashboardCount bounds the alert counts of the summary: past it
	// the summary says "more" instead of counting on.
	MaxDashboardCount = 10000
	// MaxDashboardWindow is how far back "today" may start: a day in any
	// time zone, with room for clock skew.
	MaxDashboardWindow = 48 * time.Hour
	// DashboardMaxAge is how old the answer a viewer gets may be. Every
	// viewer of a scope (the admin, each tenant) asking within it, on any
	// node, shares one computed answer, so the dashboard's cost does not
	// grow with its viewers; with the page's 2 s poll a change reaches the
	// screen within 3 s of reaching the cloud.
	DashboardMaxAge = time.Second
)

// DashboardFilter is what the dashboard asks for.
type DashboardFilter struct {
	Since time.Time // start of "today" in the viewer's time zone; zero: midnight UTC
	Limit int       // stores; 0: DefaultDashboardStores
}

// Validate checks the filter against now and fills the defaults.
func (f *DashboardFilter) Validate(now time.Time) error {
	if f.Since.IsZero() {
		y, m, d := now.UTC().Date()
		f.Since = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	if f.Since.After(now.Add(time.Minute)) {
		return storeprint.Errorf(storeprint.EINVALID, "since %s is in the future", f.Since.Format(time.RFC3339))
	}
	if f.Since.Before(now.Add(-MaxDashboardWindow)) {
		return storeprint.Errorf(storeprint.EINVALID, "since must be within the last %d hours", int(MaxDashboardWindow.Hours()))
	}
	if f.Limit < 0 || f.Limit > MaxDashboardStores {
		return storeprint.Errorf(storeprint.EINVALID, "limit must be between 1 and %d", MaxDashboardStores)
	}
	if f.Limit == 0 {
		f.Limit = DefaultDashboardStores
	}
	return nil
}

// Dashboard is what HQ sees: the stores, the printers in trouble, the
// tickets that need a person across stores, and today's work per store.
type Dashboard struct {
	At       time.Time        `json:"at"`    // the database's clock when read
	Since    time.Time        `json:"since"` // start of "today"
	Summary  DashboardSummary `json:"summary"`
	Stores   []*StoreDay      `json:"stores"` // in trouble first, then by tenant and id; at most the limit
	Printers []*StorePrinter  `json:"printers_in_trouble"`
	// Queue holds the current alerts: those that need a person, oldest
	// first, then those a person acknowledged, oldest first.
	Queue []*DashboardAlert `json:"queue"`
	// LinkEvents are what happened on the stores' links in the last
	// DashboardLinkWindow: data reset, resynchronised, restored behind the
	// cloud, tickets taken over, events set aside. Newest first.
	LinkEvents []*LinkEvent `json:"link_events"`

	encoded []byte // the answer's JSON, when it is a shared, read-only answer
}

// MarshalJSON encodes the dashboard; a shared answer is not encoded again.
func (d *Dashboard) MarshalJSON() ([]byte, error) {
	if d.encoded != nil {
		return d.encoded, nil
	}
	type plain Dashboard // the fields without this method
	return json.Marshal((*plain)(d))
}

// Share marks the dashboard as an answer shared by many callers, b being
// its JSON: nobody may change it from now on.
func (d *Dashboard) Share(b []byte) { d.encoded = b }

// DashboardSummary counts over every store the actor sees, not only the
// page of stores shown. The alert counts stop at MaxDashboardCount; the
// More flags say there are more.
type DashboardSummary struct {
	Stores             int  `json:"stores"`
	Online             int  `json:"online"`
	StoresInTrouble    int  `json:"stores_in_trouble"`
	PrintersInTrouble  int  `json:"printers_in_trouble"`
	OpenAlerts         int  `json:"open_alerts"` // need a person: neither acknowledged, resolved nor expired
	OpenAlertsMore     bool `json:"open_alerts_more,omitempty"`
	AcknowledgedAlerts int  `json:"acknowledged_alerts"` // taken on by a person, neither resolved nor expired
	AcknowledgedMore   bool `json:"acknowledged_alerts_more,omitempty"`
}

// StoreDay is a store with its state and today's counts.
type StoreDay struct {
	StoreStatus
	Trouble bool      `json:"trouble"` // offline, a printer in trouble, or an alert that needs a person
	Today   DayCounts `json:"today"`
}

// DayCounts is a store's work since the start of the day.
type DayCounts struct {
	Printed             int `json:"printed"`              // tickets the printer confirmed
	Failed              int `json:"failed"`               // tickets that failed (retries used up)
	Flagged             int `json:"flagged"`              // tickets flagged attention_required
	DuplicatesPrevented int `json:"duplicates_prevented"` // orders sent again and not printed again
	// MedianToPaperMS is the median time from acceptance to the printer's
	// confirmation of today's printed tickets; null when none.
	MedianToPaperMS *int64 `json:"median_to_paper_ms"`
}

// StorePrinter is a printer in trouble with its store, for the
// cross-store list: a fault the gateway read (offline, paper end, cover
// open), or its stations moved to the backup.
type StorePrinter struct {
	StoreID     string `json:"store_id"`
	StoreName   string `json:"store_name"`
	StoreOnline bool   `json:"store_online"` // false: the state is as last reported
	Printer
}

// DashboardAlert is a current alert with its store and its task as the
// cloud knows it.
type DashboardAlert struct {
	Alert
	StoreName  string            `json:"store_name"`
	OrderID    string            `json:"order_id"`
	Station    string            `json:"station"`
	TaskStatus storeprint.Status `json:"task_status,omitempty"` // empty for an alert about no task (a dead letter)
	Reason     string            `json:"reason,omitempty"`
	LastError  string            `json:"last_error,omitempty"`
	Attempt    int               `json:"attempt"`
	// AcceptedAt is when the gateway accepted the alert's ticket, the
	// start of its age; nil for an alert about no task.
	AcceptedAt *time.Time `json:"accepted_at,omitempty"`
}

// Task search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	MaxHistoryEvents   = 500 // per task, oldest first
	MaxHistoryAudit    = 100 // per task, oldest first
)

// TaskSearch finds tasks by order id or task_no.
type TaskSearch struct {
	Query   string // an order id or a task_no, exactly
	StoreID string // empty: every store the actor sees
	Limit   int    // tasks; 0: DefaultSearchLimit
}

// Validate checks the search and fills the default limit.
func (s *TaskSearch) Validate() error {
	if s.Query == "" {
		return storeprint.Errorf(storeprint.EINVALID, "q is required: an order id or a task_no")
	}
	if err := checkText("q", s.Query, 200); err != nil {
		return err
	}
	if s.StoreID != "" {
		if err := validID("store_id", s.StoreID); err != nil {
			return err
		}
	}
	if s.Limit < 0 || s.Limit > MaxSearchLimit {
		return storeprint.Errorf(storeprint.EINVALID, "limit must be between 1 and %d", MaxSearchLimit)
	}
	if s.Limit == 0 {
		s.Limit = DefaultSearchLimit
	}
	return nil
}

// TaskHistory is a task with everything that happened to it: the events
// its gateway replayed (states, receipts, actions at the store), and the
// audit trail of actions on it.
type TaskHistory struct {
	Task
	StoreName string             `json:"store_name"`
	Events    []*TaskEventRecord `json:"events"`
	Audit     []*AuditEvent      `json:"audit"`
}

// TaskEventRecord is one event a gateway replayed, as stored.
type TaskEventRecord struct {
	GatewayID  string          `json:"gateway_id"`
	Seq        uint64          `json:"seq"`
	Kind       string          `json:"kind"` // sync.KindTask, KindReceipt, KindAudit
	At         time.Time       `json:"at"`
	ReceivedAt time.Time       `json:"received_at"`
	Data       json.RawMessage `json:"data"`
}

// DashboardService answers the HQ dashboard.
type DashboardService interface {
	// Dashboard reads the dashboard for the stores the actor sees: an
	// answer at most DashboardMaxAge old (a few seconds more while another
	// node computes the next one), shared with every caller of the same
	// scope and filter; callers must not change it.
	Dashboard(ctx context.Context, f DashboardFilter) (*Dashboard, error)

	// SearchTasks returns the tasks whose order id or task_no is the
	// query, newest first, with their receipts, events and audit trail.
	// A store_id the actor may not see is ENOTFOUND.
	SearchTasks(ctx context.Context, s TaskSearch) ([]*TaskHistory, error)

	// BumpTimes returns the store's time from order to bump per station
	// (kitchen displays), for the orders since f.Since. A store the actor
	// may not see is ENOTFOUND.
	BumpTimes(ctx context.Context, storeID string, f DashboardFilter) (*BumpTimes, error)
}
