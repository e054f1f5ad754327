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
