package postgres

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.CloudPRNTService = (*CloudPRNTService)(nil)

// CloudPRNTService implements cloud.CloudPRNTService. Every step is one
// transaction on the task's row (SELECT ... FOR UPDATE), so any number of
// cloud nodes serve a store's printers alike: the attempt in the jobToken
// fences a stale fetch or confirmation, the task's primary key dedups.
type CloudPRNTService struct {
	db *DB
}

// NewCloudPRNTService returns a CloudPRNTService on db.
func NewCloudPRNTService(db *DB) *CloudPRNTService { return &CloudPRNTService{db: db} }

// openStatuses are the task statuses a CloudPRNT printer may take a task
// in: a cloud order waiting (pending_delivery, as no gateway takes it), or
// a task sent back to the queue.
var openStatuses = []string{string(cloud.StatusPendingDelivery), string(storeprint.StatusQueued), string(storeprint.StatusRetryWait)}

// CreateCloudPRNTPrinter implements cloud.CloudPRNTService.
func (s *CloudPRNTService) CreateCloudPRNTPrinter(ctx context.Context, p *cloud.CloudPRNTPrinter, note cloud.Note) (string, error) {
	a, err := requireAdmin(ctx, p, note)
	if err != nil {
		return "", err
	}
	token := cloud.NewCloudPRNTToken(p.StoreID)
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		tenantID, err := storeTenant(ctx, tx, a, p.StoreID)
		if err != nil {
			return err
		}
		var gateways int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM gateways WHERE store_id = $1 AND revoked_at IS NULL`, p.StoreID).Scan(&gateways); err != nil {
			return fmt.Errorf("count gateways: %w", interpret(err))
		}
		if gateways > 0 {
			return storeprint.Errorf(storeprint.ECONFLICT, "store %s has a gateway in service: its gateway prints its orders (revoke it first)", p.StoreID)
		}
		err = tx.QueryRow(ctx, `
			INSERT INTO cloudprnt_printers (store_id, printer_id, mac, token_hash, stations, confirm_timeout_ms, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			RETURNING created_at`,
			p.StoreID, p.PrinterID, p.MAC, cloud.HashToken(token), p.Stations, p.ConfirmTimeout.Milliseconds(), a.String()).Scan(&p.CreatedAt)
		if err != nil {
			return fmt.Errorf("insert printer: %w", interpret(err))
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO printers (store_id, printer_id, stations) VALUES ($1, $2, $3)
			ON CONFLICT (store_id, printer_id) DO UPDATE SET stations = EXCLUDED.stations`, p.StoreID, p.PrinterID, p.Stations); err != nil {
			return fmt.Errorf("insert printer: %w", interpret(err))
		}
		return audit(ctx, tx, a, note, tenantID, p.StoreID, storeprint.ActionCreateCloudPRNT, "printer/"+p.PrinterID, nil,
			map[string]any{"printer_id": p.PrinterID, "mac": p.MAC, "stations": p.Stations})
	})
	if err != nil {
		return "", fmt.Errorf("create CloudPRNT printer %s at store %s: %w", p.PrinterID, p.StoreID, err)
	}
	return token, nil
}

// AuthenticateCloudPRNT implements cloud.CloudPRNTService.
func (s *CloudPRNTService) AuthenticateCloudPRNT(ctx context.Context, storeID, mac, token string) (*cloud.CloudPRNTPrinter, error) {
	p := &cloud.CloudPRNTPrinter{StoreID: storeID, MAC: mac}
	var hash []byte
	var confirmMS int64
	err := s.db.pool.QueryRow(ctx, `
		SELECT printer_id, token_hash, stations, confirm_timeout_ms, created_at FROM cloudprnt_printers
		WHERE store_id = $1 AND mac = $2`, storeID, mac).Scan(&p.PrinterID, &hash, &p.Stations, &confirmMS, &p.CreatedAt)
	if isNoRows(err) {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "no CloudPRNT printer with MAC %s at store %s", mac, storeID)
	}
	if err != nil {
		return nil, fmt.Errorf("find CloudPRNT printer: %w", interpret(err))
	}
	if owner, ok := parseCloudPRNTToken(token); !ok || owner != storeID || subtle.ConstantTimeCompare(cloud.HashToken(token), hash) != 1 {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "wrong token for CloudPRNT printer %s", p.PrinterID)
	}
	p.ConfirmTimeout = time.Duration(confirmMS) * time.Millisecond
	return p, nil
}

