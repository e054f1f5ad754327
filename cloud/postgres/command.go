package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.CommandService = (*CommandService)(nil)

// CommandService implements cloud.CommandService.
type CommandService struct {
	db *DB
}

// NewCommandService returns a CommandService on db.
func NewCommandService(db *DB) *CommandService { return &CommandService{db: db} }

// errAlreadyQueued rolls back a Submit whose command_id another request
// queued first.
var errAlreadyQueued = errors.New("command already queued")

// Submit implements cloud.CommandService.
func (s *CommandService) Submit(ctx context.Context, storeID string, r *cloud.CommandRequest) (*cloud.Command, bool, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := r.Validate(); err != nil {
		return nil, false, err
	}
	c := &cloud.Command{
		ID: r.ID, Kind: r.Kind, TaskNo: r.TaskNo, PrinterID: r.PrinterID, DeviceID: r.DeviceID,
		Reason: r.Reason, Operator: r.Operator, CreatedBy: a.String(),
	}
	if c.ID == "" {
		c.ID = cloud.RandomID(16)
	}
	created := true
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		tenantID, err := storeTenant(ctx, tx, a, storeID)
		if err != nil {
			return err
		}
		// A replay of a queued command answers what was queued, whatever
		// the task's state is now. The unique constraint below decides a
		// race between two first requests.
		if r.ID != "" {
			prev, err := findCommand(ctx, tx, storeID, r.ID)
			if err == nil {
				return sameCommand(prev, c, &created)
			}
			if storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
				return err
			}
		}
		action, resource, before, err := s.check(ctx, tx, storeID, c)
		if err != nil {
			return err
		}
		seq, err := insertCommand(ctx, tx, storeID, c)
		if err != nil {
			return err
		}
		if seq == 0 {
			return errAlreadyQueued
		}
		after := map[string]any{"command_id": c.ID, "kind": c.Kind, "seq": seq, "status": "queued"}
		if err := audit(ctx, tx, a, r.Note, tenantID, storeID, action, resource, before, after); err != nil {
			return err
		}
		return notify(ctx, tx, cloud.DownstreamChannel, storeID)
	})
	if errors.Is(err, errAlreadyQueued) {
		prev, ferr := findCommand(ctx, s.db.pool, storeID, c.ID)
		if ferr != nil {
			return nil, false, fmt.Errorf("submit %s at store %s: %w", c.Kind, storeID, ferr)
		}
		err = sameCommand(prev, c, &created)
		c = prev
	}
	if err != nil {
		return nil, false, fmt.Errorf("submit %s at store %s: %w", r.Kind, storeID, err)
	}
	return c, created, nil
}

// sameCommand sets *c to the queued command prev when the request asks
// for the same thing, else reports ECONFLICT.
func sameCommand(prev, c *cloud.Command, created *bool) error {
	if prev.Kind != c.Kind || prev.TaskNo != c.TaskNo || prev.PrinterID != c.PrinterID || prev.DeviceID != c.DeviceID {
		return storeprint.Errorf(storeprint.ECONFLICT, "command_id %q was already used for another command", c.ID)
	}
	*c = *prev
	*created = false
	return nil
}

