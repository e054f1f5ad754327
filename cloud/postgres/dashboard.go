package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.DashboardService = (*DashboardService)(nil)

// DashboardService implements cloud.DashboardService. Every query is a
// range on an index that starts with store_id (or a small partial index),
// and every list has a LIMIT, so one answer costs the same for a chain of
// ten stores or ten thousand.
type DashboardService struct {
	db  *DB
	now func() time.Time
}

// NewDashboardService returns a DashboardService on db.
func NewDashboardService(db *DB) *DashboardService {
	return &DashboardService{db: db, now: time.Now}
}

// troubleSQL is true for a printer that needs a person: a fault, or its
// stations on the backup. It is the predicate of printers_trouble_idx.
const troubleSQL = `(p.status NOT IN ('ready', 'unknown') OR p.failover)`

// onlineSQL is true for a store with a live gateway link.
const onlineSQL = `EXISTS (SELECT 1 FROM gateways g
	WHERE g.store_id = s.store_id AND g.revoked_at IS NULL AND g.online AND g.last_seen > now() - $2::interval)`

// Dashboard implements cloud.DashboardService, in two round trips: the
// summary, the page of stores, the printers in trouble and the queue;
// then the details and today's counts of the stores on the page.
func (s *DashboardService) Dashboard(ctx context.Context, f cloud.DashboardFilter) (*cloud.Dashboard, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(s.now()); err != nil {
		return nil, err
	}
	scope := tenantScope(a)
	d := &cloud.Dashboard{Since: f.Since, Stores: []*cloud.StoreDay{}, Printers: []*cloud.StorePrinter{}, Queue: []*cloud.DashboardAlert{},
		LinkEvents: []*cloud.LinkEvent{}}

	b := &pgx.Batch{}
	b.Queue(`SELECT now()`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&d.At)
	})
	byID := map[string]*cloud.StoreDay{}
	var ids, tenants []string
	b.Queue(`
		WITH st AS MATERIALIZED (
			SELECT s.store_id, s.tenant_id, s.name, s.created_at, `+onlineSQL+` AS online,
			       EXISTS (SELECT 1 FROM printers p WHERE p.store_id = s.store_id AND `+troubleSQL+`) AS printer_trouble,
			       EXISTS (SELECT 1 FROM alerts al WHERE al.store_id = s.store_id AND al.resolved_at IS NULL) AS alerting
			FROM stores s
			WHERE ($1::text IS NULL OR s.tenant_id = $1)
		)
		SELECT store_id, tenant_id, name, created_at, online, NOT online OR printer_trouble OR alerting AS trouble,
		       count(*) OVER (), count(*) FILTER (WHERE online) OVER (),
		       count(*) FILTER (WHERE NOT online OR printer_trouble OR alerting) OVER ()
		FROM st
		ORDER BY trouble DESC, tenant_id, store_id
		LIMIT $3`, scope, cloud.OnlineWindow, f.Limit).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			st := &cloud.StoreDay{StoreStatus: cloud.StoreStatus{Gateways: []*cloud.Gateway{}, Printers: []*cloud.Printer{}}}
			if err := rows.Scan(&st.ID, &st.TenantID, &st.Name, &st.CreatedAt, &st.Online, &st.Trouble,
				&d.Summary.Stores, &d.Summary.Online, &d.Summary.StoresInTrouble); err != nil {
				return err
			}
			d.Stores = append(d.Stores, st)
			byID[st.ID] = st
			ids = append(ids, st.ID)
			tenants = append(tenants, st.TenantID)
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT p.store_id, s.name, `+onlineSQL+`, p.printer_id, p.status, p.stations, p.backup, p.failover, p.updated_at,
		       count(*) OVER ()
		FROM printers p JOIN stores s ON s.store_id = p.store_id
		WHERE `+troubleSQL+` AND ($1::text IS NULL OR s.tenant_id = $1)
		ORDER BY s.tenant_id, p.store_id, p.printer_id
		LIMIT $3`, scope, cloud.OnlineWindow, cloud.MaxDashboardPrinters).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			p := &cloud.StorePrinter{}
			if err := rows.Scan(&p.StoreID, &p.StoreName, &p.StoreOnline, &p.ID, &p.Status, &p.Stations, &p.Backup,
				&p.Failover, &p.UpdatedAt, &d.Summary.PrintersInTrouble); err != nil {
				return err
			}
			d.Printers = append(d.Printers, p)
		}
		return rows.Err()
	})
	// The page of open alerts first, then their tasks: the join runs for
	// the alerts shown only.
	b.Queue(`
		WITH shown AS (
			SELECT al.store_id, s.name, al.alert_id, al.kind, al.task_no, al.printer_id, al.message, al.raised_at,
			       count(*) OVER () AS total
			FROM alerts al JOIN stores s ON s.store_id = al.store_id
			WHERE al.resolved_at IS NULL AND ($1::text IS NULL OR s.tenant_id = $1)
			ORDER BY al.raised_at, al.store_id, al.alert_id
			LIMIT $2
		)
		SELECT o.store_id, o.name, o.alert_id, o.kind, o.task_no, o.printer_id, o.message, o.raised_at,
		       coalesce(t.order_id, ''), coalesce(t.station, ''), coalesce(t.status, ''), coalesce(t.reason, ''),
		       coalesce(t.last_error, ''), coalesce(t.attempt, 0), o.total
		FROM shown o
		LEFT JOIN print_tasks t ON t.store_id = o.store_id AND t.task_no = o.task_no
		ORDER BY o.raised_at, o.store_id, o.alert_id`, scope, cloud.MaxDashboardQueue).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			q := &cloud.DashboardAlert{}
			if err := rows.Scan(&q.StoreID, &q.StoreName, &q.ID, &q.Kind, &q.TaskNo, &q.PrinterID, &q.Message, &q.RaisedAt,
				&q.OrderID, &q.Station, &q.TaskStatus, &q.Reason, &q.LastError, &q.Attempt, &d.Summary.OpenAlerts); err != nil {
				return err
			}
			d.Queue = append(d.Queue, q)
		}
		return rows.Err()
	})
	b.Queue(linkEventsSQL+`
		WHERE ($1::text IS NULL OR s.tenant_id = $1) AND e.at > now() - $2::interval
		ORDER BY e.at DESC, e.event_id
		LIMIT $3`, scope, cloud.DashboardLinkWindow, cloud.MaxDashboardLinkEvents).Query(func(rows pgx.Rows) error {
		var err error
		d.LinkEvents, err = scanLinkEvents(rows)
		return err
	})
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("read dashboard: %w", interpret(err))
	}
	if len(ids) == 0 {
		return d, nil
	}
	if err := s.storeDetails(ctx, d, byID, ids, tenants, f.Since); err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	return d, nil
}

// storeDetails fills the gateways, printers, open alert counts and today's
// counts of the stores on the page. The ids come from the scoped query.
func (s *DashboardService) storeDetails(ctx context.Context, d *cloud.Dashboard, byID map[string]*cloud.StoreDay, ids, tenants []string, since time.Time) error {
	b := &pgx.Batch{}
	b.Queue(`
		SELECT g.store_id, g.gateway_id, g.created_at, g.revoked_at,
		       g.online AND g.revoked_at IS NULL AND g.last_seen > now() - $2::interval,
		       g.last_seen, g.version
		FROM gateways g
		WHERE g.store_id = ANY($1)
		ORDER BY g.store_id, g.created_at`, ids, cloud.OnlineWindow).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			g := &cloud.Gateway{}
			if err := rows.Scan(&g.StoreID, &g.ID, &g.CreatedAt, &g.RevokedAt, &g.Online, &g.LastSeen, &g.Version); err != nil {
				return err
			}
			st := byID[g.StoreID]
			g.TenantID = st.TenantID
			st.Gateways = append(st.Gateways, g)
			if g.LastSeen != nil && (st.LastSeen == nil || g.LastSeen.After(*st.LastSeen)) {
				st.LastSeen = g.LastSeen
			}
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT p.store_id, p.printer_id, p.status, p.stations, p.backup, p.failover, p.updated_at
		FROM printers p
		WHERE p.store_id = ANY($1)
		ORDER BY p.store_id, p.printer_id`, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			p := &cloud.Printer{}
			var storeID string
			if err := rows.Scan(&storeID, &p.ID, &p.Status, &p.Stations, &p.Backup, &p.Failover, &p.UpdatedAt); err != nil {
				return err
			}
			byID[storeID].Printers = append(byID[storeID].Printers, p)
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT store_id, count(*)
		FROM alerts
		WHERE store_id = ANY($1) AND resolved_at IS NULL
		GROUP BY store_id`, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID string
			var n int
			if err := rows.Scan(&storeID, &n); err != nil {
				return err
			}
			byID[storeID].OpenAlerts = n
		}
		return rows.Err()
	})
	// Printed today and the median time to paper: an index-only range of
	// print_tasks_printed_idx per store.
	b.Queue(`
		SELECT store_id, count(*),
		       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM printed_at - created_at)) * 1000)::bigint
		FROM print_tasks
		WHERE store_id = ANY($1) AND printed_at IS NOT NULL AND printed_at >= $2
		GROUP BY store_id`, ids, since).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID string
			var n int
			var median int64
			if err := rows.Scan(&storeID, &n, &median); err != nil {
				return err
			}
			st := byID[storeID]
			st.Today.Printed = n
			st.Today.MedianToPaperMS = &median
		}
		return rows.Err()
	})
	// Failed and flagged today: tickets, not alerts (a ticket flagged twice
	// counts once).
	b.Queue(`
		SELECT store_id,
		       count(DISTINCT task_no) FILTER (WHERE kind = 'failed'),
		       count(DISTINCT task_no) FILTER (WHERE kind = 'attention_required')
		FROM alerts
		WHERE store_id = ANY($1) AND raised_at >= $2
		GROUP BY store_id`, ids, since).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID string
			var failed, flagged int
			if err := rows.Scan(&storeID, &failed, &flagged); err != nil {
				return err
			}
			byID[storeID].Today.Failed, byID[storeID].Today.Flagged = failed, flagged
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT u.store_id, count(a.audit_id)
		FROM unnest($1::text[], $2::text[]) AS u(tenant_id, store_id)
		JOIN audit_events a ON a.tenant_id = u.tenant_id AND a.store_id = u.store_id
		WHERE a.at >= $3 AND a.action = $4
		GROUP BY u.store_id`, tenants, ids, since, storeprint.ActionDuplicatePrevented).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID string
			var n int
			if err := rows.Scan(&storeID, &n); err != nil {
				return err
			}
			byID[storeID].Today.DuplicatesPrevented = n
		}
		return rows.Err()
	})
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return interpret(err)
	}
	return nil
}

