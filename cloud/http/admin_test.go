package http_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestServer_CreateTenant(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := map[string]string{"tenant_id": "acme", "name": "Acme", "reason": "new customer", "operator": "ops-1"}
	t.Run("OK", func(t *testing.T) {
		var got cloud.Tenant
		e.must("POST", "/v1/admin/tenants", adminToken, body, 201, &got)
		if got.ID != "acme" || got.Name != "Acme" || got.CreatedAt.IsZero() {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("Replay", func(t *testing.T) {
		e.must("POST", "/v1/admin/tenants", adminToken, body, 200, nil)
	})
	t.Run("ErrConflict", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", adminToken, map[string]string{"tenant_id": "acme", "name": "Other"}, 409, "already exists")
	})

	// Bad requests: a clear 4xx and nothing written.
	t.Run("ErrNoToken", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", "", map[string]string{"tenant_id": "t1", "name": "x"}, 401, "missing bearer token")
	})
	t.Run("ErrBadToken", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", "not-the-admin-token", map[string]string{"tenant_id": "t1", "name": "x"}, 401, "invalid token")
	})
	t.Run("ErrNotBearer", func(t *testing.T) {
		status, _ := e.do("GET", "/v1/stores", "", nil)
		if status != 401 {
			t.Fatalf("got %d, want 401", status)
		}
	})
	t.Run("ErrMalformedJSON", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", adminToken, `{"tenant_id": "t1", "name": `, 400, "malformed JSON")
		e.wantError("POST", "/v1/admin/tenants", adminToken, `{"tenant_id": "t1"} {"x":1}`, 400, "after the object")
		e.wantError("POST", "/v1/admin/tenants", adminToken, `[1,2]`, 400, "JSON object")
	})
	t.Run("ErrUnknownField", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", adminToken, `{"tenant_id": "t1", "name": "x", "colour": "red"}`, 400, `unknown field "colour"`)
	})
	t.Run("ErrWrongType", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", adminToken, `{"tenant_id": 7, "name": "x"}`, 400, "tenant_id must be a string, not a number")
	})
	t.Run("ErrEmptyBody", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", adminToken, "", 400, "body is empty")
	})
	t.Run("ErrInvalidID", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/tenants", adminToken, map[string]string{"tenant_id": "a/b", "name": "x"}, 400, "tenant_id")
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		big := `{"tenant_id": "t1", "name": "` + strings.Repeat("x", 1<<20) + `"}`
		e.wantError("POST", "/v1/admin/tenants", adminToken, big, 413, "larger than")
	})
	t.Run("NothingWritten", func(t *testing.T) {
		if n := e.count(`SELECT count(*) FROM tenants`); n != 1 {
			t.Fatalf("got %d tenants, want 1", n)
		}
		if n := e.count(`SELECT count(*) FROM audit_events`); n != 1 {
			t.Fatalf("got %d audit events, want 1", n)
		}
	})
}

func TestServer_CreateGateway(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.tenant("acme", "s1")
	var gw struct {
		GatewayID string `json:"gateway_id"`
		Token     string `json:"token"`
	}
	t.Run("OK", func(t *testing.T) {
		e.must("POST", "/v1/admin/stores/s1/gateways", adminToken, nil, 201, &gw)
		if !strings.HasPrefix(gw.GatewayID, "gw-") || !strings.HasPrefix(gw.Token, cloud.GatewayTokenPrefix) {
			t.Fatalf("got %+v", gw)
		}
		if n := e.count(`SELECT count(*) FROM gateways WHERE token_hash = $1`, cloud.HashToken(gw.Token)); n != 1 {
			t.Fatalf("got %d gateways holding the token's hash, want 1", n)
		}
	})
	t.Run("ErrGatewayTokenOnAPI", func(t *testing.T) {
		e.wantError("GET", "/v1/stores", gw.Token, nil, 403, "sync link")
	})
	t.Run("ErrUnknownStore", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/stores/nowhere/gateways", adminToken, nil, 404, `store "nowhere" not found`)
	})
	t.Run("Revoke", func(t *testing.T) {
		var got struct {
			RevokedAt *string `json:"revoked_at"`
		}
		e.must("DELETE", "/v1/admin/gateways/"+gw.GatewayID+"?reason=lost", adminToken, nil, 200, &got)
		if got.RevokedAt == nil {
			t.Fatal("got no revoked_at")
		}
		if n := e.count(`SELECT count(*) FROM gateways WHERE revoked_at IS NOT NULL`); n != 1 {
			t.Fatalf("got %d revoked gateways, want 1", n)
		}
	})
	t.Run("ErrRevokeUnknown", func(t *testing.T) {
		e.wantError("DELETE", "/v1/admin/gateways/gw-none", adminToken, nil, 404, "not found")
	})
}

