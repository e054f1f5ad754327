package cloud

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
)

// Command is one entry of a store's downstream queue. Seq grows by one per
// store, in commit order, so the sync server sends "everything for store S
// after seq N" and the gateway acks the seq it made durable.
type Command struct {
	StoreID   string                 `json:"store_id"`
	Seq       uint64                 `json:"seq"`
	ID        string                 `json:"command_id"` // idempotency key, unique per store
	Kind      storeprint.CommandKind `json:"kind"`
	TaskNo    string                 `json:"task_no,omitempty"`
	PrinterID string                 `json:"printer_id,omitempty"`
	DeviceID  string                 `json:"device_id,omitempty"`
	Order     *storeprint.Order      `json:"order,omitempty"`
	Reason    string                 `json:"reason,omitempty"`
	Operator  string                 `json:"operator,omitempty"`
	CreatedBy string                 `json:"created_by"` // the actor
	CreatedAt time.Time              `json:"created_at"`
}

// CommandRequest is a person's request for a retry, reprint, failover
// acknowledgement or device revocation.
type CommandRequest struct {
	ID        string                 // optional idempotency key; a random one when empty
	Kind      storeprint.CommandKind // retry, reprint or failover_ack
	TaskNo    string                 // retry, reprint
	PrinterID string                 // failover_ack
	DeviceID  string                 // device_revoke
	Note
}

// Validate checks the request's shape.
func (r *CommandRequest) Validate() error {
	if r.ID != "" {
		if err := validID("command_id", r.ID); err != nil {
			return err
		}
	}
	switch r.Kind {
	case storeprint.CommandRetry, storeprint.CommandReprint:
		if r.TaskNo == "" {
			return storeprint.Errorf(storeprint.EINVALID, "task_no is required")
		}
		if err := checkText("task_no", r.TaskNo, 200); err != nil {
			return err
		}
	case storeprint.CommandFailoverAck:
		if err := validID("printer_id", r.PrinterID); err != nil {
			return err
		}
	case storeprint.CommandDeviceRevoke:
		if err := validID("device_id", r.DeviceID); err != nil {
			return err
		}
	default:
		return storeprint.Errorf(storeprint.EINVALID, "unknown command %q", r.Kind)
	}
	return r.Note.Validate()
}

// Downstream read limits.
const (
	DefaultDownstreamLimit = 100
	MaxDownstreamLimit     = 1000
)

// CommandService queues commands for a store's gateway and serves the
// downstream queue to the sync server.
type CommandService interface {
	// Submit queues a retry, reprint or failover acknowledgement for the
	// store's gateway and writes its audit event, in one transaction. The
	// same command_id again reports created false and the queued command;
	// with another content it is ECONFLICT.
	Submit(ctx context.Context, storeID string, r *CommandRequest) (c *Command, created bool, err error)

	// Downstream returns up to limit commands of the store with seq after
	// the given one, in seq order. For the sync server.
	Downstream(ctx context.Context, storeID string, after uint64, limit int) ([]*Command, error)

	// AckDownstream records that the store's gateway made every command up
	// to seq durable. The acked seq never moves back. For the sync server.
	AckDownstream(ctx context.Context, storeID string, seq uint64) error
}
