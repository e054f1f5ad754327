package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	stdsync "sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.DashboardService = (*DashboardService)(nil)

// DashboardService implements cloud.DashboardService.
//
// An answer is computed at most once per DashboardMaxAge for each scope
// (the admin, each tenant) and filter, whatever the number of viewers and
// nodes: it is kept in dashboard_answers, read by every node, and computed
// again by one node at a time, the one holding the transaction-scoped
// advisory lock of its key. The first caller to find the answer past
// half its maximum age has it computed again behind it, so that callers
// seldom find it expired. One that does gets it all the same while a node
// computes the next one, if it expired less than staleGrace ago; else (or
// when there is none) it waits for the computation. Each node keeps the
// answers it decoded, so an unchanged answer is one primary-key read.
//
// Every query of the computation is a range on an index that starts with
// store_id, a small partial index, or a hash join over the stores, never
// over the chain's history; every list has a LIMIT and the alert counts
// stop at cloud.MaxDashboardCount. JIT is off for the computation: its
// plans never gain from it and pay its compile time on every run.
type DashboardService struct {
	db  *DB
	now func() time.Time

	// MaxAge is how old an answer may be; zero means
	// cloud.DashboardMaxAge.
	MaxAge time.Duration
	// AlertTTL is how long an alert nobody resolved stays current; zero
	// means cloud.DefaultAlertTTL.
	AlertTTL time.Duration

	reads      singleflight.Group
	refreshes  singleflight.Group
	mu         stdsync.Mutex
	known      map[string]knownAnswer // answers decoded on this node, by key
	refreshing map[string]bool        // keys this node is computing
}

type knownAnswer struct {
	computedAt time.Time
	d          *cloud.Dashboard
}

// NewDashboardService returns a DashboardService on db.
func NewDashboardService(db *DB) *DashboardService {
	return &DashboardService{db: db, now: time.Now, known: map[string]knownAnswer{}, refreshing: map[string]bool{}}
}

// scopeKey names the actor's scope in dashboard_answers: "" for the
// admin, else the tenant ("!none" for a tenant actor without a tenant,
// who sees nothing; no tenant id holds a '!').
func scopeKey(a *cloud.Actor) string {
	t, scoped := a.TenantScope()
	switch {
	case !scoped:
		return ""
	case a.TenantID == "":
		return "!none"
	}
	return t
}

// staleGrace is how long past its maximum age an answer may still be
// served while another node computes the next one.
const staleGrace = 5 * time.Second

// forgetAfter is when an answer nobody asked for again is dropped: the
// filter holds the start of the viewer's day, so keys change every day.
const forgetAfter = time.Hour

func (s *DashboardService) maxAge() time.Duration {
	if s.MaxAge <= 0 {
		return cloud.DashboardMaxAge
	}
	return s.MaxAge
}

func (s *DashboardService) alertTTL() time.Duration {
	if s.AlertTTL <= 0 {
		return cloud.DefaultAlertTTL
	}
	return s.AlertTTL
}

