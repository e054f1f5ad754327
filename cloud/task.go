package cloud

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
)

// StatusPendingDelivery is the status of a cloud order's task that its
// store's gateway has not reported yet. Every other status is the
// gateway's own word (storeprint.Statuses).
const StatusPendingDelivery storeprint.Status = "pending_delivery"

// ValidStatus reports whether s is a status the cloud knows.
func ValidStatus(s storeprint.Status) bool {
	return s == StatusPendingDelivery || s.Valid()
}

// Task is a print task as the cloud knows it: the state of the highest
// version its gateway reported, with its receipts.
type Task struct {
	StoreID    string            `json:"store_id"`
	TaskNo     string            `json:"task_no"`
	OrderID    string            `json:"order_id"`
	Station    string            `json:"station"`
	PrinterID  string            `json:"printer_id"`
	Status     storeprint.Status `json:"status"`
	Version    uint64            `json:"version"`
	Attempt    int               `json:"attempt"`
	LastError  string            `json:"last_error"`
	Reason     storeprint.Reason `json:"reason,omitempty"`
	Source     storeprint.Source `json:"source"`
	CopyOf     string            `json:"copy_of,omitempty"`
	BackupFrom string            `json:"backup_from,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	PrintedAt  *time.Time        `json:"printed_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
	Receipts   []*Receipt        `json:"receipts"`
}

// Receipt is one step of one attempt of a task.
type Receipt struct {
	Attempt       int                     `json:"attempt"`
	State         storeprint.ReceiptState `json:"state"`
	PrinterID     string                  `json:"printer_id"`
	PayloadSHA256 string                  `json:"payload_sha256,omitempty"`
	ProcessID     string                  `json:"process_id,omitempty"`
	JobID         string                  `json:"job_id,omitempty"`
	Reprint       bool                    `json:"reprint,omitempty"`
	ConfirmedBy   storeprint.Confirm      `json:"confirmed_by,omitempty"` // how the printer confirmed a printed attempt
	At            time.Time               `json:"at"`
}

// Task list limits.
const (
	DefaultTaskLimit = 100
	MaxTaskLimit     = 1000
)

// TaskFilter selects tasks of a store.
type TaskFilter struct {
	Status storeprint.Status // empty: any
	Limit  int               // 0: DefaultTaskLimit
	// After pages through a store's tasks: when set, the tasks come in
	// task_no order, starting after *After ("" for the first page; pass a
	// page's last task_no for the next one). Unlike created_at, a task_no
	// never changes, so no task already stored is skipped or seen twice.
	// Nil: oldest first.
	After *string
}

// Validate checks the filter and fills the default limit.
func (f *TaskFilter) Validate() error {
	if f.Status != "" && !ValidStatus(f.Status) {
		return storeprint.Errorf(storeprint.EINVALID, "status %q is not one of pending_delivery, queued, printing, retry_wait, done, failed, attention_required, cancelled", f.Status)
	}
	if f.Limit < 0 || f.Limit > MaxTaskLimit {
		return storeprint.Errorf(storeprint.EINVALID, "limit must be between 1 and %d", MaxTaskLimit)
	}
	if f.Limit == 0 {
		f.Limit = DefaultTaskLimit
	}
	return nil
}

// TaskService reads tasks of the stores the actor may see.
type TaskService interface {
	// FindTask returns one task with its receipts, or ENOTFOUND.
	FindTask(ctx context.Context, storeID, taskNo string) (*Task, error)

	// FindTasks lists a store's tasks, oldest first (in task_no order when
	// paging with f.After), with their receipts. An unknown or foreign
	// store is ENOTFOUND.
	FindTasks(ctx context.Context, storeID string, f TaskFilter) ([]*Task, error)
}