// TestServer_Audit performs every admin action through the API and finds
// an audit event for each: who, what, why, before, after, when.
func TestServer_Audit(t *testing.T) {
	t.Parallel()
	e := setup(t)
	note := func(extra map[string]string) map[string]string {
		m := map[string]string{"reason": "because", "operator": "ops-1"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	e.must("POST", "/v1/admin/tenants", adminToken, note(map[string]string{"tenant_id": "acme", "name": "Acme"}), 201, nil)
	var tok cloud.TenantToken
	e.must("POST", "/v1/admin/tenants/acme/tokens", adminToken, note(nil), 201, &tok)
	e.must("POST", "/v1/admin/stores", adminToken, note(map[string]string{"store_id": "s1", "tenant_id": "acme", "name": "One"}), 201, nil)
	var gw struct {
		GatewayID string `json:"gateway_id"`
	}
	e.must("POST", "/v1/admin/stores/s1/gateways", adminToken, note(nil), 201, &gw)
	ingestFailedTask(t, e, "s1", gw.GatewayID)
	e.must("POST", "/v1/stores/s1/tasks/order_f_station_hot/retry", tok.Token, note(nil), 202, nil)
	e.must("POST", "/v1/stores/s1/tasks/order_f_station_hot/reprint", adminToken, note(nil), 202, nil)
	e.must("POST", "/v1/stores/s1/printers/hot-1/failover/ack", tok.Token, note(nil), 202, nil)
	e.must("DELETE", "/v1/admin/gateways/"+gw.GatewayID, adminToken, note(nil), 200, nil)

	var events []cloud.AuditEvent
	e.must("GET", "/v1/audit?limit=100", adminToken, nil, 200, &events)
	byAction := map[storeprint.AuditAction]cloud.AuditEvent{}
	for _, ev := range events {
		byAction[ev.Action] = ev
	}
	for _, action := range []storeprint.AuditAction{
		storeprint.ActionCreateTenant, storeprint.ActionCreateTenantToken, storeprint.ActionCreateStore, storeprint.ActionCreateGateway,
		storeprint.ActionCloudRetry, storeprint.ActionCloudReprint, storeprint.ActionCloudFailoverAck, storeprint.ActionRevokeGateway,
	} {
		ev, ok := byAction[action]
		if !ok {
			t.Errorf("no audit event for %s", action)
			continue
		}
		if ev.Actor == "" || ev.Reason != "because" || ev.Operator != "ops-1" || ev.At.IsZero() || ev.Resource == "" ||
			string(ev.After) == "null" {
			t.Errorf("%s: got %+v, want who, why, after and when", action, ev)
		}
	}
	for _, action := range []storeprint.AuditAction{storeprint.ActionCloudRetry, storeprint.ActionCloudReprint, storeprint.ActionCloudFailoverAck, storeprint.ActionRevokeGateway} {
		if string(byAction[action].Before) == "null" {
			t.Errorf("%s: no before state", action)
		}
	}
	if got := byAction[storeprint.ActionCloudRetry].Actor; got != "tenant:acme/token:"+tok.TokenID {
		t.Errorf("retry: got actor %q, want the tenant token", got)
	}
	raw, _ := json.Marshal(events)
	if strings.Contains(string(raw), tok.Token) {
		t.Error("a token's secret is in the audit trail")
	}
	t.Run("TenantSeesOwn", func(t *testing.T) {
		var got []cloud.AuditEvent
		e.must("GET", "/v1/audit", tok.Token, nil, 200, &got)
		if len(got) != len(events) {
			t.Fatalf("got %d events, want %d", len(got), len(events))
		}
	})
}