// Dashboard implements cloud.DashboardService.
func (s *DashboardService) Dashboard(ctx context.Context, f cloud.DashboardFilter) (*cloud.Dashboard, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if err := f.Validate(now); err != nil {
		return nil, err
	}
	tenant := scopeKey(a)
	filter := f.Since.UTC().Format(time.RFC3339Nano) + "/" + strconv.Itoa(f.Limit)
	id := tenant + "/" + filter
	// Callers on this node share each read and each refresh; a caller that
	// goes away fails neither.
	detached := func(d time.Duration) (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), d)
	}
	v, err, _ := s.reads.Do(id, func() (any, error) {
		ctx, cancel := detached(10 * time.Second)
		defer cancel()
		return s.read(ctx, s.db.pool, tenant, filter)
	})
	if err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	r := v.(stored)
	refresh := func() <-chan singleflight.Result {
		return s.refreshes.DoChan(id, func() (any, error) {
			s.mu.Lock()
			s.refreshing[id] = true
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				delete(s.refreshing, id)
				s.mu.Unlock()
			}()
			ctx, cancel := detached(time.Minute)
			defer cancel()
			return s.refresh(ctx, a, f, tenant, filter, now)
		})
	}
	if r.found && r.age < s.maxAge() {
		if r.age >= s.maxAge()/2 {
			refresh() // ahead of its expiry, behind this caller
		}
		return r.d, nil
	}
	s.mu.Lock()
	computing := s.refreshing[id]
	s.mu.Unlock()
	if computing && r.found && r.age < s.maxAge()+staleGrace {
		return r.d, nil // expired while this node computes the next one
	}
	refreshed := refresh()
	select {
	case res := <-refreshed:
		if res.Err != nil {
			return nil, fmt.Errorf("read dashboard: %w", res.Err)
		}
		return res.Val.(*cloud.Dashboard), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stored is a row of dashboard_answers as read.
type stored struct {
	found      bool
	computedAt time.Time
	age        time.Duration
	d          *cloud.Dashboard
}

// read reads the stored answer, its body only when it is not the one this
// node knows already.
func (s *DashboardService) read(ctx context.Context, q querier, tenant, filter string) (stored, error) {
	id := tenant + "/" + filter
	s.mu.Lock()
	known := s.known[id]
	s.mu.Unlock()
	var r stored
	var ageSeconds float64
	var body []byte
	err := q.QueryRow(ctx, `
		SELECT computed_at, extract(epoch FROM clock_timestamp() - computed_at)::float8,
		       CASE WHEN computed_at = $3 THEN NULL ELSE body END
		FROM dashboard_answers
		WHERE tenant_id = $1 AND key = $2`, tenant, filter, known.computedAt).Scan(&r.computedAt, &ageSeconds, &body)
	if isNoRows(err) {
		return r, nil
	}
	if err != nil {
		return r, interpret(err)
	}
	r.found, r.age = true, time.Duration(ageSeconds*float64(time.Second))
	if body == nil {
		r.d = known.d
		return r, nil
	}
	d := &cloud.Dashboard{}
	if err := json.Unmarshal(body, d); err != nil {
		return r, fmt.Errorf("decode the stored answer: %w", err)
	}
	d.Share(body)
	r.d = d
	s.remember(id, r.computedAt, d)
	return r, nil
}

func (s *DashboardService) remember(id string, computedAt time.Time, d *cloud.Dashboard) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, a := range s.known {
		if time.Since(a.computedAt) > forgetAfter {
			delete(s.known, k)
		}
	}
	s.known[id] = knownAnswer{computedAt: computedAt, d: d}
}

