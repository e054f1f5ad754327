package gateway

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

// Store is the gateway's durable state: tasks, orders, receipts, the audit
// log and the outbox the sync link replays. gateway/badger implements it.
type Store interface {
	// Update runs fn in a read-write transaction and returns once the
	// transaction is durable on disk (fsync). Concurrent updates share one
	// sync. If fn returns an error nothing it wrote is kept.
	//
	// fn may run more than once (an update that does not fit the batch it
	// was read into runs again, against the state the batch leaves), and
	// only its last run counts: fn must set every result it hands back to
	// its caller afresh on each run, never append to or count into
	// variables from outside, and do nothing but read and write the
	// transaction (no I/O, no wake-ups: those go after Update returns).
	//
	// An update made with a context from WithoutSync needs no sync of its
	// own: it is answered once committed, the updates after it see it,
	// and it becomes durable, and seen by View, with the next update's
	// sync, or on its own at most a second later.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only snapshot.
	View(ctx context.Context, fn func(ReadTx) error) error
	// Health reports storage trouble (a failed write, a full disk); nil
	// when writes succeed.
	Health() error
	Close() error
}

// Recovery is why the store opened in the recovered state: it found itself
// behind the witness of its last commit (writes lost from its logs), or it
// was restored from a backup or repaired. Tasks that were waiting may have
// printed since, or be older states of tasks that did: the gateway holds
// every one for a person before it prints anything (Held).
type Recovery struct {
	At           time.Time `json:"at"`
	Cause        string    `json:"cause"`
	MissingTasks int       `json:"missing_tasks,omitempty"` // tasks the witness counted that are gone
	Held         bool      `json:"held"`                    // the waiting tasks have been held
	HeldTasks    int       `json:"held_tasks,omitempty"`
	// LostEvents are the outbox seqs that were written and are gone: the
	// counters moved past them, so the cloud never sees a seq twice, and
	// never sees these.
	LostEventsFrom uint64 `json:"lost_events_from,omitempty"`
	LostEventsTo   uint64 `json:"lost_events_to,omitempty"`
}

// DiskState is the data disk's free space as last read.
type DiskState struct {
	FreeBytes    uint64    `json:"free_bytes"`
	ReserveBytes uint64    `json:"reserve_bytes"`
	Low          bool      `json:"low"` // below the reserve: new orders are refused
	CheckedAt    time.Time `json:"checked_at"`
}

// ReadTx reads a consistent snapshot.
type ReadTx interface {
	Task(taskNo string) (*Task, error) // ENOTFOUND when absent
	Order(orderID string) (*OrderRecord, error)
	Receipt(taskNo string, attempt int) (*Receipt, error)
	Receipts(taskNo string) ([]*Receipt, error)
	// Head returns the printer's oldest open task (by acceptance), or nil.
	Head(printerID string) (*Task, error)
	// Open returns up to limit open tasks of a printer, oldest first.
	Open(printerID string, limit int) ([]*Task, error)
	// ByStatus returns up to limit tasks in a status, oldest first; an
	// empty status lists every task.
	ByStatus(status storeprint.Status, limit int) ([]*Task, error)
	// Count counts the tasks in a status without reading them.
	Count(status storeprint.Status) (int, error)
	// TasksAfter returns up to limit tasks with task_no greater than
	// after, in task_no order: a cursor over every task.
	TasksAfter(after string, limit int) ([]*Task, error)
	// CountOpen counts a printer's open tasks without reading them.
	CountOpen(printerID string) (int, error)
	Failover(printerID string) (*Failover, error) // nil when none recorded
	Audit(after uint64, limit int) ([]*AuditEntry, error)
	// Outbox returns up to limit events with seq > after, in seq order.
	Outbox(after uint64, limit int) ([]sync.Event, error)
	// Meta reads a named counter (0 when unset).
	Meta(name string) (uint64, error)
	// LastEventSeq is the seq of the newest outbox event ever written.
	LastEventSeq() (uint64, error)
	// Device returns a paired device; ENOTFOUND when absent or revoked.
	Device(deviceID string) (*Device, error)
	// DeviceByToken finds a device by the SHA-256 of its token (HashToken).
	DeviceByToken(tokenSHA256 string) (*Device, error)
	// Devices lists every paired device, oldest first.
	Devices() ([]*Device, error)
}

