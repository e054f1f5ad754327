package sync

import (
	"encoding/json"
	"time"

	"github.com/storeprint/storeprint"
)

// ProtocolVersion is the version of the frames in this package. A peer
// refuses frames of a version it does not know.
const ProtocolVersion = 1

// Event kinds replayed upstream, gateway to cloud.
const (
	KindTask    = "task"    // Data is a TaskEvent: the task's state after a change
	KindReceipt = "receipt" // Data is a ReceiptEvent: one step of one attempt
	KindAudit   = "audit"   // Data is an AuditEvent: a person's action at the store
)

// Event is one entry of a gateway's outbox. Seq is assigned by the gateway,
// per gateway, without gaps, in the same transaction as the change itself.
type Event struct {
	Seq    uint64          `json:"seq"`
	Kind   string          `json:"kind"`
	TaskNo string          `json:"task_no,omitempty"`
	At     time.Time       `json:"at"`
	Data   json.RawMessage `json:"data"`

	checked *checked // set by CheckEvents
}

// TaskEvent is a task's full state after a change. Version grows by one with
// every change of the task at the gateway, so a receiver keeps the state with
// the highest version and an old event replayed late changes nothing.
type TaskEvent struct {
	TaskNo     string            `json:"task_no"`
	Version    uint64            `json:"version"`
	OrderID    string            `json:"order_id"`
	Station    string            `json:"station"`
	PrinterID  string            `json:"printer_id"`
	Status     storeprint.Status `json:"status"`
	Attempt    int               `json:"attempt"`
	LastError  string            `json:"last_error,omitempty"`
	Reason     storeprint.Reason `json:"reason,omitempty"`
	Source     storeprint.Source `json:"source,omitempty"`
	CopyOf     string            `json:"copy_of,omitempty"`
	BackupFrom string            `json:"backup_from,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	PrintedAt  *time.Time        `json:"printed_at,omitempty"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

// ReceiptEvent is one step of the receipt of one attempt.
type ReceiptEvent struct {
	TaskNo        string                  `json:"task_no"`
	Attempt       int                     `json:"attempt"`
	State         storeprint.ReceiptState `json:"state"`
	PrinterID     string                  `json:"printer_id"`
	PayloadSHA256 string                  `json:"payload_sha256,omitempty"`
	ProcessID     string                  `json:"process_id,omitempty"`
	JobID         string                  `json:"job_id,omitempty"` // spooler job id
	Reprint       bool                    `json:"reprint,omitempty"`
	// ConfirmedBy says how the printer confirmed a printed attempt
	// (process_id, transmit_status, status, job_log, ...).
	ConfirmedBy storeprint.Confirm `json:"confirmed_by,omitempty"`
	At          time.Time          `json:"at"`
}

// AuditEvent is a person's action at the store (make-up print, copy,
// resolution, failover acknowledgement), append-only.
type AuditEvent struct {
	ID       string                 `json:"id"` // unique per gateway
	Action   storeprint.AuditAction `json:"action"`
	Operator string                 `json:"operator"`
	Reason   string                 `json:"reason,omitempty"`
	TaskNo   string                 `json:"task_no,omitempty"`
	Before   json.RawMessage        `json:"before,omitempty"`
	After    json.RawMessage        `json:"after,omitempty"`
	At       time.Time              `json:"at"`
}
