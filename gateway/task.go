package gateway

import (
	"time"

	"github.com/storeprint/storeprint"
)

// Task is one station's ticket of one order: the unit of printing.
type Task struct {
	TaskNo    string `json:"task_no"`
	OrderID   string `json:"order_id"`
	Station   string `json:"station"`
	PrinterID string `json:"printer_id"` // where it prints (the station's printer or its backup)
	// FirstPrinter is where it was routed on acceptance: a replayed order
	// answers with it, so the same request gets the same body.
	FirstPrinter string            `json:"first_printer,omitempty"`
	Status       storeprint.Status `json:"status"`
	Attempt      int               `json:"attempt"`    // number of the latest attempt; 0 before the first
	Failures     int               `json:"failures"`   // attempts known not to have printed, since the last success or make-up
	LastError    string            `json:"last_error"` // why the last attempt did not print
	Reason       storeprint.Reason `json:"reason,omitempty"`
	Source       storeprint.Source `json:"source,omitempty"`

	// Ticket content.
	Table        string            `json:"table,omitempty"`
	Note         string            `json:"note,omitempty"`
	Items        []storeprint.Item `json:"items"`
	CopyOf       string            `json:"copy_of,omitempty"`       // for a deliberate copy: the original task_no
	Reprint      bool              `json:"reprint,omitempty"`       // the next ticket carries a REPRINT line
	Copies       int               `json:"copies,omitempty"`        // deliberate copies made of this task
	AutoReprints int               `json:"auto_reprints,omitempty"` // reprints on_uncertain = "reprint" made by itself (at most one)
	StaleOK      bool              `json:"stale_ok,omitempty"`      // a person asked for it: print even if stale
	BackupFrom   string            `json:"backup_from,omitempty"`   // set when printed on a backup printer

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

	// RecalledAt is set while a bumped ticket is called back to its
	// kitchen screen: the screen shows it again until it is bumped again.
	// It is kept with the task, so a restart keeps it on the screen.
	RecalledAt *time.Time `json:"recalled_at,omitempty"`
}