// refresh computes the answer again and stores it, unless another node
// is computing it (then the answer before does, if it expired less than
// staleGrace ago) or has just stored one.
func (s *DashboardService) refresh(ctx context.Context, a *cloud.Actor, f cloud.DashboardFilter, tenant, filter string, now time.Time) (*cloud.Dashboard, error) {
	var out *cloud.Dashboard
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		lock := tenant + "/" + filter
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`, lock).Scan(&mine); err != nil {
			return interpret(err)
		}
		if !mine {
			r, err := s.read(ctx, tx, tenant, filter)
			if err != nil {
				return err
			}
			if r.found && r.age < s.maxAge()+staleGrace {
				out = r.d // another node is computing the next one
				return nil
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lock); err != nil {
				return interpret(err)
			}
		}
		// Another node may have stored a new one meanwhile.
		r, err := s.read(ctx, tx, tenant, filter)
		if err != nil {
			return err
		}
		if r.found && r.age < s.maxAge()/2 {
			out = r.d
			return nil
		}
		d, err := s.compute(ctx, tx, a, f, now)
		if err != nil {
			return err
		}
		body, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode the answer: %w", err)
		}
		d.Share(body)
		// now() is the transaction's start: the answer holds at least
		// everything committed before it.
		var at time.Time
		if err := tx.QueryRow(ctx, `
			INSERT INTO dashboard_answers (tenant_id, key, computed_at, body) VALUES ($1, $2, now(), $3)
			ON CONFLICT (tenant_id, key) DO UPDATE SET computed_at = EXCLUDED.computed_at, body = EXCLUDED.body
			RETURNING computed_at`, tenant, filter, body).Scan(&at); err != nil {
			return fmt.Errorf("store the answer: %w", interpret(err))
		}
		if _, err := tx.Exec(ctx, `DELETE FROM dashboard_answers WHERE tenant_id = $1 AND computed_at < now() - $2::interval`,
			tenant, forgetAfter); err != nil {
			return fmt.Errorf("drop old answers: %w", interpret(err))
		}
		s.remember(tenant+"/"+filter, at, d)
		out = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// forgetDashboards drops the stored answers of a tenant's scopes (the
// tenant's own and the admin's) in tx: the next read computes them again.
func forgetDashboards(ctx context.Context, tx pgx.Tx, tenantID string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM dashboard_answers WHERE tenant_id = '' OR tenant_id = $1`, tenantID); err != nil {
		return fmt.Errorf("drop dashboard answers: %w", interpret(err))
	}
	return nil
}

// troubleSQL is true for a printer that needs a person: a fault, its
// stations on the backup, or trouble in words (it cuts off, it does not
// confirm). It is the predicate of printers_trouble_idx.
const troubleSQL = `(p.status NOT IN ('ready', 'unknown') OR p.failover OR p.word <> '' OR p.stale > 0)`

// needsPersonSQL is true for an alert that needs a person, given the
// cutoff placeholder: the predicate of alerts_unacked_raised_idx and a
// range of it.
func needsPersonSQL(cutoff string) string {
	return `al.resolved_at IS NULL AND al.acknowledged_at IS NULL AND al.raised_at >= ` + cutoff
}