func parseCloudPRNTToken(token string) (string, bool) {
	// The same shape as the other tokens: prefix, owner, secret.
	if len(token) <= len(cloud.CloudPRNTTokenPrefix) || token[:len(cloud.CloudPRNTTokenPrefix)] != cloud.CloudPRNTTokenPrefix {
		return "", false
	}
	return cloud.ParseGatewayToken(cloud.GatewayTokenPrefix + token[len(cloud.CloudPRNTTokenPrefix):])
}

// PollCloudPRNT implements cloud.CloudPRNTService.
func (s *CloudPRNTService) PollCloudPRNT(ctx context.Context, p *cloud.CloudPRNTPrinter, poll cloud.CloudPRNTPoll) (string, error) {
	var token string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		token = ""
		if _, err := tx.Exec(ctx, `
			UPDATE cloudprnt_printers SET status_code = $3, last_poll = now() WHERE store_id = $1 AND printer_id = $2`,
			p.StoreID, p.PrinterID, poll.StatusCode); err != nil {
			return fmt.Errorf("record poll: %w", interpret(err))
		}
		if _, err := tx.Exec(ctx, `
			UPDATE printers SET status = $3, updated_at = now()
			WHERE store_id = $1 AND printer_id = $2 AND status <> $3`, p.StoreID, p.PrinterID, string(poll.State)); err != nil {
			return fmt.Errorf("record printer status: %w", interpret(err))
		}
		// Tickets handed out and not confirmed in time, or that the
		// printer reports it could not print: nobody knows whether paper
		// came out.
		failed := poll.State != storeprint.PrinterReady && poll.State != storeprint.PrinterUnknown && !poll.Printing
		rows, err := tx.Query(ctx, `
			SELECT task_no, attempt FROM print_tasks
			WHERE store_id = $1 AND status = 'printing' AND printer_id = $2
			  AND ($3 OR updated_at < now() - $4 * interval '1 millisecond')
			FOR UPDATE`, p.StoreID, p.PrinterID, failed, p.ConfirmTimeout.Milliseconds())
		if err != nil {
			return fmt.Errorf("find unconfirmed tickets: %w", interpret(err))
		}
		type open struct {
			taskNo  string
			attempt int
		}
		stale, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (open, error) {
			var o open
			return o, r.Scan(&o.taskNo, &o.attempt)
		})
		if err != nil {
			return fmt.Errorf("find unconfirmed tickets: %w", interpret(err))
		}
		for _, o := range stale {
			why := fmt.Sprintf("not confirmed by printer %s within %s: paper may or may not have come out", p.PrinterID, p.ConfirmTimeout)
			if failed {
				why = fmt.Sprintf("printer %s reports %q after fetching the ticket: paper may or may not have come out", p.PrinterID, poll.StatusCode)
			}
			if err := setTaskStatus(ctx, tx, p, o.taskNo, storeprint.StatusAttention, storeprint.ReasonUncertain, why); err != nil {
				return err
			}
		}
		if poll.State != storeprint.PrinterReady {
			return nil // a printer that cannot print fetches nothing
		}
		var busy bool
		if err := tx.QueryRow(ctx, `
			SELECT EXISTS (SELECT 1 FROM print_tasks WHERE store_id = $1 AND status = 'printing' AND printer_id = $2)`,
			p.StoreID, p.PrinterID).Scan(&busy); err != nil {
			return fmt.Errorf("find ticket in flight: %w", interpret(err))
		}
		if busy {
			return nil // one ticket at a time
		}
		var taskNo string
		var attempt int
		err = tx.QueryRow(ctx, `
			SELECT task_no, attempt FROM print_tasks
			WHERE store_id = $1 AND status = ANY($2) AND (cardinality($3::text[]) = 0 OR station = ANY($3))
			ORDER BY created_at, task_no LIMIT 1`, p.StoreID, openStatuses, p.Stations).Scan(&taskNo, &attempt)
		if isNoRows(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find next ticket: %w", interpret(err))
		}
		token = cloud.CloudPRNTJobToken(taskNo, attempt+1)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("poll of CloudPRNT printer %s at store %s: %w", p.PrinterID, p.StoreID, err)
	}
	return token, nil
}

