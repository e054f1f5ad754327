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
		wantCode(t, err, cloud.EINVALID)
	})
	t.Run("ErrNoActor", func(t *testing.T) {
		_, err := ds.Dashboard(context.Background(), cloud.DashboardFilter{Since: t0})
		wantCode(t, err, cloud.EUNAUTHORIZED)
	})
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
		wantCode(t, err, cloud.ENOTFOUND)
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		_, err := ds.SearchTasks(adminCtx, cloud.TaskSearch{})
		wantCode(t, err, cloud.EINVALID)
	})
}