// compute reads the dashboard in tx, in two round trips: the summary, the
// page of stores, the printers in trouble and the queue; then the details
// and today's counts of the stores on the page.
func (s *DashboardService) compute(ctx context.Context, tx pgx.Tx, a *cloud.Actor, f cloud.DashboardFilter, now time.Time) (*cloud.Dashboard, error) {
	dq := &dashboardQuery{
		d: &cloud.Dashboard{Since: f.Since, Stores: []*cloud.StoreDay{}, Printers: []*cloud.StorePrinter{}, Queue: []*cloud.DashboardAlert{},
			LinkEvents: []*cloud.LinkEvent{}},
		a: a, f: f, now: now, ttl: s.alertTTL(), cutoff: now.Add(-s.alertTTL()),
		byID: map[string]*cloud.StoreStatus{},
	}
	d := dq.d
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('jit', 'off', true), now()`).QueryRow(func(row pgx.Row) error {
		var jit string
		return row.Scan(&jit, &d.At)
	})
	dq.queueStores(b)
	dq.queuePrinters(b)
	dq.queuePrintersInTrouble(b)
	dq.queueQueue(b)
	dq.queueAlertCounts(b)
	dq.queueLinkEvents(b)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, interpret(err)
	}
	if len(dq.ids) == 0 {
		return d, nil
	}
	days := make(map[string]*cloud.StoreDay, len(d.Stores))
	for _, st := range d.Stores {
		days[st.ID] = st
	}
	if err := s.storeDetails(ctx, tx, dq.byID, days, dq.ids, dq.tenants, f.Since, dq.cutoff); err != nil {
		return nil, err
	}
	return d, nil
}

// dashboardQuery is one reading of the dashboard: what its queries are
// asked with, and what they fill in as the batch's answers come back.
type dashboardQuery struct {
	d      *cloud.Dashboard
	a      *cloud.Actor
	f      cloud.DashboardFilter
	now    time.Time
	ttl    time.Duration // how long an alert needs a person (alertTTL)
	cutoff time.Time     // alerts raised before it no longer count

	// The page of stores, filled by queueStores: by id, and their ids and
	// tenants in page order.
	byID         map[string]*cloud.StoreStatus
	ids, tenants []string
}

// queueStores: which stores are online, which have a printer or an alert
// in trouble, as sets over this scope's stores, joined by hash (NOT IN: a
// hashed subplan however few rows the planner expects online); the page
// is the first stores in trouble, then the others, by tenant and id.
func (dq *dashboardQuery) queueStores(b *pgx.Batch) {
	var q stmt
	win, cut := q.arg(cloud.OnlineWindow), q.arg(dq.cutoff)
	join := func(alias string) string { // the scope's stores, for a table without tenant_id
		if t, scoped := dq.a.TenantScope(); scoped {
			return " JOIN stores sc ON sc.store_id = " + alias + ".store_id AND sc.tenant_id = " + q.arg(t)
		}
		return ""
	}
	where := func(alias string) string {
		if t, scoped := dq.a.TenantScope(); scoped {
			return " WHERE " + alias + ".tenant_id = " + q.arg(t)
		}
		return ""
	}
	sql := `
		WITH online AS MATERIALIZED (
			SELECT DISTINCT g.store_id FROM gateways g` + join("g") + `
			WHERE g.online AND g.revoked_at IS NULL AND g.last_seen > now() - ` + win + `::interval
		), bad AS MATERIALIZED (
			SELECT p.store_id FROM printers p` + join("p") + ` WHERE ` + troubleSQL + `
			UNION
			SELECT al.store_id FROM alerts al` + join("al") + ` WHERE ` + needsPersonSQL(cut) + `
		)
		SELECT s.store_id, s.tenant_id, s.name, s.created_at, o.store_id IS NOT NULL,
		       o.store_id IS NULL OR b.store_id IS NOT NULL AS trouble,
		       (SELECT count(*) FROM stores s2` + where("s2") + `),
		       (SELECT count(*) FROM online),
		       (SELECT count(*) FROM online o2 WHERE o2.store_id NOT IN (SELECT b2.store_id FROM bad b2))
		FROM stores s
		LEFT JOIN online o ON o.store_id = s.store_id
		LEFT JOIN bad b ON b.store_id = s.store_id` + where("s") + `
		ORDER BY trouble DESC, s.tenant_id, s.store_id
		LIMIT ` + q.arg(dq.f.Limit)
	b.Queue(sql, q.args...).Query(func(rows pgx.Rows) error {
		var fine int
		for rows.Next() {
			st := &cloud.StoreDay{StoreStatus: cloud.StoreStatus{Gateways: []*cloud.Gateway{}, Printers: []*cloud.Printer{}}}
			if err := rows.Scan(&st.ID, &st.TenantID, &st.Name, &st.CreatedAt, &st.Online, &st.Trouble,
				&dq.d.Summary.Stores, &dq.d.Summary.Online, &fine); err != nil {
				return err
			}
			dq.d.Summary.StoresInTrouble = dq.d.Summary.Stores - fine
			dq.d.Stores = append(dq.d.Stores, st)
			dq.byID[st.ID] = &st.StoreStatus
			dq.ids = append(dq.ids, st.ID)
			dq.tenants = append(dq.tenants, st.TenantID)
		}
		return rows.Err()
	})
}

// queuePrinters: the page of printers in trouble first, then whether each
// one's store is online: a probe of the gateways' primary key per printer
// shown.
func (dq *dashboardQuery) queuePrinters(b *pgx.Batch) {
	var q stmt
	win := q.arg(cloud.OnlineWindow)
	scope := q.tenant(dq.a, "s.tenant_id")
	// The page of printers first, then whether each one's store is
	// online: a probe of the gateways' primary key per printer shown.
	sql := `
		SELECT p.store_id, p.name, g.store_id IS NOT NULL,
		       p.printer_id, p.status, p.stations, p.backup, p.failover, p.word, p.updated_at,
		       p.kind, p.open, p.shown, p.stale
		FROM (
			SELECT p.*, s.name, s.tenant_id
			FROM printers p JOIN stores s ON s.store_id = p.store_id
			WHERE ` + troubleSQL + scope + `
			ORDER BY s.tenant_id, p.store_id, p.printer_id
			LIMIT ` + q.arg(cloud.MaxDashboardPrinters) + `
		) p
		LEFT JOIN LATERAL (
			SELECT g.store_id FROM gateways g
			WHERE g.store_id = p.store_id AND g.revoked_at IS NULL AND g.online AND g.last_seen > now() - ` + win + `::interval
			LIMIT 1
		) g ON true
		ORDER BY p.tenant_id, p.store_id, p.printer_id`
	b.Queue(sql, q.args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			p := &cloud.StorePrinter{}
			if err := rows.Scan(&p.StoreID, &p.StoreName, &p.StoreOnline, &p.ID, &p.Status, &p.Stations, &p.Backup,
				&p.Failover, &p.Word, &p.UpdatedAt, &p.Kind, &p.Open, &p.Shown, &p.Stale); err != nil {
				return err
			}
			dq.d.Printers = append(dq.d.Printers, p)
		}
		return rows.Err()
	})
}

// queuePrintersInTrouble counts the scope's printers in trouble.
func (dq *dashboardQuery) queuePrintersInTrouble(b *pgx.Batch) {
	var q stmt
	sql := `SELECT count(*) FROM printers p JOIN stores s ON s.store_id = p.store_id WHERE ` + troubleSQL + q.tenant(dq.a, "s.tenant_id")
	b.Queue(sql, q.args...).QueryRow(func(row pgx.Row) error {
		return row.Scan(&dq.d.Summary.PrintersInTrouble)
	})
}

// queueQueue: the page of alerts that need a person, then of those a
// person took on, each a range of its partial index; then their tasks.
func (dq *dashboardQuery) queueQueue(b *pgx.Batch) {
	var q stmt
	cut, scope, n := q.arg(dq.cutoff), q.tenant(dq.a, "s.tenant_id"), q.arg(cloud.MaxDashboardQueue)
	part := func(acked string) string {
		return `(SELECT al.store_id, s.name, al.alert_id, al.kind, al.task_no, al.printer_id, al.message, al.raised_at,
		        al.acknowledged_at, al.acknowledged_by, ` + alertPrinterKindSQL + ` AS printer_kind
		 FROM alerts al JOIN stores s ON s.store_id = al.store_id
		 WHERE al.resolved_at IS NULL AND al.acknowledged_at ` + acked + ` AND al.raised_at >= ` + cut + scope + `
		 ORDER BY al.raised_at, al.store_id, al.alert_id
		 LIMIT ` + n + `)`
	}
	sql := `
		WITH shown AS (` + part("IS NULL") + ` UNION ALL ` + part("IS NOT NULL") + `)
		SELECT o.store_id, o.name, o.alert_id, o.kind, o.task_no, o.printer_id, o.message, o.raised_at,
		       o.acknowledged_at, o.acknowledged_by, o.printer_kind,
		       coalesce(t.order_id, ''), coalesce(t.station, ''), coalesce(t.status, ''), coalesce(t.reason, ''),
		       coalesce(t.last_error, ''), coalesce(t.attempt, 0), t.created_at
		FROM shown o
		LEFT JOIN print_tasks t ON t.store_id = o.store_id AND t.task_no = o.task_no
		ORDER BY o.acknowledged_at IS NOT NULL, o.raised_at, o.store_id, o.alert_id
		LIMIT ` + n
	b.Queue(sql, q.args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			q := &cloud.DashboardAlert{}
			if err := rows.Scan(&q.StoreID, &q.StoreName, &q.ID, &q.Kind, &q.TaskNo, &q.PrinterID, &q.Message, &q.RaisedAt,
				&q.AcknowledgedAt, &q.AcknowledgedBy, &q.PrinterKind,
				&q.OrderID, &q.Station, &q.TaskStatus, &q.Reason, &q.LastError, &q.Attempt, &q.AcceptedAt); err != nil {
				return err
			}
			q.SetState(dq.ttl, dq.now)
			dq.d.Queue = append(dq.d.Queue, q)
		}
		return rows.Err()
	})
}

// queueAlertCounts counts the open and the acknowledged alerts, up to
// cloud.MaxDashboardCount.
func (dq *dashboardQuery) queueAlertCounts(b *pgx.Batch) {
	var q stmt
	cut, scope, limit := q.arg(dq.cutoff), q.tenant(dq.a, "s.tenant_id"), q.arg(cloud.MaxDashboardCount+1)
	count := func(acked string) string {
		return `(SELECT count(*) FROM (
			SELECT 1 FROM alerts al JOIN stores s ON s.store_id = al.store_id
			WHERE al.resolved_at IS NULL AND al.acknowledged_at ` + acked + ` AND al.raised_at >= ` + cut + scope + `
			LIMIT ` + limit + `) n)`
	}
	sql := `SELECT ` + count("IS NULL") + `, ` + count("IS NOT NULL")
	b.Queue(sql, q.args...).QueryRow(func(row pgx.Row) error {
		sm := &dq.d.Summary
		if err := row.Scan(&sm.OpenAlerts, &sm.AcknowledgedAlerts); err != nil {
			return err
		}
		if sm.OpenAlerts > cloud.MaxDashboardCount {
			sm.OpenAlerts, sm.OpenAlertsMore = cloud.MaxDashboardCount, true
		}
		if sm.AcknowledgedAlerts > cloud.MaxDashboardCount {
			sm.AcknowledgedAlerts, sm.AcknowledgedMore = cloud.MaxDashboardCount, true
		}
		return nil
	})
}

// queueLinkEvents: what happened on the stores' links lately: data
// reset, store resynchronised, restored behind the cloud, tickets taken
// over, events set aside.
func (dq *dashboardQuery) queueLinkEvents(b *pgx.Batch) {
	var q stmt
	since, scope, n := q.arg(dq.now.Add(-cloud.DashboardLinkWindow)), q.tenant(dq.a, "s.tenant_id"), q.arg(cloud.MaxDashboardLinkEvents)
	sql := linkEventsSQL + `
		WHERE e.at > ` + since + scope + `
		ORDER BY e.at DESC, e.event_id
		LIMIT ` + n
	b.Queue(sql, q.args...).Query(func(rows pgx.Rows) error {
		var err error
		dq.d.LinkEvents, err = scanLinkEvents(rows)
		return err
	})
}

// storeDetails fills the gateways, printers, alert counts and today's
// counts of the stores on the page. The ids come from the scoped query.
func (s *DashboardService) storeDetails(ctx context.Context, tx pgx.Tx, byID map[string]*cloud.StoreStatus, days map[string]*cloud.StoreDay,
	ids, tenants []string, since, cutoff time.Time) error {
	b := &pgx.Batch{}
	queueStoreStatus(b, byID, ids, cutoff)
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
			st := days[storeID]
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
			days[storeID].Today.Failed, days[storeID].Today.Flagged = failed, flagged
		}
		return rows.Err()
	})
	// A range of audit_events_store_idx per store, whatever plan the
	// statement has.
	b.Queue(`
		SELECT u.store_id, (
			SELECT count(*) FROM audit_events a
			WHERE a.tenant_id = u.tenant_id AND a.store_id = u.store_id AND a.at >= $3 AND a.action = $4)
		FROM unnest($1::text[], $2::text[]) AS u(tenant_id, store_id)`, tenants, ids, since, storeprint.ActionDuplicatePrevented).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID string
			var n int
			if err := rows.Scan(&storeID, &n); err != nil {
				return err
			}
			days[storeID].Today.DuplicatesPrevented = n
		}
		return rows.Err()
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
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
	out, tasks, err := s.findTasks(ctx, a, q)
	if err != nil || len(out) == 0 {
		return out, err
	}
	if err := s.readHistory(ctx, out, tasks); err != nil {
		return nil, err
	}
	return out, nil
}

// historyKeys are the found tasks' keys, in the order found, as arrays
// for unnest.
type historyKeys struct{ storeIDs, tenantIDs, taskNos []string }

// findTasks returns the tasks q finds in a's scope, newest first, with
// their keys.
func (s *DashboardService) findTasks(ctx context.Context, a *cloud.Actor, q cloud.TaskSearch) ([]*cloud.TaskHistory, historyKeys, error) {
	var k historyKeys
	sq := stmt{args: []any{q.Query}}
	where := sq.tenant(a, "s.tenant_id")
	if q.StoreID != "" {
		if err := visibleStore(ctx, s.db.pool, a, q.StoreID); err != nil {
			return nil, k, err
		}
		where += " AND t.store_id = " + sq.arg(q.StoreID)
	}
	// print_tasks_order_idx and print_tasks_task_no_idx, OR-ed.
	sql := `
		SELECT t.store_id, s.tenant_id, s.name, ` + taskColumns + `
		FROM print_tasks t JOIN stores s ON s.store_id = t.store_id
		WHERE (t.order_id = $1 OR t.task_no = $1)` + where + `
		ORDER BY t.created_at DESC, t.store_id, t.task_no
		LIMIT ` + sq.arg(q.Limit)
	rows, err := s.db.pool.Query(ctx, sql, sq.args...)
	if err != nil {
		return nil, k, fmt.Errorf("search tasks: %w", interpret(err))
	}
	out := []*cloud.TaskHistory{}
	for rows.Next() {
		h := &cloud.TaskHistory{Task: cloud.Task{Receipts: []*cloud.Receipt{}}, Events: []*cloud.TaskEventRecord{}, Audit: []*cloud.AuditEvent{}}
		var tenantID string
		t := &h.Task
		if err := rows.Scan(&t.StoreID, &tenantID, &h.StoreName, &t.TaskNo, &t.OrderID, &t.Station, &t.PrinterID, &t.Status,
			&t.Version, &t.Attempt, &t.LastError, &t.Reason, &t.Source, &t.CopyOf, &t.BackupFrom, &t.CreatedAt,
			&t.PrintedAt, &t.UpdatedAt); err != nil {
			rows.Close()
			return nil, k, fmt.Errorf("search tasks: %w", interpret(err))
		}
		out = append(out, h)
		k.storeIDs, k.tenantIDs, k.taskNos = append(k.storeIDs, t.StoreID), append(k.tenantIDs, tenantID), append(k.taskNos, t.TaskNo)
	}
	if err := rows.Err(); err != nil {
		return nil, k, fmt.Errorf("search tasks: %w", interpret(err))
	}
	return out, k, nil
}

// readHistory reads the found tasks' receipts, events and audit entries
// in one round trip.
func (s *DashboardService) readHistory(ctx context.Context, out []*cloud.TaskHistory, k historyKeys) error {
	storeIDs, tenantIDs, taskNos := k.storeIDs, k.tenantIDs, k.taskNos
	byKey := make(map[[2]string]*cloud.TaskHistory, len(out))
	for _, h := range out {
		byKey[[2]string{h.StoreID, h.TaskNo}] = h
	}
	b := &pgx.Batch{}
	rr := newReceiptReader(storeIDs, taskNos)
	rr.queue(b)
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
		return fmt.Errorf("read task history: %w", interpret(err))
	}
	for i, h := range out {
		h.Receipts = append(h.Receipts, rr.receipts(i)...)
	}
	return nil
}
