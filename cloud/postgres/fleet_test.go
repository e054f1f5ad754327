package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud"
)

// The fleet's counts: stores with a live credential, online or not; the
// alerts that need a person by kind, every known kind present, and the
// oldest of them. An acknowledged alert and a revoked credential's store
// are not counted.
func TestFleetService_Fleet(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	fleet := NewFleetService(f.db)
	fleet.AlertTTL = 100 * 365 * 24 * time.Hour // the test events' alerts are years old

	t.Run("Empty", func(t *testing.T) {
		got, err := fleet.Fleet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Stores != 0 || got.Online != 0 || !got.OldestAlert.IsZero() {
			t.Fatalf("got %+v, want nothing", got)
		}
		for _, k := range cloud.AlertKinds {
			if n, ok := got.AlertsOpen[k]; !ok || n != 0 {
				t.Errorf("alerts of kind %s: got %d (present %t), want 0 present", k, n, ok)
			}
		}
	})

	gw1, _ := f.mustStore(t, "acme", "s1")
	gw2, _ := f.mustStore(t, "acme", "s2")
	gw3, _ := f.mustStore(t, "acme", "s3")
	if err := f.gateways.Touch(ctx, "s1", gw1.ID, cloud.Presence{LinkID: "l1", Online: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.gateways.RevokeGateway(adminCtx, gw3.ID, cloud.Note{Reason: "store closed"}); err != nil {
		t.Fatal(err)
	}
	f.ingestInc(t, gw1.ID, "s1", "", taskEvent(1, "order_a_station_hot", 1, "queued"), taskEvent(2, "order_a_station_hot", 2, "printing"),
		taskEvent(3, "order_a_station_hot", 3, "failed"), taskEvent(4, "order_b_station_hot", 1, "queued"), taskEvent(5, "order_b_station_hot", 2, "attention_required"))
	f.ingestInc(t, gw2.ID, "s2", "", taskEvent(1, "order_c_station_hot", 1, "queued"), taskEvent(2, "order_c_station_hot", 2, "printing"),
		taskEvent(3, "order_c_station_hot", 3, "failed"), taskEvent(4, "order_d_station_hot", 1, "queued"), taskEvent(5, "order_d_station_hot", 2, "printing"),
		taskEvent(6, "order_d_station_hot", 3, "failed"))
	alerts, err := f.stores.FindAlerts(adminCtx, "s2", cloud.AlertFilter{})
	if err != nil || len(alerts) == 0 {
		t.Fatalf("s2's alerts: %v %v", alerts, err)
	}
	if _, err := f.stores.AcknowledgeAlert(adminCtx, "s2", alerts[len(alerts)-1].ID, cloud.Note{Operator: "ops", Reason: "on it"}); err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		got, err := fleet.Fleet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Stores != 2 || got.Online != 1 {
			t.Errorf("stores: got %d, %d online; want 2, 1 online (s3's only credential is revoked)", got.Stores, got.Online)
		}
		if got.AlertsOpen["failed"] != 2 || got.AlertsOpen["attention_required"] != 1 || got.AlertsOpen["dead_letter"] != 0 {
			t.Errorf("alerts: got %v, want 2 failed (one acknowledged of three) and 1 attention_required", got.AlertsOpen)
		}
		if want := t0.Add(3 * time.Second); !got.OldestAlert.Equal(want) {
			t.Errorf("oldest alert: got %v, want %v", got.OldestAlert, want)
		}
	})
}

// BenchmarkFleetService_Fleet counts a chain of 10,000 stores (9,000
// online) with 2,000 alerts that need a person among 200,000 resolved
// ones: what every cloud node pays at most every FleetCacheFor.
func BenchmarkFleetService_Fleet(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO tenants (tenant_id, name) VALUES ('acme', 'Acme')`,
		`INSERT INTO stores (store_id, tenant_id, name) SELECT 's' || i, 'acme', 'Store ' || i FROM generate_series(1, 10000) i`,
		`INSERT INTO gateways (store_id, gateway_id, token_hash, online, last_seen)
		 SELECT 's' || i, 'gw-' || i, '\x00', i % 10 <> 0, now() FROM generate_series(1, 10000) i`,
		`INSERT INTO alerts (store_id, alert_id, kind, message, raised_at, resolved_at)
		 SELECT 's' || (i % 10000 + 1), 'a' || i, 'failed', 'task failed', now() - interval '1 hour', CASE WHEN i > 2000 THEN now() END
		 FROM generate_series(1, 202000) i`,
		`ANALYZE`,
	} {
		if _, err := f.db.pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	fleet := NewFleetService(f.db)
	b.ResetTimer()
	for b.Loop() {
		got, err := fleet.Fleet(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if got.Stores != 10000 || got.Online != 9000 || got.AlertsOpen["failed"] != 2000 {
			b.Fatalf("got %+v", got)
		}
	}
}
