package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// Open implements cloud.Ingester, in one transaction that holds the store's
// row: the incarnations of a store's gateways get their ranks and blocks
// one at a time.
//
//  1. the incarnation's cursor, created on its first link: the next block
//     of stored seqs and the store's next rank ("gateway data reset" when
//     another incarnation of the gateway reported before);
//  2. the gateway behind the cloud (its data dir restored from an older
//     copy: the cloud stored seqs past its last one): the offset moves on
//     so what it sends next is stored after what the cloud has, its rank
//     moves up so its states win from now on, and it learns the cloud's
//     state of every task changed past its last seq;
//  3. the cloud behind the gateway (the cursor is below what the gateway
//     compacted): the gateway is asked for a snapshot;
//  4. the downstream queue: commands the store applied and this database
//     lost are numbered past the store's cursor again; cloud orders the
//     store acknowledged and lost are sent again, with their tasks' state.
func (s *IngestService) Open(ctx context.Context, gatewayID, storeID string, h cloud.LinkHello) (*cloud.LinkWelcome, error) {
	if h.Incarnation != "" {
		if err := storeprint.CheckID("incarnation", h.Incarnation); err != nil {
			return nil, err
		}
	}
	w := &cloud.LinkWelcome{DownAfter: h.DownCursor}
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM stores WHERE store_id = $1 FOR NO KEY UPDATE`, storeID); err != nil {
			return fmt.Errorf("lock store: %w", interpret(err))
		}
		o := &opening{tx: tx, h: h, w: w}
		var err error
		if o.c, err = o.cursor(ctx, storeID, gatewayID); err != nil {
			return err
		}
		var taskNos []string
		if taskNos, err = o.gatewayBehind(ctx); err != nil {
			return err
		}
		w.Snapshot = h.Resync && o.c.wire() < h.Compacted
		more, err := o.downstream(ctx)
		if err != nil {
			return err
		}
		w.Cursor = o.c.wire()
		return o.states(ctx, append(taskNos, more...))
	})
	if err != nil {
		return nil, fmt.Errorf("open the link of gateway %s: %w", gatewayID, err)
	}
	return w, nil
}

// opening is one Open in progress.
type opening struct {
	tx pgx.Tx
	h  cloud.LinkHello
	w  *cloud.LinkWelcome
	c  *cursorRow
}

// cursor locks the incarnation's cursor, creating it on its first link.
func (o *opening) cursor(ctx context.Context, storeID, gatewayID string) (*cursorRow, error) {
	c, err := lockCursor(ctx, o.tx, storeID, gatewayID, o.h.Incarnation)
	if err == nil || storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED || isRevoked(ctx, o.tx, storeID, gatewayID) {
		return c, err
	}
	_, err = o.tx.Exec(ctx, `
		INSERT INTO gateway_cursors (store_id, gateway_id, incarnation, seq, seq_offset, rank)
		SELECT $1, $2, $3, b.off, b.off, r.rank
		FROM (SELECT (coalesce(max(seq_offset / $4), -1) + 1) * $4 AS off
		      FROM gateway_cursors WHERE store_id = $1 AND gateway_id = $2) b,
		     (SELECT coalesce(max(rank), 0) + 1 AS rank FROM gateway_cursors WHERE store_id = $1) r`,
		storeID, gatewayID, o.h.Incarnation, int64(incarnationBlock))
	if err != nil {
		return nil, fmt.Errorf("create the cursor of incarnation %q: %w", o.h.Incarnation, interpret(err))
	}
	if c, err = lockCursor(ctx, o.tx, storeID, gatewayID, o.h.Incarnation); err != nil {
		return nil, err
	}
	err = o.tx.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM gateway_cursors
		               WHERE store_id = $1 AND gateway_id = $2 AND incarnation <> $3 AND seq > seq_offset)`,
		storeID, gatewayID, o.h.Incarnation).Scan(&o.w.Reset)
	if err != nil {
		return nil, fmt.Errorf("read incarnations: %w", interpret(err))
	}
	if o.w.Reset {
		err = insertLinkEvent(ctx, o.tx, c, cloud.LinkGatewayReset, 0,
			fmt.Sprintf("Gateway %s came back with new data (its data was reset or its box replaced). What it reports from now on counts.", gatewayID))
	}
	return c, err
}

func isRevoked(ctx context.Context, tx pgx.Tx, storeID, gatewayID string) bool {
	var revoked bool
	err := tx.QueryRow(ctx, `SELECT revoked_at IS NOT NULL FROM gateways WHERE store_id = $1 AND gateway_id = $2`,
		storeID, gatewayID).Scan(&revoked)
	return err != nil || revoked
}