// check returns the audit action, resource and before-state of a command,
// or why the cloud's view of the store refuses it.
func (s *CommandService) check(ctx context.Context, tx pgx.Tx, storeID string, c *cloud.Command) (action storeprint.AuditAction, resource string, before any, err error) {
	switch c.Kind {
	case storeprint.CommandRetry, storeprint.CommandReprint:
		var t struct {
			Status    storeprint.Status `json:"status"`
			Attempt   int               `json:"attempt"`
			PrinterID string            `json:"printer_id"`
			Version   uint64            `json:"version"`
			LastError string            `json:"last_error,omitempty"`
		}
		err := tx.QueryRow(ctx, `
			SELECT status, attempt, printer_id, version, last_error FROM print_tasks
			WHERE store_id = $1 AND task_no = $2`, storeID, c.TaskNo).
			Scan(&t.Status, &t.Attempt, &t.PrinterID, &t.Version, &t.LastError)
		if isNoRows(err) {
			return "", "", nil, storeprint.Errorf(storeprint.ENOTFOUND, "task %s not found at store %s", c.TaskNo, storeID)
		}
		if err != nil {
			return "", "", nil, fmt.Errorf("read task: %w", interpret(err))
		}
		if c.Kind == storeprint.CommandRetry {
			if t.Status != storeprint.StatusFailed && t.Status != storeprint.StatusAttention {
				return "", "", nil, storeprint.Errorf(storeprint.ECONFLICT, "task %s is %s: only a failed or attention_required task can be retried (a reprint makes a copy)", c.TaskNo, t.Status)
			}
			return storeprint.ActionCloudRetry, "task/" + c.TaskNo, t, nil
		}
		if t.Status == cloud.StatusPendingDelivery || t.Status == storeprint.StatusCancelled {
			return "", "", nil, storeprint.Errorf(storeprint.ECONFLICT, "task %s is %s: there is no ticket to reprint", c.TaskNo, t.Status)
		}
		return storeprint.ActionCloudReprint, "task/" + c.TaskNo, t, nil
	case storeprint.CommandFailoverAck:
		var p struct {
			Status   string `json:"status"`
			Backup   string `json:"backup"`
			Failover bool   `json:"failover"`
		}
		err := tx.QueryRow(ctx, `
			SELECT status, backup, failover FROM printers WHERE store_id = $1 AND printer_id = $2`,
			storeID, c.PrinterID).Scan(&p.Status, &p.Backup, &p.Failover)
		if isNoRows(err) {
			return "", "", nil, storeprint.Errorf(storeprint.ENOTFOUND, "printer %s not known at store %s", c.PrinterID, storeID)
		}
		if err != nil {
			return "", "", nil, fmt.Errorf("read printer: %w", interpret(err))
		}
		if !p.Failover {
			return "", "", nil, storeprint.Errorf(storeprint.ECONFLICT, "printer %s is not in failover: nothing to acknowledge", c.PrinterID)
		}
		return storeprint.ActionCloudFailoverAck, "printer/" + c.PrinterID, p, nil
	case storeprint.CommandDeviceRevoke:
		tenantID, err := storeTenant(ctx, tx, cloud.ActorFromContext(ctx), storeID)
		if err != nil {
			return "", "", nil, err
		}
		devices, err := storeDevices(ctx, tx, tenantID, storeID)
		if err != nil {
			return "", "", nil, err
		}
		for _, d := range devices {
			if d.ID != c.DeviceID {
				continue
			}
			if d.RevokedAt != nil {
				return "", "", nil, storeprint.Errorf(storeprint.ECONFLICT, "device %s at store %s was revoked already", c.DeviceID, storeID)
			}
			return storeprint.ActionCloudDeviceRevoke, "device/" + c.DeviceID, d, nil
		}
		return "", "", nil, storeprint.Errorf(storeprint.ENOTFOUND, "device %s not known at store %s (a device paired moments ago shows once its gateway's audit trail arrives)", c.DeviceID, storeID)
	}
	return "", "", nil, storeprint.Errorf(storeprint.EINVALID, "unknown command %q", c.Kind)
}

// Downstream implements cloud.CommandService.
func (s *CommandService) Downstream(ctx context.Context, storeID string, after uint64, limit int) ([]*cloud.Command, error) {
	if limit <= 0 {
		limit = cloud.DefaultDownstreamLimit
	}
	limit = min(limit, cloud.MaxDownstreamLimit)
	rows, err := s.db.pool.Query(ctx, `
		SELECT seq, body, created_by, created_at FROM downstream
		WHERE store_id = $1 AND seq > $2
		ORDER BY seq
		LIMIT $3`, storeID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read downstream of store %s: %w", storeID, interpret(err))
	}
	out := []*cloud.Command{}
	for rows.Next() {
		c, err := scanCommand(rows, storeID)
		if err != nil {
			return nil, fmt.Errorf("read downstream of store %s: %w", storeID, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read downstream of store %s: %w", storeID, interpret(err))
	}
	return out, nil
}

// AckDownstream implements cloud.CommandService.
func (s *CommandService) AckDownstream(ctx context.Context, storeID string, seq uint64) error {
	tag, err := s.db.pool.Exec(ctx, `
		UPDATE downstream_cursors SET acked_seq = GREATEST(acked_seq, $2)
		WHERE store_id = $1 AND last_seq >= $2`, storeID, seq)
	if err != nil {
		return fmt.Errorf("ack downstream of store %s: %w", storeID, interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return storeprint.Errorf(storeprint.EINVALID, "store %s has no command %d to acknowledge", storeID, seq)
	}
	return nil
}

func findCommand(ctx context.Context, q querier, storeID, commandID string) (*cloud.Command, error) {
	row := q.QueryRow(ctx, `
		SELECT seq, body, created_by, created_at FROM downstream
		WHERE store_id = $1 AND command_id = $2`, storeID, commandID)
	c, err := scanCommand(row, storeID)
	if err != nil {
		return nil, fmt.Errorf("find command %s: %w", commandID, err)
	}
	return c, nil
}

func scanCommand(row pgx.Row, storeID string) (*cloud.Command, error) {
	var (
		seq       uint64
		body      []byte
		createdBy string
		createdAt time.Time
	)
	if err := row.Scan(&seq, &body, &createdBy, &createdAt); err != nil {
		return nil, interpret(err)
	}
	c := &cloud.Command{}
	if err := json.Unmarshal(body, c); err != nil {
		return nil, fmt.Errorf("decode command %d: %w", seq, err)
	}
	c.StoreID, c.Seq, c.CreatedBy, c.CreatedAt = storeID, seq, createdBy, createdAt
	return c, nil
}
