package postgres

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestStoreService_CreateStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if _, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: "acme", Name: "Acme"}, cloud.Note{}); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		created, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: "s1", TenantID: "acme", Name: "One"}, cloud.Note{Reason: "opening"})
		if err != nil || !created {
			t.Fatalf("got created %v err %v, want true nil", created, err)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE store_id = 's1' AND action = $1`, storeprint.ActionCreateStore); n != 1 {
			t.Fatalf("got %d audit events, want 1", n)
		}
	})
	t.Run("Replay", func(t *testing.T) {
		created, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: "s1", TenantID: "acme", Name: "One"}, cloud.Note{})
		if err != nil || created {
			t.Fatalf("got created %v err %v, want false nil", created, err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		_, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: "s1", TenantID: "acme", Name: "Renamed"}, cloud.Note{})
		wantCode(t, err, cloud.ECONFLICT)
	})
	t.Run("ErrUnknownTenant", func(t *testing.T) {
		_, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: "s2", TenantID: "nobody", Name: "Two"}, cloud.Note{})
		wantCode(t, err, cloud.ENOTFOUND)
		if n := f.count(t, `SELECT count(*) FROM stores WHERE store_id = 's2'`); n != 0 {
			t.Fatalf("got %d stores, want 0", n)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		_, err := f.stores.CreateStore(tenantCtx("acme"), &cloud.Store{ID: "s3", TenantID: "acme", Name: "Three"}, cloud.Note{})
		wantCode(t, err, cloud.EFORBIDDEN)
	})
}

func TestStoreService_FindStores(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "a1")
	f.mustStore(t, "acme", "a2")
	f.mustStore(t, "globex", "g1")
	ctx := context.Background()
	if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "l1", Online: true, Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	if err := f.gateways.UpdatePrinters(ctx, "a1", gw.ID, []*cloud.Printer{
		{ID: "hot-1", Status: storeprint.PrinterPaperEnd, Stations: []string{"hot"}, Backup: "pass-1", Failover: true},
		{ID: "pass-1", Status: storeprint.PrinterReady, Stations: []string{}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Run("Admin", func(t *testing.T) {
		got, err := f.stores.FindStores(adminCtx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("got %d stores, want 3", len(got))
		}
		a1 := got[0]
		if a1.ID != "a1" || !a1.Online || a1.LastSeen == nil || len(a1.Gateways) != 1 || a1.Gateways[0].Version != "1.2.3" {
			t.Fatalf("got %+v, want a1 online with its gateway", a1)
		}
		if len(a1.Printers) != 2 || a1.Printers[0].ID != "hot-1" || a1.Printers[0].Status != storeprint.PrinterPaperEnd ||
			!a1.Printers[0].Failover || len(a1.Printers[0].Stations) != 1 {
			t.Fatalf("got printers %+v", a1.Printers)
		}
		if got[1].Online {
			t.Fatalf("got a2 online, want offline")
		}
	})
	t.Run("Tenant", func(t *testing.T) {
		got, err := f.stores.FindStores(tenantCtx("globex"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != "g1" {
			t.Fatalf("got %+v, want only g1", got)
		}
	})
	t.Run("Offline", func(t *testing.T) {
		// A late disconnect of an old link changes nothing.
		if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "old", Online: false}); err != nil {
			t.Fatal(err)
		}
		got, _ := f.stores.FindStores(tenantCtx("acme"))
		if !got[0].Online {
			t.Fatal("got offline after an old link's disconnect, want online")
		}
		if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "l1", Online: false}); err != nil {
			t.Fatal(err)
		}
		got, _ = f.stores.FindStores(tenantCtx("acme"))
		if got[0].Online {
			t.Fatal("got online after the link's disconnect, want offline")
		}
	})
}

func TestStoreService_FindAlerts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	f.mustStore(t, "globex", "g1")
	if _, err := f.ingestEvents(context.Background(), gw.ID, "s1", lifecycle(1, 1, "x")[:2]); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		got, err := f.stores.FindAlerts(tenantCtx("acme"), "s1")
		if err != nil || len(got) != 0 {
			t.Fatalf("got %v %v, want no alerts", got, err)
		}
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		_, err := f.stores.FindAlerts(tenantCtx("globex"), "s1")
		wantCode(t, err, cloud.ENOTFOUND)
	})
}
