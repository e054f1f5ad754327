package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
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
		wantCode(t, err, storeprint.ECONFLICT)
	})
	t.Run("ErrUnknownTenant", func(t *testing.T) {
		_, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: "s2", TenantID: "nobody", Name: "Two"}, cloud.Note{})
		wantCode(t, err, storeprint.ENOTFOUND)
		if n := f.count(t, `SELECT count(*) FROM stores WHERE store_id = 's2'`); n != 0 {
			t.Fatalf("got %d stores, want 0", n)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		_, err := f.stores.CreateStore(tenantCtx("acme"), &cloud.Store{ID: "s3", TenantID: "acme", Name: "Three"}, cloud.Note{})
		wantCode(t, err, storeprint.EFORBIDDEN)
	})
}

func TestStoreService_FindStores(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "a1")
	f.mustStore(t, "acme", "a2")
	f.mustStore(t, "globex", "g1")
	f.mustStore(t, "acme", "a3")
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
	ids := func(stores []*cloud.StoreStatus) string {
		var out []string
		for _, st := range stores {
			out = append(out, st.ID)
		}
		return strings.Join(out, " ")
	}
	t.Run("Admin", func(t *testing.T) {
		got, more, err := f.stores.FindStores(adminCtx, cloud.StoreFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != "a1 a2 a3 g1" || more {
			t.Fatalf("got %s more %v, want a1 a2 a3 g1 and no more", ids(got), more)
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
	t.Run("Pages", func(t *testing.T) {
		var pages []string
		after := ""
		for {
			got, more, err := f.stores.FindStores(adminCtx, cloud.StoreFilter{After: after, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, ids(got))
			if !more {
				break
			}
			after = got[len(got)-1].ID
		}
		if want := []string{"a1 a2 a3", "g1"}; strings.Join(pages, "|") != strings.Join(want, "|") {
			t.Fatalf("got pages %q, want %q", pages, want)
		}
		got, more, err := f.stores.FindStores(tenantCtx("acme"), cloud.StoreFilter{After: "a1", Limit: 1})
		if err != nil || ids(got) != "a2" || !more {
			t.Fatalf("got %s more %v err %v, want acme's a2 and more", ids(got), more, err)
		}
		got, more, err = f.stores.FindStores(tenantCtx("acme"), cloud.StoreFilter{After: "a3"})
		if err != nil || len(got) != 0 || more {
			t.Fatalf("got %s more %v err %v, want nothing after acme's last store", ids(got), more, err)
		}
	})
	t.Run("Tenant", func(t *testing.T) {
		got, _, err := f.stores.FindStores(tenantCtx("globex"), cloud.StoreFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != "g1" {
			t.Fatalf("got %s, want only g1", ids(got))
		}
	})
	t.Run("ErrFilter", func(t *testing.T) {
		_, _, err := f.stores.FindStores(adminCtx, cloud.StoreFilter{Limit: cloud.MaxStoresLimit + 1})
		wantCode(t, err, storeprint.EINVALID)
		_, _, err = f.stores.FindStores(adminCtx, cloud.StoreFilter{After: "a b"})
		wantCode(t, err, storeprint.EINVALID)
	})
	t.Run("Offline", func(t *testing.T) {
		first := func() *cloud.StoreStatus {
			got, _, err := f.stores.FindStores(tenantCtx("acme"), cloud.StoreFilter{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return got[0]
		}
		// A late disconnect of an old link changes nothing.
		if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "old", Online: false}); err != nil {
			t.Fatal(err)
		}
		if !first().Online {
			t.Fatal("got offline after an old link's disconnect, want online")
		}
		if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "l1", Online: false}); err != nil {
			t.Fatal(err)
		}
		if first().Online {
			t.Fatal("got online after the link's disconnect, want offline")
		}
	})
}

// A node writes its links' presence every cloud.PresenceEvery; one that
// died leaves its links marked open, and they stop counting once the
// last write is older than cloud.OnlineWindow.
func TestGatewayService_Seen(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "a1")
	ctx := context.Background()
	online := func() bool {
		t.Helper()
		got, _, err := f.stores.FindStores(adminCtx, cloud.StoreFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Online
	}
	setSeen := func(ago time.Duration) {
		t.Helper()
		if _, err := f.db.pool.Exec(ctx, `UPDATE gateways SET last_seen = now() - $1::interval`, ago); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.gateways.Touch(ctx, "a1", gw.ID, cloud.Presence{LinkID: "l1", Online: true}); err != nil {
		t.Fatal(err)
	}
	t.Run("NodeAlive", func(t *testing.T) {
		setSeen(cloud.OnlineWindow - 5*time.Second)
		if !online() {
			t.Fatal("got offline within the online window")
		}
		if err := f.gateways.Seen(ctx, []cloud.LinkSeen{{StoreID: "a1", GatewayID: gw.ID, LinkID: "l1", Age: 2 * time.Second}}); err != nil {
			t.Fatal(err)
		}
		if n := f.count(t, `SELECT count(*) FROM gateways WHERE last_seen BETWEEN now() - interval '3 s' AND now() - interval '1 s'`); n != 1 {
			t.Fatal("got last_seen not moved to 2 s ago")
		}
	})
	t.Run("NodeDead", func(t *testing.T) {
		setSeen(cloud.OnlineWindow + time.Second)
		if online() {
			t.Fatal("got online although the link's node stopped writing past the online window")
		}
	})
	t.Run("OtherLink", func(t *testing.T) {
		setSeen(cloud.OnlineWindow + time.Second)
		if err := f.gateways.Seen(ctx, []cloud.LinkSeen{{StoreID: "a1", GatewayID: gw.ID, LinkID: "replaced", Age: 0}}); err != nil {
			t.Fatal(err)
		}
		if online() {
			t.Fatal("got online from a link that is no longer the gateway's")
		}
	})
}

// alertsSetup has acme's s1 with a failed ticket (an alert raised at t0+3s)
// and a flagged one raised yesterday (expired by now: t0+1h), and
// globex's g1.
func alertsSetup(t *testing.T) *fixture {
	t.Helper()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	f.mustStore(t, "globex", "g1")
	old := taskEvent(4, "order_old_station_hot", 2, "attention_required")
	old.At = t0.Add(-25 * time.Hour)
	var ev sync.TaskEvent
	if err := json.Unmarshal(old.Data, &ev); err != nil {
		t.Fatal(err)
	}
	ev.UpdatedAt = old.At
	old.Data, _ = json.Marshal(ev)
	if _, err := f.ingestEvents(context.Background(), gw.ID, "s1", []sync.Event{
		taskEvent(1, "order_f_station_hot", 1, "queued"),
		taskEvent(2, "order_f_station_hot", 2, "printing"),
		taskEvent(3, "order_f_station_hot", 3, "failed"),
		old,
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestStoreService_FindAlerts(t *testing.T) {
	t.Parallel()
	f := alertsSetup(t)
	t.Run("Current", func(t *testing.T) {
		got, err := f.stores.FindAlerts(tenantCtx("acme"), "s1", cloud.AlertFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].TaskNo != "order_f_station_hot" || got[0].State != cloud.AlertOpen ||
			!got[0].ExpiresAt.Equal(got[0].RaisedAt.Add(cloud.DefaultAlertTTL)) {
			t.Fatalf("got %+v, want the failed ticket's alert alone, open until a day after it was raised", got)
		}
	})
	t.Run("History", func(t *testing.T) {
		got, err := f.stores.FindAlerts(tenantCtx("acme"), "s1", cloud.AlertFilter{History: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].TaskNo != "order_f_station_hot" || got[1].TaskNo != "order_old_station_hot" ||
			got[1].State != cloud.AlertExpired {
			t.Fatalf("got %+v, want both alerts newest first, yesterday's expired", got)
		}
	})
	t.Run("TTL", func(t *testing.T) {
		stores := NewStoreService(f.db)
		stores.now, stores.AlertTTL = f.stores.now, 48*time.Hour
		got, err := stores.FindAlerts(adminCtx, "s1", cloud.AlertFilter{})
		if err != nil || len(got) != 2 || got[0].State != cloud.AlertOpen {
			t.Fatalf("got %+v %v, want both alerts open with a 48 h TTL", got, err)
		}
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		_, err := f.stores.FindAlerts(tenantCtx("globex"), "s1", cloud.AlertFilter{})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrLimit", func(t *testing.T) {
		_, err := f.stores.FindAlerts(adminCtx, "s1", cloud.AlertFilter{Limit: cloud.MaxAlertLimit + 1})
		wantCode(t, err, storeprint.EINVALID)
	})
}

func TestStoreService_AcknowledgeAlert(t *testing.T) {
	t.Parallel()
	f := alertsSetup(t)
	const id = "order_f_station_hot:failed:1"
	note := cloud.Note{Operator: "Amy", Reason: "calling the store"}
	t.Run("OK", func(t *testing.T) {
		got, err := f.stores.AcknowledgeAlert(tenantCtx("acme"), "s1", id, note)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != cloud.AlertAcknowledged || got.AcknowledgedAt == nil || got.AcknowledgedBy != "Amy" {
			t.Fatalf("got %+v, want acknowledged by Amy", got)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1 AND resource = $2 AND operator = 'Amy'
			AND before->>'state' = 'open' AND after->>'state' = 'acknowledged'`, storeprint.ActionAlertAck, "alert/"+id); n != 1 {
			t.Fatalf("got %d audit events, want 1", n)
		}
		stores, _, _ := f.stores.FindStores(tenantCtx("acme"), cloud.StoreFilter{})
		if stores[0].OpenAlerts != 0 || stores[0].AcknowledgedAlerts != 1 {
			t.Fatalf("got %d open and %d acknowledged, want 0 and 1", stores[0].OpenAlerts, stores[0].AcknowledgedAlerts)
		}
	})
	t.Run("Again", func(t *testing.T) {
		got, err := f.stores.AcknowledgeAlert(adminCtx, "s1", id, cloud.Note{Operator: "Bo"})
		if err != nil || got.AcknowledgedBy != "Amy" {
			t.Fatalf("got %+v %v, want Amy's acknowledgement unchanged", got, err)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1`, storeprint.ActionAlertAck); n != 1 {
			t.Fatalf("got %d audit events, want still 1", n)
		}
	})
	t.Run("Resolved", func(t *testing.T) {
		gwID := ""
		if err := f.db.pool.QueryRow(context.Background(), `SELECT gateway_id FROM gateways WHERE store_id = 's1'`).Scan(&gwID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ingestEvents(context.Background(), gwID, "s1", []sync.Event{taskEvent(5, "order_f_station_hot", 4, "done")}); err != nil {
			t.Fatal(err)
		}
		got, err := f.stores.FindAlerts(adminCtx, "s1", cloud.AlertFilter{History: true})
		if err != nil || got[0].State != cloud.AlertResolved {
			t.Fatalf("got %+v %v, want the alert resolved once its task is done", got, err)
		}
		_, err = f.stores.AcknowledgeAlert(adminCtx, "s1", id, note)
		wantCode(t, err, storeprint.ECONFLICT)
		old, err := f.stores.AcknowledgeAlert(adminCtx, "s1", "order_old_station_hot:attention_required:1", note)
		if err != nil || old.State != cloud.AlertExpired || old.AcknowledgedBy != "Amy" {
			t.Fatalf("got %+v %v, want the expired alert acknowledged and still expired", old, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := f.stores.AcknowledgeAlert(adminCtx, "s1", id+"x", note)
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrOperator", func(t *testing.T) {
		_, err := f.stores.AcknowledgeAlert(adminCtx, "s1", id, cloud.Note{Reason: "no name"})
		wantCode(t, err, storeprint.EINVALID)
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		_, err := f.stores.AcknowledgeAlert(tenantCtx("globex"), "s1", id, note)
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrBadID", func(t *testing.T) {
		_, err := f.stores.AcknowledgeAlert(adminCtx, "s1", "a\x00", note)
		wantCode(t, err, storeprint.EINVALID)
	})
}