// FetchCloudPRNT implements cloud.CloudPRNTService.
func (s *CloudPRNTService) FetchCloudPRNT(ctx context.Context, p *cloud.CloudPRNTPrinter, token string) ([]byte, error) {
	taskNo, attempt, err := cloud.ParseCloudPRNTJobToken(token)
	if err != nil {
		return nil, err
	}
	var body []byte
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		body = nil
		var orderID, station, status string
		var current int
		var createdAt time.Time
		var orderBody []byte
		err := tx.QueryRow(ctx, `
			SELECT t.order_id, t.station, t.status, t.attempt, t.created_at, o.body
			FROM print_tasks t JOIN cloud_orders o ON o.store_id = t.store_id AND o.order_id = t.order_id
			WHERE t.store_id = $1 AND t.task_no = $2
			FOR UPDATE OF t`, p.StoreID, taskNo).Scan(&orderID, &station, &status, &current, &createdAt, &orderBody)
		if isNoRows(err) {
			return storeprint.Errorf(storeprint.ENOTFOUND, "no print job %q", token)
		}
		if err != nil {
			return fmt.Errorf("find task: %w", interpret(err))
		}
		if current != attempt-1 || !slices.Contains(openStatuses, status) || (len(p.Stations) > 0 && !slices.Contains(p.Stations, station)) {
			// Taken by another fetch, printed, or not this printer's.
			return storeprint.Errorf(storeprint.ENOTFOUND, "print job %q is no longer to be had", token)
		}
		var o storeprint.Order
		if err := json.Unmarshal(orderBody, &o); err != nil {
			return fmt.Errorf("decode order %s: %w", orderID, err)
		}
		body = cloud.TicketText(p.StoreID, &o, station, taskNo, createdAt, 0)
		sum := sha256.Sum256(body)
		// The attempt and its prepared receipt, durable before the first
		// byte goes out.
		if _, err := tx.Exec(ctx, `
			UPDATE print_tasks SET status = 'printing', attempt = $3, printer_id = $4, last_error = '', reason = '',
				version = version + 1, updated_at = now()
			WHERE store_id = $1 AND task_no = $2`, p.StoreID, taskNo, attempt, p.PrinterID); err != nil {
			return fmt.Errorf("start attempt: %w", interpret(err))
		}
		return insertReceipt(ctx, tx, p, taskNo, attempt, storeprint.ReceiptPrepared, hex.EncodeToString(sum[:]), token)
	})
	if err != nil {
		return nil, fmt.Errorf("fetch of %s by CloudPRNT printer %s: %w", token, p.PrinterID, err)
	}
	return body, nil
}

// FetchedCloudPRNT implements cloud.CloudPRNTService.
func (s *CloudPRNTService) FetchedCloudPRNT(ctx context.Context, p *cloud.CloudPRNTPrinter, token string, werr error) error {
	if werr != nil {
		return nil // the attempt stays open: its confirmation or its timeout settles it
	}
	taskNo, attempt, err := cloud.ParseCloudPRNTJobToken(token)
	if err != nil {
		return err
	}
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		return insertReceipt(ctx, tx, p, taskNo, attempt, storeprint.ReceiptSubmitted, "", token)
	})
	if err != nil {
		return fmt.Errorf("record %s sent: %w", token, err)
	}
	return nil
}

// ConfirmCloudPRNT implements cloud.CloudPRNTService.
func (s *CloudPRNTService) ConfirmCloudPRNT(ctx context.Context, p *cloud.CloudPRNTPrinter, token, code string) error {
	taskNo, attempt, err := cloud.ParseCloudPRNTJobToken(token)
	if err != nil {
		return err
	}
	outcome := confirmOutcome(code)
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		var ok bool
		err := tx.QueryRow(ctx, `
			SELECT true FROM print_tasks
			WHERE store_id = $1 AND task_no = $2 AND attempt = $3 AND status = 'printing' AND printer_id = $4
			FOR UPDATE`, p.StoreID, taskNo, attempt, p.PrinterID).Scan(&ok)
		if isNoRows(err) {
			return storeprint.Errorf(storeprint.ENOTFOUND, "print job %q is not in flight", token)
		}
		if err != nil {
			return fmt.Errorf("find task: %w", interpret(err))
		}
		switch outcome {
		case storeprint.StatusDone:
			if err := insertReceipt(ctx, tx, p, taskNo, attempt, storeprint.ReceiptPrinted, "", token); err != nil {
				return err
			}
			return setTaskStatus(ctx, tx, p, taskNo, storeprint.StatusDone, "", "")
		case storeprint.StatusQueued:
			if err := insertReceipt(ctx, tx, p, taskNo, attempt, storeprint.ReceiptNotSent, "", token); err != nil {
				return err
			}
			return setTaskStatus(ctx, tx, p, taskNo, storeprint.StatusQueued, "",
				fmt.Sprintf("printer %s could not use the ticket (%s); it was not printed", p.PrinterID, code))
		}
		return setTaskStatus(ctx, tx, p, taskNo, storeprint.StatusAttention, storeprint.ReasonUncertain,
			fmt.Sprintf("printer %s confirmed the ticket with %q: paper may or may not have come out", p.PrinterID, code))
	})
	if err != nil {
		return fmt.Errorf("confirmation of %s by CloudPRNT printer %s: %w", token, p.PrinterID, err)
	}
	return nil
}

