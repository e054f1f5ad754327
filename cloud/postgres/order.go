package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.OrderService = (*OrderService)(nil)

// OrderService implements cloud.OrderService.
type OrderService struct {
	db *DB
}

// NewOrderService returns an OrderService on db.
func NewOrderService(db *DB) *OrderService { return &OrderService{db: db} }

// CreateOrder implements cloud.OrderService.
//
// The order's primary key (store_id, order_id) decides between concurrent
// requests: INSERT ... ON CONFLICT DO NOTHING lets exactly one insert, the
// others wait for it to commit and then read its digest.
func (s *OrderService) CreateOrder(ctx context.Context, storeID string, o *storeprint.Order) (*cloud.OrderResult, bool, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := o.Validate(); err != nil {
		return nil, false, err
	}
	body, err := json.Marshal(o)
	if err != nil {
		return nil, false, fmt.Errorf("encode order: %w", err)
	}
	digest := o.Digest()
	res := cloud.NewOrderResult(o)
	var created bool
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		var inserted string
		q := stmt{args: []any{storeID, o.OrderID, digest, body, a.String()}}
		sql := `
			INSERT INTO cloud_orders (store_id, order_id, digest, body, created_by)
			SELECT s.store_id, $2, $3, $4, $5 FROM stores s
			WHERE s.store_id = $1` + q.tenant(a, "s.tenant_id") + `
			ON CONFLICT (store_id, order_id) DO NOTHING
			RETURNING order_id`
		err := tx.QueryRow(ctx, sql, q.args...).Scan(&inserted)
		if isNoRows(err) {
			return replay(ctx, tx, a, storeID, o.OrderID, digest)
		}
		if err != nil {
			return fmt.Errorf("insert order: %w", interpret(err))
		}
		created = true
		if err := knownStations(ctx, tx, storeID, o); err != nil {
			return err
		}

		var taskNos, stations []string
		for _, t := range res.Tasks {
			taskNos = append(taskNos, t.TaskNo)
			stations = append(stations, t.Station)
		}
		rows, err := tx.Query(ctx, `
			INSERT INTO print_tasks (store_id, task_no, order_id, station, status, source, created_at, updated_at)
			SELECT $1, u.task_no, $2, u.station, $3, 'cloud', now(), now()
			FROM unnest($4::text[], $5::text[]) AS u(task_no, station)
			ON CONFLICT (store_id, task_no) DO NOTHING
			RETURNING task_no`, storeID, o.OrderID, string(cloud.StatusPendingDelivery), taskNos, stations)
		if err != nil {
			return fmt.Errorf("insert tasks: %w", interpret(err))
		}
		insertedTasks, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("insert tasks: %w", interpret(err))
		}
		if len(insertedTasks) != len(taskNos) {
			got := map[string]bool{}
			for _, t := range insertedTasks {
				got[t] = true
			}
			for _, t := range taskNos {
				if !got[t] {
					return storeprint.Errorf(storeprint.ECONFLICT, "task %s already exists at store %s (an order of the store's own POS?)", t, storeID)
				}
			}
		}
		c := &cloud.Command{ID: "order:" + o.OrderID, Kind: storeprint.CommandOrder, Order: o, CreatedBy: a.String()}
		seq, err := insertCommand(ctx, tx, storeID, c)
		if err != nil {
			return err
		}
		if seq == 0 {
			// Unreachable while cloud_orders decides first; never queue twice.
			return storeprint.Errorf(storeprint.ECONFLICT, "order %s is already queued for store %s", o.OrderID, storeID)
		}
		return notify(ctx, tx, cloud.DownstreamChannel, storeID)
	})
	if err != nil {
		return nil, false, fmt.Errorf("create order %s at store %s: %w", o.OrderID, storeID, err)
	}
	return res, created, nil
}

