package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
)

func TestGatewayService_Authenticate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, token := f.mustStore(t, "acme", "s1")
	other, otherToken := f.mustStore(t, "acme", "s2")
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		got, err := f.gateways.Authenticate(ctx, gw.ID, token)
		if err != nil {
			t.Fatal(err)
		}
		if got.StoreID != "s1" || got.TenantID != "acme" || got.RevokedAt != nil {
			t.Fatalf("got %+v, want store s1 of acme, not revoked", got)
		}
	})
	t.Run("ErrWrongToken", func(t *testing.T) {
		_, err := f.gateways.Authenticate(ctx, gw.ID, cloud.NewGatewayToken("s1"))
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
	t.Run("ErrOtherGatewaysToken", func(t *testing.T) {
		_, err := f.gateways.Authenticate(ctx, gw.ID, otherToken)
		wantCode(t, err, storeprint.EUNAUTHORIZED)
		_, err = f.gateways.Authenticate(ctx, other.ID, token)
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		_, err := f.gateways.Authenticate(ctx, gw.ID, "garbage")
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
	t.Run("StoredHashed", func(t *testing.T) {
		if n := f.count(t, `SELECT count(*) FROM gateways WHERE token_hash = $1`, cloud.HashToken(token)); n != 1 {
			t.Fatalf("got %d gateways with the token's hash, want 1", n)
		}
	})
}

func TestGatewayService_RevokeGateway(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, token := f.mustStore(t, "acme", "s1")
	ctx := context.Background()

	// A sync node listens for revocations to cut open links at once.
	listener, err := pgx.Connect(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN "+cloud.RevokedChannel); err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		got, err := f.gateways.RevokeGateway(adminCtx, gw.ID, cloud.Note{Reason: "stolen", Operator: "ops"})
		if err != nil {
			t.Fatal(err)
		}
		if got.RevokedAt == nil || got.StoreID != "s1" {
			t.Fatalf("got %+v, want revoked gateway of s1", got)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := listener.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("no revocation notification: %v", err)
		}
		if n.Payload != gw.ID {
			t.Fatalf("got notification %q, want %q", n.Payload, gw.ID)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1 AND reason = 'stolen' AND before IS NOT NULL AND after IS NOT NULL`, storeprint.ActionRevokeGateway); n != 1 {
			t.Fatalf("got %d revocation audit events, want 1", n)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		_, err := f.gateways.Authenticate(ctx, gw.ID, token)
		wantCode(t, err, storeprint.EUNAUTHORIZED)
		revoked, err := f.gateways.IsRevoked(ctx, "s1", gw.ID)
		if err != nil || !revoked {
			t.Fatalf("got revoked %v err %v, want true nil", revoked, err)
		}
		wantCode(t, f.gateways.Touch(ctx, "s1", gw.ID, cloud.Presence{LinkID: "l", Online: true}), storeprint.EUNAUTHORIZED)
		_, err = f.ingestEvents(ctx, gw.ID, "s1", lifecycle(1, 1, "r"))
		wantCode(t, err, storeprint.EUNAUTHORIZED)
		wantCode(t, f.gateways.UpdatePrinters(ctx, "s1", gw.ID, []*cloud.Printer{{ID: "p", Status: storeprint.PrinterReady}}), storeprint.EUNAUTHORIZED)
		if n := f.count(t, `SELECT count(*) FROM task_events`); n != 0 {
			t.Fatalf("got %d events stored from a revoked gateway, want 0", n)
		}
	})
	t.Run("Again", func(t *testing.T) {
		if _, err := f.gateways.RevokeGateway(adminCtx, gw.ID, cloud.Note{}); err != nil {
			t.Fatal(err)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1`, storeprint.ActionRevokeGateway); n != 1 {
			t.Fatalf("got %d revocation audit events, want 1: revoking again changes nothing", n)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := f.gateways.RevokeGateway(adminCtx, "gw-none", cloud.Note{})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		_, err := f.gateways.RevokeGateway(tenantCtx("acme"), gw.ID, cloud.Note{})
		wantCode(t, err, storeprint.EFORBIDDEN)
	})
}

func TestGatewayService_IsRevoked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	t.Run("OK", func(t *testing.T) {
		revoked, err := f.gateways.IsRevoked(context.Background(), "s1", gw.ID)
		if err != nil || revoked {
			t.Fatalf("got %v %v, want false nil", revoked, err)
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		revoked, err := f.gateways.IsRevoked(context.Background(), "s2", gw.ID)
		if err != nil || !revoked {
			t.Fatalf("got %v %v, want true nil: an unknown gateway is cut", revoked, err)
		}
	})
}

// TestDB_Open checks that a bad URL does not end up in the error.
func TestDB_Open(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		db, err := Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	})
	t.Run("ErrBadURL", func(t *testing.T) {
		_, err := Open(context.Background(), "postgres://u:secretpw@[bad")
		if err == nil {
			t.Fatal("got nil error")
		}
		if strings.Contains(err.Error(), "secretpw") {
			t.Fatalf("the error %q shows the password", err)
		}
	})
}