// Tx is a read-write transaction.
type Tx interface {
	ReadTx
	// PutTask stores a task, keeping its indexes and bumping its Version,
	// and appends its new state to the outbox.
	PutTask(t *Task) error
	PutOrder(o *OrderRecord) error
	// PutReceipt stores one step of an attempt's receipt and appends it to
	// the outbox.
	PutReceipt(r *Receipt) error
	// AppendAudit appends an entry to the audit log (assigning its Seq) and
	// to the outbox. Entries are never changed afterwards.
	AppendAudit(a *AuditEntry) error
	PutFailover(f *Failover) error
	// NextTaskSeq allocates the acceptance number of a new task.
	NextTaskSeq() uint64
	// DeleteEvent removes an outbox event the cloud has stored.
	DeleteEvent(seq uint64)
	// SetMeta writes a named counter.
	SetMeta(name string, v uint64)
	// PutDevice stores a device and the index of its token hash.
	PutDevice(d *Device) error
	// DeleteDevice removes a device and its token: it is refused from the
	// commit on.
	DeleteDevice(deviceID string) error

	// Retention (see Sweeper). Nothing is deleted whose latest outbox
	// event is above acked: the cloud has not stored it yet.

	// PurgeTasks deletes tasks in a final status (done, cancelled) last
	// changed before `before`, with their receipts, looking at up to
	// limit of them in acceptance order after acceptance seq `after`. An
	// order whose tasks are all gone keeps a compact record, so a replay
	// still answers with its task numbers and prints nothing.
	PurgeTasks(status storeprint.Status, before time.Time, acked, after uint64, limit int) (PurgeResult, error)
	// PurgeAudit deletes up to limit of the oldest audit entries written
	// before `before`.
	PurgeAudit(before time.Time, acked uint64, limit int) (PurgeResult, error)
	// PurgeOrders deletes up to limit of the oldest compact order records
	// of orders accepted before `before`: a replay of one is a new order.
	PurgeOrders(before time.Time, limit int) (PurgeResult, error)
	// PurgeOutbox deletes up to limit of the oldest outbox events, up to
	// seq upTo.
	PurgeOutbox(upTo uint64, limit int) (PurgeResult, error)
}

// PurgeResult says what one purge step did.
type PurgeResult struct {
	Purged int    // records deleted
	Last   uint64 // seq of the last record looked at: the next step starts after it
	Done   bool   // nothing older is left to look at
}

// OrderRecord remembers an accepted order for idempotent replays.
type OrderRecord struct {
	OrderID string   `json:"order_id"`
	Digest  string   `json:"digest"`
	TaskNos []string `json:"task_nos"`
	// Printers are where each of TaskNos was first routed: a replay
	// answers with them after retention deleted the tasks.
	Printers  []string          `json:"printers,omitempty"`
	Source    storeprint.Source `json:"source"`
	Voided    bool              `json:"voided,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// Receipt is the local record of one attempt of one task.
type Receipt struct {
	TaskNo        string                  `json:"task_no"`
	Attempt       int                     `json:"attempt"`
	State         storeprint.ReceiptState `json:"state"`
	PrinterID     string                  `json:"printer_id"`
	PayloadSHA256 string                  `json:"payload_sha256"`
	ProcessID     string                  `json:"process_id"`
	JobID         string                  `json:"job_id,omitempty"`
	Reprint       bool                    `json:"reprint,omitempty"`
	BackupFrom    string                  `json:"backup_from,omitempty"`
	Error         string                  `json:"error,omitempty"`
	Settled       string                  `json:"settled,omitempty"` // how the printer settled an uncertain attempt (settle.go)
	// ConfirmedBy says how the printer confirmed a printed attempt
	// (process_id, transmit_status, status, job_log, epos, cloudprnt,
	// spooler, ...); empty on an attempt not confirmed by its printer.
	ConfirmedBy storeprint.Confirm `json:"confirmed_by,omitempty"`
	PreparedAt  time.Time          `json:"prepared_at"`
	SubmittedAt *time.Time         `json:"submitted_at,omitempty"`
	PrintedAt   *time.Time         `json:"printed_at,omitempty"`
	ConfirmedAt *time.Time         `json:"confirmed_at,omitempty"`
}

// AuditEntry is one person's action, kept forever in the local audit log.
type AuditEntry struct {
	Seq      uint64                 `json:"seq"`
	Action   storeprint.AuditAction `json:"action"`
	Operator string                 `json:"operator"`
	Reason   string                 `json:"reason,omitempty"`
	TaskNo   string                 `json:"task_no,omitempty"`
	Before   string                 `json:"before,omitempty"`
	After    string                 `json:"after,omitempty"`
	At       time.Time              `json:"at"`
}

// Failover is the routing state of a printer whose stations moved to its
// backup.
type Failover struct {
	PrinterID    string          `json:"printer_id"`
	Active       bool            `json:"active"`         // stations print on the backup
	Backup       string          `json:"backup"`         // where they print
	Since        time.Time       `json:"since"`          // when they moved
	Word         storeprint.Word `json:"word,omitempty"` // why, in words for people
	Reason       string          `json:"reason"`         // why, with the technical detail
	Acknowledged bool            `json:"acknowledged"`   // a person saw it
	AckBy        string          `json:"ack_by,omitempty"`
	AckAt        *time.Time      `json:"ack_at,omitempty"`
}

type withoutSyncKey struct{}

// WithoutSync marks the updates made with the context as needing no sync
// of their own (see Store.Update): a transition whose loss in a power cut
// the promise does not mind, because the state before it is safe to find
// again (a lease, a receipt's "submitted", the cloud's acknowledgement),
// rides on the sync of the update that follows it.
func WithoutSync(ctx context.Context) context.Context {
	return context.WithValue(ctx, withoutSyncKey{}, true)
}

// SyncDeferred reports whether ctx comes from WithoutSync.
func SyncDeferred(ctx context.Context) bool {
	v, _ := ctx.Value(withoutSyncKey{}).(bool)
	return v
}