// knownStations refuses an order for a station the store's gateway did
// not report among its printers' stations, once it has reported any: the
// gateway would refuse the order later, out of the caller's sight.
func knownStations(ctx context.Context, tx pgx.Tx, storeID string, o *storeprint.Order) error {
	// A printer first seen in a task event has no stations: only the
	// gateway's printer report says which stations it serves. A CloudPRNT
	// printer the cloud drives itself serves its own stations, or every
	// station when it names none.
	rows, err := tx.Query(ctx, `
		SELECT p.stations, c.printer_id IS NOT NULL
		FROM printers p LEFT JOIN cloudprnt_printers c ON c.store_id = p.store_id AND c.printer_id = p.printer_id
		WHERE p.store_id = $1`, storeID)
	if err != nil {
		return fmt.Errorf("read stations: %w", interpret(err))
	}
	known := map[string]bool{}
	var names []string
	reported, everyStation := false, false
	var sts []string
	var cloudprnt bool
	_, err = pgx.ForEachRow(rows, []any{&sts, &cloudprnt}, func() error {
		switch {
		case cloudprnt && len(sts) == 0:
			everyStation = true
		case !cloudprnt && len(sts) > 0:
			reported = true
		}
		for _, st := range sts {
			if !known[st] {
				known[st] = true
				names = append(names, st)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read stations: %w", interpret(err))
	}
	if !reported || everyStation {
		return nil // the gateway has not reported its stations yet: it decides
	}
	slices.Sort(names)
	for _, st := range o.Stations() {
		if !known[st] {
			return storeprint.Errorf(storeprint.EUNPROCESSABLE, "store %s has no station %q: its gateway reports stations %s", storeID, st, strings.Join(names, ", "))
		}
	}
	return nil
}

// FindOrder implements cloud.OrderService.
func (s *OrderService) FindOrder(ctx context.Context, storeID, orderID string) (*storeprint.Order, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	var body []byte
	q := stmt{args: []any{storeID, orderID}}
	sql := `
		SELECT o.body FROM cloud_orders o JOIN stores s ON s.store_id = o.store_id
		WHERE o.store_id = $1 AND o.order_id = $2` + q.tenant(a, "s.tenant_id")
	err = s.db.pool.QueryRow(ctx, sql, q.args...).Scan(&body)
	if isNoRows(err) {
		// Also for another tenant's store: a 404 tells nothing.
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "order %s not found at store %s", orderID, storeID)
	}
	if err != nil {
		return nil, fmt.Errorf("find order %s: %w", orderID, interpret(err))
	}
	var o storeprint.Order
	if err := json.Unmarshal(body, &o); err != nil {
		return nil, fmt.Errorf("decode order %s: %w", orderID, err)
	}
	return &o, nil
}

// replay answers an order whose insert found a row: the same content is a
// replay, other content a conflict, and no row at all an unknown store.
func replay(ctx context.Context, tx pgx.Tx, a *cloud.Actor, storeID, orderID, digest string) error {
	var got, tenantID string
	q := stmt{args: []any{storeID, orderID}}
	sql := `
		SELECT o.digest, s.tenant_id FROM cloud_orders o JOIN stores s ON s.store_id = o.store_id
		WHERE o.store_id = $1 AND o.order_id = $2` + q.tenant(a, "s.tenant_id")
	err := tx.QueryRow(ctx, sql, q.args...).Scan(&got, &tenantID)
	if isNoRows(err) {
		return storeprint.Errorf(storeprint.ENOTFOUND, "store %q not found", storeID)
	}
	if err != nil {
		return fmt.Errorf("read order: %w", interpret(err))
	}
	if got != digest {
		return storeprint.Errorf(storeprint.ECONFLICT, "order %s was already accepted with different content", orderID)
	}
	// Answered, not queued again: HQ counts the duplicates prevented.
	return audit(ctx, tx, a, cloud.Note{Reason: "order sent again with the same content"}, tenantID, storeID,
		storeprint.ActionDuplicatePrevented, "order:"+orderID, nil, nil)
}

// insertCommand appends c to the store's downstream queue and returns its
// seq, or 0 when c.ID is already queued: the caller must then roll back,
// or the seq it allocated would be a gap. The seq comes
// from the store's downstream_cursors row, locked until the transaction
// ends: seqs are gapless and become visible in order.
func insertCommand(ctx context.Context, tx pgx.Tx, storeID string, c *cloud.Command) (uint64, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return 0, fmt.Errorf("encode command: %w", err)
	}
	var seq uint64
	err = tx.QueryRow(ctx, `
		WITH next AS (
			INSERT INTO downstream_cursors AS d (store_id, last_seq) VALUES ($1, 1)
			ON CONFLICT (store_id) DO UPDATE SET last_seq = d.last_seq + 1
			RETURNING last_seq
		)
		INSERT INTO downstream (store_id, seq, command_id, kind, task_no, printer_id, body, created_by)
		SELECT $1, next.last_seq, $2, $3, $4, $5, $6, $7 FROM next
		ON CONFLICT (store_id, command_id) DO NOTHING
		RETURNING seq, created_at`,
		storeID, c.ID, c.Kind, c.TaskNo, c.PrinterID, body, c.CreatedBy).Scan(&seq, &c.CreatedAt)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue command: %w", interpret(err))
	}
	c.StoreID, c.Seq = storeID, seq
	return seq, nil
}