// confirmOutcome maps a confirmation's printer status code to the task's
// next status: 2xx printed, 5xx (the printer could not use the job) not
// printed, anything else uncertain.
func confirmOutcome(code string) storeprint.Status {
	n := 0
	for _, c := range code {
		if c < '0' || c > '9' || n > 999 {
			break
		}
		n = n*10 + int(c-'0')
	}
	if n >= 1000 {
		n /= 10
	}
	switch {
	case n >= 200 && n < 300:
		return storeprint.StatusDone
	case n >= 500 && n < 600:
		return storeprint.StatusQueued
	}
	return storeprint.StatusAttention
}

// insertReceipt writes one step of an attempt's receipt; a step already
// written stays as it was.
func insertReceipt(ctx context.Context, tx pgx.Tx, p *cloud.CloudPRNTPrinter, taskNo string, attempt int, state storeprint.ReceiptState, sum, jobID string) error {
	if _, err := tx.Exec(ctx, `
		INSERT INTO receipts (store_id, task_no, attempt, state, printer_id, payload_sha256, job_id, at, gateway_id, seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, now(), '', 0)
		ON CONFLICT (store_id, task_no, attempt, state) DO NOTHING`,
		p.StoreID, taskNo, attempt, string(state), p.PrinterID, sum, jobID); err != nil {
		return fmt.Errorf("write %s receipt: %w", state, interpret(err))
	}
	return nil
}

// setTaskStatus moves a task (locked by the caller) on, and raises or
// resolves its alert as ingest does for a gateway's tasks.
func setTaskStatus(ctx context.Context, tx pgx.Tx, p *cloud.CloudPRNTPrinter, taskNo string, st storeprint.Status, reason storeprint.Reason, lastError string) error {
	var attempt int
	var updatedAt time.Time
	err := tx.QueryRow(ctx, `
		UPDATE print_tasks SET status = $3, reason = $4, last_error = $5, version = version + 1, updated_at = now(),
			printed_at = CASE WHEN $3 = 'done' THEN now() ELSE printed_at END
		WHERE store_id = $1 AND task_no = $2
		RETURNING attempt, updated_at`, p.StoreID, taskNo, string(st), string(reason), lastError).Scan(&attempt, &updatedAt)
	if err != nil {
		return fmt.Errorf("update task %s: %w", taskNo, interpret(err))
	}
	alertID := fmt.Sprintf("%s:%s:%d", taskNo, st, attempt)
	if _, err := tx.Exec(ctx, `
		UPDATE alerts SET resolved_at = $4
		WHERE store_id = $1 AND task_no = $2 AND resolved_at IS NULL AND alert_id <> $3`, p.StoreID, taskNo, alertID, updatedAt); err != nil {
		return fmt.Errorf("resolve alerts of %s: %w", taskNo, interpret(err))
	}
	if st != storeprint.StatusAttention && st != storeprint.StatusFailed {
		return nil
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO alerts (store_id, alert_id, kind, task_no, printer_id, message, raised_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (store_id, alert_id) DO NOTHING`,
		p.StoreID, alertID, string(st), taskNo, p.PrinterID, fmt.Sprintf("task %s needs a person (%s): %s", taskNo, reason, lastError), updatedAt); err != nil {
		return fmt.Errorf("raise alert for %s: %w", taskNo, interpret(err))
	}
	return nil
}
