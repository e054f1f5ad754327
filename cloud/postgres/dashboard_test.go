package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// dayTask is a task event of a ticket accepted at created and, when
// toPaper is set, printed toPaper later.
func dayTask(seq uint64, no string, status storeprint.Status, reason storeprint.Reason, created time.Time, toPaper time.Duration) sync.Event {
	ev := sync.TaskEvent{
		TaskNo: no, Version: 3, OrderID: "o-" + no, Station: "hot", PrinterID: "hot-1", Status: status,
		Attempt: 1, Reason: reason, Source: "pos", CreatedAt: created, UpdatedAt: created.Add(time.Second),
	}
	if toPaper > 0 {
		printed := created.Add(toPaper)
		ev.PrintedAt, ev.UpdatedAt = &printed, printed
	}
	return event(seq, sync.KindTask, no, ev)
}

// dashboardSetup has acme's a1 online with a printer out of paper, three
// tickets printed today (1 s, 2 s, 4 s to paper) and one yesterday, one
// failed, one flagged and one duplicate prevented; acme's a2 never
// connected; globex's g1 online and fine.
func dashboardSetup(t *testing.T) *DashboardService {
	t.Helper()
	d, _ := dashboardFixture(t)
	return d
}

func dashboardFixture(t *testing.T) (*DashboardService, *fixture) {
	t.Helper()
	f := setup(t)
	ctx := context.Background()
	gwA1, _ := f.mustStore(t, "acme", "a1")
	f.mustStore(t, "acme", "a2")
	gwG1, _ := f.mustStore(t, "globex", "g1")
	for store, gw := range map[string]*cloud.Gateway{"a1": gwA1, "g1": gwG1} {
		if err := f.gateways.Touch(ctx, store, gw.ID, cloud.Presence{LinkID: "l-" + store, Online: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.gateways.UpdatePrinters(ctx, "a1", gwA1.ID, []*cloud.Printer{
		{ID: "hot-1", Status: storeprint.PrinterPaperEnd, Stations: []string{"hot"}},
		{ID: "pass-1", Status: storeprint.PrinterReady, Stations: []string{"pass"}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.gateways.UpdatePrinters(ctx, "g1", gwG1.ID, []*cloud.Printer{{ID: "hot-1", Status: storeprint.PrinterReady}}); err != nil {
		t.Fatal(err)
	}
	dup := auditEvent(7, "d1", storeprint.ActionDuplicatePrevented, "order_p1_station_hot")
	if _, err := f.ingestEvents(ctx, gwA1.ID, "a1", []sync.Event{
		dayTask(1, "order_p1_station_hot", "done", "", t0.Add(time.Minute), time.Second),
		dayTask(2, "order_p2_station_hot", "done", "", t0.Add(2*time.Minute), 2*time.Second),
		dayTask(3, "order_p3_station_hot", "done", "", t0.Add(3*time.Minute), 4*time.Second),
		dayTask(4, "order_old_station_hot", "done", "", t0.Add(-2*time.Hour), time.Second),
		dayTask(5, "order_f1_station_hot", "failed", "retries", t0.Add(4*time.Minute), 0),
		dayTask(6, "order_u1_station_hot", "attention_required", "uncertain", t0.Add(5*time.Minute), 0),
		dup,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ingestEvents(ctx, gwG1.ID, "g1", []sync.Event{
		dayTask(1, "order_g_station_hot", "done", "", t0.Add(time.Minute), 3*time.Second),
	}); err != nil {
		t.Fatal(err)
	}
	return newDashboard(f), f
}

// newDashboard is one node's dashboard service on f's database.
func newDashboard(f *fixture) *DashboardService {
	d := NewDashboardService(f.db)
	d.now = func() time.Time { return t0.Add(time.Hour) }
	return d
}

func TestDashboardService_Dashboard(t *testing.T) {
	t.Parallel()
	ds := dashboardSetup(t)
	t.Run("OK", func(t *testing.T) {
		d, err := ds.Dashboard(adminCtx, cloud.DashboardFilter{Since: t0})
		if err != nil {
			t.Fatal(err)
		}
		want := cloud.DashboardSummary{Stores: 3, Online: 2, StoresInTrouble: 2, PrintersInTrouble: 1, OpenAlerts: 2}
		if d.Summary != want {
			t.Fatalf("got summary %+v, want %+v", d.Summary, want)
		}
		var order []string
		for _, s := range d.Stores {
			order = append(order, s.ID)
		}
		if len(order) != 3 || order[0] != "a1" || order[1] != "a2" || order[2] != "g1" {
			t.Fatalf("got stores %v, want a1 a2 (in trouble) then g1", order)
		}
		a1, a2 := d.Stores[0], d.Stores[1]
		if !a1.Online || !a1.Trouble || a1.LastSeen == nil || len(a1.Printers) != 2 || a1.OpenAlerts != 2 || len(a1.Gateways) != 1 {
			t.Fatalf("got a1 %+v", a1)
		}
		if a2.Online || !a2.Trouble || a2.LastSeen != nil {
			t.Fatalf("got a2 %+v, want offline and in trouble", a2)
		}
		if d.Stores[2].Trouble {
			t.Fatal("got g1 in trouble")
		}
		today := a1.Today
		if today.Printed != 3 || today.Failed != 1 || today.Flagged != 1 || today.DuplicatesPrevented != 1 ||
			today.MedianToPaperMS == nil || *today.MedianToPaperMS != 2000 {
			t.Fatalf("got a1 today %+v (median %v), want 3 printed, 1 failed, 1 flagged, 1 duplicate, median 2000 ms", today, today.MedianToPaperMS)
		}
		if a2.Today.MedianToPaperMS != nil || a2.Today.Printed != 0 {
			t.Fatalf("got a2 today %+v, want nothing", a2.Today)
		}
		if len(d.Printers) != 1 || d.Printers[0].StoreID != "a1" || d.Printers[0].ID != "hot-1" ||
			d.Printers[0].Status != storeprint.PrinterPaperEnd || !d.Printers[0].StoreOnline || d.Printers[0].StoreName != "Store a1" {
			t.Fatalf("got printers in trouble %+v, want a1's hot-1 out of paper", d.Printers)
		}
		if len(d.Queue) != 2 {
			t.Fatalf("got queue %+v, want 2 alerts", d.Queue)
		}
		q := d.Queue[0]
		if q.TaskNo != "order_f1_station_hot" || q.TaskStatus != storeprint.StatusFailed || q.Reason != "retries" ||
			q.OrderID != "o-order_f1_station_hot" || q.Station != "hot" || q.StoreName != "Store a1" || q.Attempt != 1 {
			t.Fatalf("got first queue entry %+v, want the failed ticket with its task", q)
		}
		if q.AcceptedAt == nil || !q.AcceptedAt.Equal(t0.Add(4*time.Minute)) {
			t.Fatalf("got accepted_at %v, want the ticket's acceptance %v: its age counts from there", q.AcceptedAt, t0.Add(4*time.Minute))
		}
		if d.Queue[1].TaskStatus != storeprint.StatusAttention {
			t.Fatalf("got second queue entry %+v, want the flagged ticket", d.Queue[1])
		}
		if d.At.IsZero() || !d.Since.Equal(t0) {
			t.Fatalf("got at %v since %v", d.At, d.Since)
		}
	})
	t.Run("Since", func(t *testing.T) {
		d, err := ds.Dashboard(adminCtx, cloud.DashboardFilter{Since: t0.Add(150 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Stores[0].Today; got.Printed != 1 || *got.MedianToPaperMS != 4000 || got.DuplicatesPrevented != 0 {
			t.Fatalf("got %+v, want only the ticket printed after since", got)
		}
	})
	t.Run("Limit", func(t *testing.T) {
		d, err := ds.Dashboard(adminCtx, cloud.DashboardFilter{Since: t0, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Stores) != 1 || d.Stores[0].ID != "a1" || d.Summary.Stores != 3 {
			t.Fatalf("got %d stores, summary %+v, want a1 alone and 3 counted", len(d.Stores), d.Summary)
		}
	})
	t.Run("Tenant", func(t *testing.T) {
		d, err := ds.Dashboard(tenantCtx("globex"), cloud.DashboardFilter{Since: t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Stores) != 1 || d.Stores[0].ID != "g1" || len(d.Printers) != 0 || len(d.Queue) != 0 ||
			d.Summary != (cloud.DashboardSummary{Stores: 1, Online: 1}) {
			t.Fatalf("got %+v, want globex's g1 alone", d)
		}
		if got := d.Stores[0].Today; got.Printed != 1 || *got.MedianToPaperMS != 3000 {
			t.Fatalf("got g1 today %+v", got)
		}
	})
	t.Run("TenantWithoutStores", func(t *testing.T) {
		d, err := ds.Dashboard(tenantCtx("nobody"), cloud.DashboardFilter{Since: t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Stores) != 0 || len(d.Printers) != 0 || len(d.Queue) != 0 || d.Summary != (cloud.DashboardSummary{}) {
			t.Fatalf("got %+v, want nothing", d)
		}
	})
	t.Run("ErrSince", func(t *testing.T) {
		_, err := ds.Dashboard(adminCtx, cloud.DashboardFilter{Since: t0.Add(-3 * 24 * time.Hour)})
		wantCode(t, err, storeprint.EINVALID)
	})
	t.Run("ErrNoActor", func(t *testing.T) {
		_, err := ds.Dashboard(context.Background(), cloud.DashboardFilter{Since: t0})
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
}

// Acknowledged alerts stay in the queue after those that need a person,
// count apart, and no longer put their store in trouble; the next read
// after an acknowledgement shows it. Expired alerts leave the dashboard.
func TestDashboardService_Alerts(t *testing.T) {
	t.Parallel()
	ds, f := dashboardFixture(t)
	read := func() *cloud.Dashboard {
		t.Helper()
		d, err := ds.Dashboard(tenantCtx("acme"), cloud.DashboardFilter{Since: t0})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := read(); d.Summary.OpenAlerts != 2 || d.Queue[0].State != cloud.AlertOpen {
		t.Fatalf("got summary %+v, queue %+v, want 2 open alerts", d.Summary, d.Queue)
	}
	for _, id := range []string{"order_f1_station_hot:failed:1", "order_u1_station_hot:attention_required:1"} {
		if _, err := f.stores.AcknowledgeAlert(tenantCtx("acme"), "a1", id, cloud.Note{Operator: "Amy"}); err != nil {
			t.Fatal(err)
		}
	}
	d := read()
	if d.Summary.OpenAlerts != 0 || d.Summary.AcknowledgedAlerts != 2 || len(d.Queue) != 2 ||
		d.Queue[0].State != cloud.AlertAcknowledged || d.Queue[0].AcknowledgedBy != "Amy" {
		t.Fatalf("got summary %+v, queue %+v, want 2 acknowledged alerts", d.Summary, d.Queue)
	}
	// a1 is still in trouble: its printer is out of paper.
	if d.Summary.StoresInTrouble != 2 || d.Stores[0].OpenAlerts != 0 || d.Stores[0].AcknowledgedAlerts != 2 {
		t.Fatalf("got summary %+v, a1 %+v", d.Summary, d.Stores[0].StoreStatus)
	}
	later := newDashboard(f)
	later.now = func() time.Time { return t0.Add(cloud.DefaultAlertTTL + time.Hour) }
	d, err := later.Dashboard(tenantCtx("acme"), cloud.DashboardFilter{Since: t0.Add(cloud.DefaultAlertTTL)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Queue) != 0 || d.Summary.OpenAlerts != 0 || d.Summary.AcknowledgedAlerts != 0 || d.Stores[0].AcknowledgedAlerts != 0 {
		t.Fatalf("got summary %+v, queue %+v a day later, want the alerts expired", d.Summary, d.Queue)
	}
}

// Two nodes share one computed answer per scope and filter while it is
// younger than the maximum age; past half of it the answer is computed
// again behind the caller, past all of it while the caller waits. While
// another node computes, an answer just expired is served as is.
func TestDashboardService_Shared(t *testing.T) {
	t.Parallel()
	node1, f := dashboardFixture(t)
	node2 := newDashboard(f)
	node1.MaxAge, node2.MaxAge = time.Hour, time.Hour
	ctx := context.Background()
	flt := cloud.DashboardFilter{Since: t0}
	first, err := node1.Dashboard(adminCtx, flt)
	if err != nil {
		t.Fatal(err)
	}
	// A change the answer does not know of yet.
	if _, err := f.db.pool.Exec(ctx, `UPDATE printers SET status = 'ready' WHERE store_id = 'a1'`); err != nil {
		t.Fatal(err)
	}
	got, err := node2.Dashboard(adminCtx, flt)
	if err != nil {
		t.Fatal(err)
	}
	if !got.At.Equal(first.At) || got.Summary.PrintersInTrouble != 1 {
		t.Fatalf("node 2 got an answer of %v with %d printers in trouble, want node 1's of %v", got.At, got.Summary.PrintersInTrouble, first.At)
	}
	if again, _ := node2.Dashboard(adminCtx, flt); again != got {
		t.Fatal("node 2 decoded the same stored answer twice")
	}
	if n := f.count(t, `SELECT count(*) FROM dashboard_answers`); n != 1 {
		t.Fatalf("got %d stored answers, want 1", n)
	}
	age := func(d time.Duration) {
		t.Helper()
		if _, err := f.db.pool.Exec(ctx, `UPDATE dashboard_answers SET computed_at = now() - $1::interval`, d); err != nil {
			t.Fatal(err)
		}
	}

	id := "/" + t0.UTC().Format(time.RFC3339Nano) + "/100"
	settled := func(node *DashboardService) { // the node's refresh, if any, is over
		node.refreshes.Do(id, func() (any, error) { return nil, nil })
	}

	// Another node holds the key's lock: a slightly old answer is served.
	age(time.Hour + time.Second)
	lock, err := f.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, id); err != nil {
		t.Fatal(err)
	}
	got, err = node2.Dashboard(adminCtx, flt)
	settled(node2)
	lock.Rollback(ctx)
	if err != nil || got.Summary.PrintersInTrouble != 1 {
		t.Fatalf("got %+v %v while another node computes, want the answer before", got, err)
	}

	// Too old to serve: computed again while the caller waits.
	age(time.Hour + staleGrace + time.Second)
	got, err = node2.Dashboard(adminCtx, flt)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.PrintersInTrouble != 0 || !got.At.After(first.At) {
		t.Fatalf("got an answer of %v with %d printers in trouble, want a new one with none", got.At, got.Summary.PrintersInTrouble)
	}
	if got, _ := node1.Dashboard(adminCtx, flt); got.Summary.PrintersInTrouble != 0 {
		t.Fatal("node 1 did not read node 2's new answer")
	}

	// Past half its age: served at once, computed again behind the caller.
	if _, err := f.db.pool.Exec(ctx, `UPDATE printers SET status = 'cover_open' WHERE store_id = 'a1' AND printer_id = 'hot-1'`); err != nil {
		t.Fatal(err)
	}
	age(45 * time.Minute)
	if got, _ := node1.Dashboard(adminCtx, flt); got.Summary.PrintersInTrouble != 0 {
		t.Fatalf("got %d printers in trouble, want the answer before at once", got.Summary.PrintersInTrouble)
	}
	settled(node1)
	if got, _ := node1.Dashboard(adminCtx, flt); got.Summary.PrintersInTrouble != 1 {
		t.Fatalf("got %d printers in trouble after the refresh, want 1", got.Summary.PrintersInTrouble)
	}

	// Expired while this node computes the next one: served as is.
	if _, err := f.db.pool.Exec(ctx, `UPDATE printers SET status = 'ready'`); err != nil {
		t.Fatal(err)
	}
	age(time.Hour + time.Second)
	node1.mu.Lock()
	node1.refreshing[id] = true
	node1.mu.Unlock()
	got, err = node1.Dashboard(adminCtx, flt)
	node1.mu.Lock()
	delete(node1.refreshing, id)
	node1.mu.Unlock()
	if err != nil || got.Summary.PrintersInTrouble != 1 {
		t.Fatalf("got %+v %v while this node computes, want the answer before", got, err)
	}
}

func TestDashboardService_SearchTasks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ds := NewDashboardService(f.db)
	ctx := context.Background()
	gwA, _ := f.mustStore(t, "acme", "a1")
	gwG, _ := f.mustStore(t, "globex", "g1")
	const no = "order_x0_station_hot"
	events := append(lifecycle(1, 2, "x"), auditEvent(13, "r1", "task.resolve", no))
	if _, err := f.ingestEvents(ctx, gwA.ID, "a1", events); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ingestEvents(ctx, gwG.ID, "g1", lifecycle(1, 1, "x")); err != nil {
		t.Fatal(err)
	}
	t.Run("TaskNo", func(t *testing.T) {
		got, err := ds.SearchTasks(tenantCtx("acme"), cloud.TaskSearch{Query: no})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].StoreID != "a1" || got[0].TaskNo != no || got[0].StoreName != "Store a1" {
			t.Fatalf("got %+v, want a1's %s alone", got, no)
		}
		h := got[0]
		if h.Status != storeprint.StatusDone || len(h.Receipts) != 3 || h.Receipts[2].State != storeprint.ReceiptPrinted {
			t.Fatalf("got %+v with receipts %+v, want done with 3 receipts", h.Task, h.Receipts)
		}
		var kinds []string
		for _, e := range h.Events {
			kinds = append(kinds, e.Kind)
		}
		if len(h.Events) != 7 || h.Events[0].Seq != 1 || h.Events[6].Kind != sync.KindAudit || string(h.Events[0].Data) == "" {
			t.Fatalf("got events %v, want the task's 6 events and its audit event in seq order", kinds)
		}
		if len(h.Audit) != 1 || h.Audit[0].Action != "task.resolve" || h.Audit[0].Operator != "Li" || h.Audit[0].StoreID != "a1" {
			t.Fatalf("got audit %+v, want the resolution", h.Audit)
		}
	})
	t.Run("OrderID", func(t *testing.T) {
		got, err := ds.SearchTasks(adminCtx, cloud.TaskSearch{Query: "o1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("got %d tasks, want the 3 tasks of order o1 in both stores", len(got))
		}
		got, err = ds.SearchTasks(tenantCtx("globex"), cloud.TaskSearch{Query: "o1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].StoreID != "g1" {
			t.Fatalf("got %+v, want globex's task alone", got)
		}
	})
	t.Run("StoreAndLimit", func(t *testing.T) {
		got, err := ds.SearchTasks(adminCtx, cloud.TaskSearch{Query: "o1", StoreID: "a1", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].StoreID != "a1" {
			t.Fatalf("got %+v, want one task of a1", got)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		got, err := ds.SearchTasks(adminCtx, cloud.TaskSearch{Query: "nothing"})
		if err != nil || len(got) != 0 {
			t.Fatalf("got %v %v, want no tasks", got, err)
		}
	})
	t.Run("ErrOtherTenantsStore", func(t *testing.T) {
		_, err := ds.SearchTasks(tenantCtx("globex"), cloud.TaskSearch{Query: no, StoreID: "a1"})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		_, err := ds.SearchTasks(adminCtx, cloud.TaskSearch{})
		wantCode(t, err, storeprint.EINVALID)
	})
}
