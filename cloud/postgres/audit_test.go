package postgres

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// TestAuditService_AppendOnly proves that the application's own connection
// cannot change or remove the audit trail: the database refuses.
func TestAuditService_AppendOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "s1")
	ctx := context.Background()
	before := f.count(t, `SELECT count(*) FROM audit_events`)
	if before == 0 {
		t.Fatal("no audit events to tamper with")
	}
	for name, q := range map[string]string{
		"Update":   `UPDATE audit_events SET reason = 'nothing happened'`,
		"Delete":   `DELETE FROM audit_events`,
		"Truncate": `TRUNCATE audit_events`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.db.pool.Exec(ctx, q)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", q)
			}
			wantCode(t, interpret(err), storeprint.EFORBIDDEN)
		})
	}
	if n := f.count(t, `SELECT count(*) FROM audit_events WHERE reason <> 'nothing happened'`); n != before {
		t.Fatalf("got %d audit events, want %d unchanged", n, before)
	}
}

func TestAuditService_FindAuditEvents(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "a1")
	f.mustStore(t, "globex", "g1")
	t.Run("Admin", func(t *testing.T) {
		got, err := f.audits.FindAuditEvents(adminCtx, cloud.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 6 { // per tenant: tenant, store, gateway
			t.Fatalf("got %d events, want 6", len(got))
		}
	})
	t.Run("Tenant", func(t *testing.T) {
		got, err := f.audits.FindAuditEvents(tenantCtx("globex"), cloud.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			if e.TenantID != "globex" {
				t.Fatalf("globex sees %+v", e)
			}
		}
		if len(got) != 3 {
			t.Fatalf("got %d events, want 3", len(got))
		}
		got, _ = f.audits.FindAuditEvents(tenantCtx("globex"), cloud.AuditFilter{TenantID: "acme"})
		if len(got) != 0 {
			t.Fatalf("globex sees %d acme events, want 0", len(got))
		}
	})
	t.Run("Store", func(t *testing.T) {
		got, _ := f.audits.FindAuditEvents(adminCtx, cloud.AuditFilter{StoreID: "a1"})
		if len(got) != 2 {
			t.Fatalf("got %d events, want 2 (store, gateway)", len(got))
		}
	})
}