// SearchTasks implements cloud.DashboardService: the tasks, then their
// receipts, events and audit trails in one more round trip.
func (s *DashboardService) SearchTasks(ctx context.Context, q cloud.TaskSearch) ([]*cloud.TaskHistory, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	var store *string
	if q.StoreID != "" {
		if err := visibleStore(ctx, s.db.pool, a, q.StoreID); err != nil {
			return nil, err
		}
		store = &q.StoreID
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT t.store_id, s.tenant_id, s.name, `+taskColumns+`
		FROM print_tasks t JOIN stores s ON s.store_id = t.store_id
		WHERE (t.order_id = $1 OR t.task_no = $1) AND ($2::text IS NULL OR s.tenant_id = $2)
		  AND ($3::text IS NULL OR t.store_id = $3)
		ORDER BY t.created_at DESC, t.store_id, t.task_no
		LIMIT $4`, q.Query, tenantScope(a), store, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("search tasks: %w", interpret(err))
	}
	out := []*cloud.TaskHistory{}
	var storeIDs, tenantIDs, taskNos []string
	for rows.Next() {
		h := &cloud.TaskHistory{Task: cloud.Task{Receipts: []*cloud.Receipt{}}, Events: []*cloud.TaskEventRecord{}, Audit: []*cloud.AuditEvent{}}
		var tenantID string
		t := &h.Task
		if err := rows.Scan(&t.StoreID, &tenantID, &h.StoreName, &t.TaskNo, &t.OrderID, &t.Station, &t.PrinterID, &t.Status,
			&t.Version, &t.Attempt, &t.LastError, &t.Reason, &t.Source, &t.CopyOf, &t.BackupFrom, &t.CreatedAt,
			&t.PrintedAt, &t.UpdatedAt); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search tasks: %w", interpret(err))
		}
		out = append(out, h)
		storeIDs, tenantIDs, taskNos = append(storeIDs, t.StoreID), append(tenantIDs, tenantID), append(taskNos, t.TaskNo)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search tasks: %w", interpret(err))
	}
	if len(out) == 0 {
		return out, nil
	}
	byKey := make(map[[2]string]*cloud.TaskHistory, len(out))
	for _, h := range out {
		byKey[[2]string{h.StoreID, h.TaskNo}] = h
	}
	b := &pgx.Batch{}
	b.Queue(`
		SELECT r.store_id, r.task_no, r.attempt, r.state, r.printer_id, r.payload_sha256, r.process_id, r.job_id, r.reprint, r.at
		FROM unnest($1::text[], $2::text[]) AS u(store_id, task_no)
		JOIN receipts r ON r.store_id = u.store_id AND r.task_no = u.task_no
		ORDER BY r.store_id, r.task_no, r.attempt, r.at,
		         array_position(ARRAY['prepared','submitted','printed','confirmed'], r.state)`,
		storeIDs, taskNos).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID, taskNo string
			r := &cloud.Receipt{}
			if err := rows.Scan(&storeID, &taskNo, &r.Attempt, &r.State, &r.PrinterID, &r.PayloadSHA256, &r.ProcessID,
				&r.JobID, &r.Reprint, &r.At); err != nil {
				return err
			}
			h := byKey[[2]string{storeID, taskNo}]
			h.Receipts = append(h.Receipts, r)
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT u.store_id, u.task_no, e.gateway_id, e.seq, e.kind, e.at, e.received_at, e.data::text
		FROM unnest($1::text[], $2::text[]) AS u(store_id, task_no)
		CROSS JOIN LATERAL (
			SELECT * FROM task_events e
			WHERE e.store_id = u.store_id AND e.task_no = u.task_no AND e.task_no <> ''
			ORDER BY e.seq
			LIMIT $3
		) e
		ORDER BY u.store_id, u.task_no, e.seq`, storeIDs, taskNos, cloud.MaxHistoryEvents).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID, taskNo, data string
			e := &cloud.TaskEventRecord{}
			if err := rows.Scan(&storeID, &taskNo, &e.GatewayID, &e.Seq, &e.Kind, &e.At, &e.ReceivedAt, &data); err != nil {
				return err
			}
			e.Data = []byte(data)
			h := byKey[[2]string{storeID, taskNo}]
			h.Events = append(h.Events, e)
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT u.store_id, u.task_no, a.tenant_id, a.audit_id, a.source, a.actor, a.operator, a.action, a.resource,
		       a.reason, a.before, a.after, a.at
		FROM unnest($1::text[], $2::text[], $3::text[]) AS u(tenant_id, store_id, task_no)
		CROSS JOIN LATERAL (
			SELECT * FROM audit_events a
			WHERE a.tenant_id = u.tenant_id AND a.store_id = u.store_id AND a.resource = 'task/' || u.task_no
			ORDER BY a.at, a.audit_id
			LIMIT $4
		) a
		ORDER BY u.store_id, u.task_no, a.at, a.audit_id`, tenantIDs, storeIDs, taskNos, cloud.MaxHistoryAudit).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID, taskNo string
			var before, after []byte
			e := &cloud.AuditEvent{}
			if err := rows.Scan(&storeID, &taskNo, &e.TenantID, &e.ID, &e.Source, &e.Actor, &e.Operator, &e.Action,
				&e.Resource, &e.Reason, &before, &after, &e.At); err != nil {
				return err
			}
			e.StoreID = storeID
			e.Before, e.After = rawJSON(before), rawJSON(after)
			h := byKey[[2]string{storeID, taskNo}]
			h.Audit = append(h.Audit, e)
		}
		return rows.Err()
	})
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("read task history: %w", interpret(err))
	}
	return out, nil
}
