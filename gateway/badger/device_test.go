package badger_test

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func TestDB_Devices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, dir := setup(t)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a := &gateway.Device{ID: "dev-a", Name: "counter", Role: storeprint.RolePOS, TokenSHA256: gateway.HashToken("ta"), CreatedAt: t0}
	b := &gateway.Device{ID: "dev-b", Name: "tablet", Role: storeprint.RoleStaff, TokenSHA256: gateway.HashToken("tb"), CreatedAt: t0.Add(time.Minute)}
	if err := db.Update(ctx, func(tx gateway.Tx) error {
		if err := tx.PutDevice(b); err != nil {
			return err
		}
		return tx.PutDevice(a)
	}); err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		err := db.View(ctx, func(tx gateway.ReadTx) error {
			got, err := tx.DeviceByToken(gateway.HashToken("tb"))
			if err != nil || got.ID != "dev-b" || got.Role != storeprint.RoleStaff {
				t.Fatalf("got %+v %v, want dev-b", got, err)
			}
			all, err := tx.Devices()
			if err != nil || len(all) != 2 || all[0].ID != "dev-a" || all[1].ID != "dev-b" {
				t.Fatalf("got %v %v, want dev-a then dev-b", all, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		if err := db.Update(ctx, func(tx gateway.Tx) error { return tx.DeleteDevice("dev-a") }); err != nil {
			t.Fatal(err)
		}
		// Closed and opened again: the deletion is durable.
		db2 := reopen(t, db, dir)
		_ = db2.View(ctx, func(tx gateway.ReadTx) error {
			if _, err := tx.DeviceByToken(gateway.HashToken("ta")); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
				t.Errorf("revoked token: got %v, want not found", err)
			}
			if _, err := tx.Device("dev-a"); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
				t.Errorf("revoked device: got %v, want not found", err)
			}
			if all, _ := tx.Devices(); len(all) != 1 {
				t.Errorf("got %d devices, want 1", len(all))
			}
			return nil
		})
		if err := db2.Update(ctx, func(tx gateway.Tx) error { return tx.DeleteDevice("dev-a") }); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
			t.Errorf("second delete: got %v, want not found", err)
		}
	})
}
