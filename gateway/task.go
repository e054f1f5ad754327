package gateway

import "time"

// Status is a task's place in its lifecycle:
//
//	queued → printing → done
//	           ↘ retry_wait → printing (failure known not to have printed)
//	           ↘ failed (retries used up; a person retries it)
//	           ↘ attention_required (outcome unknown, or stale)
//	queued/retry_wait → cancelled (order voided before submission)
type Status string

const (
	StatusQueued    Status = "queued"
	StatusPrinting  Status = "printing"
	StatusRetryWait Status = "retry_wait"
	StatusDone      Status = "done"
	StatusFailed    Status = "failed"
	StatusAttention Status = "attention_required"
	StatusCancelled Status = "cancelled"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{StatusQueued, StatusPrinting, StatusRetryWait, StatusDone, StatusFailed, StatusAttention, StatusCancelled}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Open reports whether a task in this status still waits to be printed by
// the dispatcher.
func (s Status) Open() bool {
	return s == StatusQueued || s == StatusRetryWait || s == StatusPrinting
}

// Reasons a task needs a person.
const (
	ReasonUncertain = "uncertain" // bytes may have printed, no confirmation
	ReasonStale     = "stale"     // could not print within stale_after
	ReasonRetries   = "retries"   // retries used up (status failed)
)

// Task is one station's ticket of one order: the unit of printing.
type Task struct {
	TaskNo    string `json:"task_no"`
	OrderID   string `json:"order_id"`
	Station   string `json:"station"`
	PrinterID string `json:"printer_id"` // where it prints (the station's printer or its backup)
	// FirstPrinter is where it was routed on acceptance: a replayed order
	// answers with it, so the same request gets the same body.
	FirstPrinter string `json:"first_printer,omitempty"`
	Status       Status `json:"status"`
	Attempt      int    `json:"attempt"`    // number of the latest attempt; 0 before the first
	Failures     int    `json:"failures"`   // attempts known not to have printed, since the last success or make-up
	LastError    string `json:"last_error"` // why the last attempt did not print
	Reason       string `json:"reason,omitempty"`
	Source       string `json:"source,omitempty"` // "pos" or "cloud"

	// Ticket content.
	Table      string `json:"table,omitempty"`
	Note       string `json:"note,omitempty"`
	Items      []Item `json:"items"`
	CopyOf     string `json:"copy_of,omitempty"`     // for a deliberate copy: the original task_no
	Reprint    bool   `json:"reprint,omitempty"`     // the next ticket carries a REPRINT line
	Copies     int    `json:"copies,omitempty"`      // deliberate copies made of this task
	StaleOK    bool   `json:"stale_ok,omitempty"`    // a person asked for it: print even if stale
	BackupFrom string `json:"backup_from,omitempty"` // set when printed on a backup printer

	Seq       uint64     `json:"seq"`     // acceptance order, FIFO key
	Version   uint64     `json:"version"` // grows by one with every stored change
	CreatedAt time.Time  `json:"created_at"`
	NextAt    time.Time  `json:"next_at"` // earliest next attempt (retry_wait)
	PrintedAt *time.Time `json:"printed_at"`
	UpdatedAt time.Time  `json:"updated_at"`

	// Lease of the current attempt. Every update of an attempt's outcome
	// must present the attempt number and token while the lease is valid.
	LeaseToken   string    `json:"lease_token,omitempty"`
	LeaseExpires time.Time `json:"lease_expires,omitzero"`
}

// Ticket is what goes on paper for one attempt of a task.
type Ticket struct {
	StoreID    string
	Station    string
	OrderID    string
	Table      string
	Note       string
	Items      []Item
	AcceptedAt time.Time
	TaskNo     string
	Reprint    bool   // print a REPRINT line
	BackupFrom string // print "BACKUP FROM <printer>"
	CopyOf     string // a deliberate copy of another task
}