// gatewayBehind handles a gateway whose last seq is below what the cloud
// stored of it, and returns the tasks changed past its last seq. The range
// stays to learn (on every link) until the gateway says it learned it.
func (o *opening) gatewayBehind(ctx context.Context) ([]string, error) {
	c, h := o.c, o.h
	if !h.Resync {
		return nil, nil
	}
	var from, to int64
	if err := o.tx.QueryRow(ctx, `
		SELECT learn_from, learn_to FROM gateway_cursors WHERE store_id = $1 AND gateway_id = $2 AND incarnation = $3`,
		c.storeID, c.gatewayID, c.incarnation).Scan(&from, &to); err != nil {
		return nil, fmt.Errorf("read the cursor: %w", interpret(err))
	}
	if c.wire() > h.LastSeq {
		from, to = int64(h.LastSeq)+c.offset, c.seq
		lost := to - from
		if err := o.rebase(ctx, from, to); err != nil {
			return nil, err
		}
		o.w.Behind = true
		taskNos, err := changedTasks(ctx, o.tx, c, from, to)
		if err != nil {
			return nil, err
		}
		return taskNos, insertLinkEvent(ctx, o.tx, c, cloud.LinkGatewayBehind, int64(len(taskNos)), fmt.Sprintf(
			"Gateway %s came back with older data than the cloud has (restored from an earlier copy): %d of its events were newer in the cloud; it learns the cloud's state of %d tickets before printing.",
			c.gatewayID, lost, len(taskNos)))
	}
	if to <= from {
		return nil, nil
	}
	o.w.Behind = true // a lesson not yet learned: the gateway hears it again
	return changedTasks(ctx, o.tx, c, from, to)
}

// rebase moves the offset of a gateway behind the cloud so what it sends
// next is stored after what the cloud has, moves its rank up so its states
// win from now on, and keeps the range it must learn.
func (o *opening) rebase(ctx context.Context, from, to int64) error {
	c := o.c
	c.offset = c.seq - int64(o.h.LastSeq)
	err := o.tx.QueryRow(ctx, `
		UPDATE gateway_cursors c SET seq_offset = $4, learn_from = $5, learn_to = $6,
		       rank = (SELECT max(rank) + 1 FROM gateway_cursors WHERE store_id = $1), updated_at = now()
		WHERE store_id = $1 AND gateway_id = $2 AND incarnation = $3
		RETURNING rank`, c.storeID, c.gatewayID, c.incarnation, c.offset, from, to).Scan(&c.rank)
	if err != nil {
		return fmt.Errorf("move the gateway's offset: %w", interpret(err))
	}
	return nil
}

// changedTasks lists the tasks of a gateway's events in (from, to].
func changedTasks(ctx context.Context, tx pgx.Tx, c *cursorRow, from, to int64) ([]string, error) {
	rows, err := tx.Query(ctx, `
		SELECT DISTINCT task_no FROM task_events
		WHERE store_id = $1 AND gateway_id = $2 AND seq > $3 AND seq <= $4 AND task_no <> ''
		LIMIT $5`, c.storeID, c.gatewayID, from, to, cloud.MaxStates)
	if err != nil {
		return nil, fmt.Errorf("read the events past the gateway's: %w", interpret(err))
	}
	taskNos, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the events past the gateway's: %w", interpret(err))
	}
	return taskNos, nil
}

// Learned implements cloud.Ingester.
func (s *IngestService) Learned(ctx context.Context, gatewayID, storeID, incarnation string) error {
	if _, err := s.db.pool.Exec(ctx, `
		UPDATE gateway_cursors SET learn_from = 0, learn_to = 0
		WHERE store_id = $1 AND gateway_id = $2 AND incarnation = $3 AND learn_to > 0`,
		storeID, gatewayID, incarnation); err != nil {
		return fmt.Errorf("record what gateway %s learned: %w", gatewayID, interpret(err))
	}
	return nil
}

// downstream squares the store's down cursor with the queue, and returns
// the tasks of the orders sent again.
func (o *opening) downstream(ctx context.Context) ([]string, error) {
	c, h := o.c, o.h
	var last, acked uint64
	err := o.tx.QueryRow(ctx, `SELECT last_seq, acked_seq FROM downstream_cursors WHERE store_id = $1 FOR UPDATE`,
		c.storeID).Scan(&last, &acked)
	if err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("read the downstream cursor: %w", interpret(err))
	}
	switch {
	case h.DownCursor > last:
		// The store applied commands this database never numbered (it was
		// restored): what is not acknowledged here goes after the store's.
		return nil, renumberDownstream(ctx, o.tx, c.storeID, last, acked, h.DownCursor)
	case h.Resync && h.DownCursor < acked:
		return o.redeliver(ctx, acked)
	}
	return nil, nil
}

