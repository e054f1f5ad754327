package postgres

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestTenantService_CreateTenant(t *testing.T) {
	t.Parallel()
	f := setup(t)
	t.Run("OK", func(t *testing.T) {
		created, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: "acme", Name: "Acme"}, cloud.Note{Reason: "new chain", Operator: "ops"})
		if err != nil || !created {
			t.Fatalf("got created %v err %v, want true nil", created, err)
		}
		events, err := f.audits.FindAuditEvents(adminCtx, cloud.AuditFilter{TenantID: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Action != storeprint.ActionCreateTenant || events[0].Actor != "admin" ||
			events[0].Reason != "new chain" || events[0].Operator != "ops" {
			t.Fatalf("got audit %+v, want one tenant.create by admin with the reason", events)
		}
	})
	t.Run("Replay", func(t *testing.T) {
		created, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: "acme", Name: "Acme"}, cloud.Note{})
		if err != nil || created {
			t.Fatalf("got created %v err %v, want false nil", created, err)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE tenant_id = 'acme'`); n != 1 {
			t.Fatalf("got %d audit events, want 1: a replay changes nothing", n)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		_, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: "acme", Name: "Other"}, cloud.Note{})
		wantCode(t, err, storeprint.ECONFLICT)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: "a b", Name: "x"}, cloud.Note{})
		wantCode(t, err, storeprint.EINVALID)
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		_, err := f.tenants.CreateTenant(tenantCtx("acme"), &cloud.Tenant{ID: "evil", Name: "Evil"}, cloud.Note{})
		wantCode(t, err, storeprint.EFORBIDDEN)
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		_, err := f.tenants.CreateTenant(context.Background(), &cloud.Tenant{ID: "x", Name: "X"}, cloud.Note{})
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
}

func TestTenantService_AuthenticateTenant(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "s1")
	tok, err := f.tenants.CreateTenantToken(adminCtx, "acme", cloud.Note{Reason: "dashboard"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		a, err := f.tenants.AuthenticateTenant(context.Background(), tok.Token)
		if err != nil {
			t.Fatal(err)
		}
		if a.Kind != cloud.ActorTenant || a.TenantID != "acme" || a.TokenID != tok.TokenID {
			t.Fatalf("got actor %+v, want tenant acme token %s", a, tok.TokenID)
		}
	})
	t.Run("StoredHashed", func(t *testing.T) {
		if n := f.count(t, `SELECT count(*) FROM tenant_tokens WHERE token_hash = $1`, cloud.HashToken(tok.Token)); n != 1 {
			t.Fatalf("got %d rows with the token's hash, want 1", n)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE after::text LIKE '%' || $1 || '%'`, tok.Token); n != 0 {
			t.Fatal("the token's secret is in the audit trail")
		}
	})
	t.Run("ErrWrongSecret", func(t *testing.T) {
		other, _ := cloud.NewTenantToken("acme")
		_, err := f.tenants.AuthenticateTenant(context.Background(), other)
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		for _, s := range []string{"", "spt1.", "spt1.YWNtZQ.short", "nonsense", tok.Token + "x"} {
			_, err := f.tenants.AuthenticateTenant(context.Background(), s)
			wantCode(t, err, storeprint.EUNAUTHORIZED)
		}
	})
	t.Run("ErrUnknownTenant", func(t *testing.T) {
		_, err := f.tenants.CreateTenantToken(adminCtx, "nobody", cloud.Note{})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
}
