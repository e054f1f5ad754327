package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// A gateway reports its kitchen screens in the list of its printers, each
// with its kind and its tickets: the cloud keeps them apart, shows a
// silent screen or one with stale tickets in trouble, and names the
// screen an alert is about.
func TestGatewayService_UpdatePrintersDisplays(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	gw, _ := f.mustStore(t, "acme", "a1")
	if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "l1", Online: true}); err != nil {
		t.Fatal(err)
	}
	// A ticket on the screen reaches the cloud before the screen does:
	// the task's printer is recorded, as a printer until the report says.
	ev := sync.TaskEvent{
		TaskNo: "order_k1_station_hot", Version: 3, OrderID: "k1", Station: "hot", PrinterID: "kds-hot",
		Status: storeprint.StatusAttention, Reason: storeprint.ReasonUncertain, Attempt: 1, Source: "pos",
		CreatedAt: t0, UpdatedAt: t0.Add(time.Second),
	}
	if _, err := f.ingestEvents(ctx, gw.ID, "a1", []sync.Event{event(1, sync.KindTask, ev.TaskNo, ev)}); err != nil {
		t.Fatal(err)
	}
	report := func(t *testing.T, screen *cloud.Printer) {
		t.Helper()
		if err := f.gateways.UpdatePrinters(ctx, "a1", gw.ID, []*cloud.Printer{
			{ID: "hot-1", Status: storeprint.PrinterReady, Stations: []string{}},
			screen,
		}); err != nil {
			t.Fatal(err)
		}
	}
	find := func(t *testing.T) (printer, screen *cloud.Printer) {
		t.Helper()
		got, _, err := f.stores.FindStores(adminCtx, cloud.StoreFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(got[0].Printers) != 2 {
			t.Fatalf("got %+v, want store a1 with a printer and a screen", got)
		}
		return got[0].Printers[0], got[0].Printers[1]
	}
	// Each read computes the dashboard afresh.
	ds := newDashboard(f)
	ds.MaxAge = time.Nanosecond
	trouble := func(t *testing.T) []*cloud.StorePrinter {
		t.Helper()
		d, err := ds.Dashboard(adminCtx, cloud.DashboardFilter{Since: t0})
		if err != nil {
			t.Fatal(err)
		}
		if d.Summary.PrintersInTrouble != len(d.Printers) {
			t.Fatalf("got %d printers in trouble counted, %d listed", d.Summary.PrintersInTrouble, len(d.Printers))
		}
		return d.Printers
	}

	t.Run("Before", func(t *testing.T) {
		if n := f.count(t, `SELECT count(*) FROM printers WHERE store_id = 'a1' AND printer_id = 'kds-hot' AND kind = 'printer'`); n != 1 {
			t.Fatalf("got %d rows for kds-hot as a printer, want 1 (seen on a task, not yet reported)", n)
		}
	})
	t.Run("Offline", func(t *testing.T) {
		report(t, &cloud.Printer{ID: "kds-hot", Kind: storeprint.TargetDisplay, Status: storeprint.PrinterOffline,
			Stations: []string{"hot"}, Backup: "hot-1", Failover: true, Open: 3, Shown: 2})
		p, s := find(t)
		if p.ID != "hot-1" || p.Kind != storeprint.TargetPrinter || p.Open != 0 {
			t.Fatalf("got %+v, want hot-1 a printer", p)
		}
		if s.ID != "kds-hot" || s.Kind != storeprint.TargetDisplay || s.Status != storeprint.PrinterOffline || !s.Failover ||
			s.Open != 3 || s.Shown != 2 || s.Stale != 0 {
			t.Fatalf("got %+v, want kds-hot a display, offline, failed over, 3 open, 2 shown", s)
		}
		tr := trouble(t)
		if len(tr) != 1 || tr[0].ID != "kds-hot" || tr[0].Kind != storeprint.TargetDisplay || tr[0].Open != 3 || tr[0].Shown != 2 {
			t.Fatalf("got in trouble %+v, want the screen with its counts", tr)
		}
	})
	t.Run("Stale", func(t *testing.T) {
		// On and speaking, with a ticket shown past stale_after: in trouble.
		report(t, &cloud.Printer{ID: "kds-hot", Kind: storeprint.TargetDisplay, Status: storeprint.PrinterReady,
			Stations: []string{"hot"}, Backup: "hot-1", Open: 2, Shown: 2, Stale: 1})
		tr := trouble(t)
		if len(tr) != 1 || tr[0].ID != "kds-hot" || tr[0].Stale != 1 {
			t.Fatalf("got in trouble %+v, want the screen with 1 stale ticket", *tr[0])
		}
		report(t, &cloud.Printer{ID: "kds-hot", Kind: storeprint.TargetDisplay, Status: storeprint.PrinterReady,
			Stations: []string{"hot"}, Backup: "hot-1", Open: 2, Shown: 2})
		if tr := trouble(t); len(tr) != 0 {
			t.Fatalf("got in trouble %+v, want none once the screen is on and nothing is stale", tr)
		}
	})
	t.Run("Alert", func(t *testing.T) {
		als, err := f.stores.FindAlerts(adminCtx, "a1", cloud.AlertFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(als) != 1 || als[0].PrinterID != "kds-hot" || als[0].PrinterKind != storeprint.TargetDisplay {
			t.Fatalf("got alerts %+v, want one on display kds-hot", als)
		}
		d, err := ds.Dashboard(adminCtx, cloud.DashboardFilter{Since: t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Queue) != 1 || d.Queue[0].PrinterKind != storeprint.TargetDisplay {
			t.Fatalf("got queue %+v, want the alert on display kds-hot", d.Queue)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, p := range []*cloud.Printer{
			{ID: "kds-hot", Kind: "screen", Status: storeprint.PrinterReady},
			{ID: "kds-hot", Kind: storeprint.TargetDisplay, Status: storeprint.PrinterReady, Open: 1, Shown: 2},
			{ID: "kds-hot", Kind: storeprint.TargetDisplay, Status: storeprint.PrinterReady, Stale: -1},
			{ID: "kds-hot", Kind: storeprint.TargetDisplay, Status: storeprint.PrinterReady, Open: cloud.MaxDisplayTickets + 1},
		} {
			wantCode(t, f.gateways.UpdatePrinters(ctx, "a1", gw.ID, []*cloud.Printer{p}), storeprint.EINVALID)
		}
	})
}