func renumberDownstream(ctx context.Context, tx pgx.Tx, storeID string, last, acked, storeCursor uint64) error {
	shift := int64(storeCursor) - int64(acked)
	if _, err := tx.Exec(ctx, `UPDATE downstream SET seq = seq + $3 WHERE store_id = $1 AND seq > $2`, storeID, acked, shift); err != nil {
		return fmt.Errorf("renumber downstream: %w", interpret(err))
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO downstream_cursors (store_id, last_seq, acked_seq) VALUES ($1, $2, $3)
		ON CONFLICT (store_id) DO UPDATE SET last_seq = EXCLUDED.last_seq, acked_seq = EXCLUDED.acked_seq`,
		storeID, int64(last)+shift, storeCursor)
	if err != nil {
		return fmt.Errorf("renumber downstream: %w", interpret(err))
	}
	return nil
}

// redeliver picks the cloud orders the store acknowledged and lost whose
// tickets are not all done or cancelled: the store gets them again, with
// their tasks' state. Other commands (make-up prints, copies) are not sent
// twice.
func (o *opening) redeliver(ctx context.Context, acked uint64) ([]string, error) {
	c := o.c
	rows, err := o.tx.Query(ctx, `
		SELECT d.seq, d.body, d.created_by, d.created_at FROM downstream d
		WHERE d.store_id = $1 AND d.seq > $2 AND d.seq <= $3 AND d.kind = 'order'
		  AND EXISTS (SELECT 1 FROM print_tasks t
		              WHERE t.store_id = d.store_id AND t.order_id = d.body->'order'->>'order_id'
		                AND t.status NOT IN ('done', 'cancelled'))
		ORDER BY d.seq
		LIMIT $4`, c.storeID, o.h.DownCursor, acked, cloud.MaxStates)
	if err != nil {
		return nil, fmt.Errorf("read the orders to send again: %w", interpret(err))
	}
	defer rows.Close()
	var orderIDs []string
	for rows.Next() {
		cmd, err := scanCommand(rows, c.storeID)
		if err != nil {
			return nil, fmt.Errorf("read the orders to send again: %w", err)
		}
		o.w.Redeliver = append(o.w.Redeliver, cmd)
		if cmd.Order != nil {
			orderIDs = append(orderIDs, cmd.Order.OrderID)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the orders to send again: %w", interpret(err))
	}
	rows.Close()
	o.w.Behind, o.w.DownAfter = true, acked
	taskRows, err := o.tx.Query(ctx, `SELECT task_no FROM print_tasks WHERE store_id = $1 AND order_id = ANY($2) AND version > 0`,
		c.storeID, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("read the orders' tasks: %w", interpret(err))
	}
	taskNos, err := pgx.CollectRows(taskRows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the orders' tasks: %w", interpret(err))
	}
	return taskNos, nil
}

// states reads the cloud's state of the tasks a gateway behind it learns.
func (o *opening) states(ctx context.Context, taskNos []string) error {
	if !o.w.Behind || len(taskNos) == 0 {
		return nil
	}
	rows, err := o.tx.Query(ctx, `
		SELECT task_no, version, order_id, station, printer_id, status, attempt, last_error, reason, source,
		       copy_of, backup_from, created_at, printed_at, updated_at
		FROM print_tasks WHERE store_id = $1 AND task_no = ANY($2) AND version > 0
		ORDER BY task_no LIMIT $3`, o.c.storeID, taskNos, cloud.MaxStates)
	if err != nil {
		return fmt.Errorf("read the cloud's states: %w", interpret(err))
	}
	o.w.States, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (sync.TaskEvent, error) {
		var t sync.TaskEvent
		err := row.Scan(&t.TaskNo, &t.Version, &t.OrderID, &t.Station, &t.PrinterID, &t.Status, &t.Attempt, &t.LastError,
			&t.Reason, &t.Source, &t.CopyOf, &t.BackupFrom, &t.CreatedAt, &t.PrintedAt, &t.UpdatedAt)
		return t, err
	})
	if err != nil {
		return fmt.Errorf("read the cloud's states: %w", interpret(err))
	}
	return nil
}

// insertLinkEvent records one link event of an incarnation.
func insertLinkEvent(ctx context.Context, tx pgx.Tx, c *cursorRow, kind string, count int64, message string) error {
	if _, err := tx.Exec(ctx, `
		INSERT INTO link_events (store_id, event_id, kind, gateway_id, incarnation, count, message)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.storeID, kind+":"+cloud.RandomID(12), kind, c.gatewayID, c.incarnation, count, message); err != nil {
		return fmt.Errorf("record %s: %w", kind, interpret(err))
	}
	return nil
}
