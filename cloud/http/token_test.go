package http_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	cloudhttp "github.com/storeprint/storeprint/cloud/http"
)

// A tenant token is listed by its token_id, revoked at once and refused
// from then on; the revocation is audited.
func TestServer_TenantTokens(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tok := e.tenant("acme", "s1")
	var second cloud.TenantToken
	e.must("POST", "/v1/admin/tenants/acme/tokens", adminToken, map[string]string{"reason": "tablet"}, 201, &second)
	e.must("GET", "/v1/stores", tok, nil, 200, nil)

	var list []cloud.TenantTokenInfo
	e.must("GET", "/v1/admin/tenants/acme/tokens", adminToken, nil, 200, &list)
	if len(list) != 2 || list[1].TokenID != second.TokenID || list[0].RevokedAt != nil {
		t.Fatalf("got %+v, want two live tokens", list)
	}
	_, body := e.do("GET", "/v1/admin/tenants/acme/tokens", adminToken, nil)
	if strings.Contains(string(body), tok) || strings.Contains(string(body), second.Token) {
		t.Fatal("the list shows a token's secret")
	}
	first := list[0].TokenID
	t.Run("ErrTenantToken", func(t *testing.T) {
		e.wantError("GET", "/v1/admin/tenants/acme/tokens", tok, nil, 403, "admin token")
		e.wantError("DELETE", "/v1/admin/tenants/acme/tokens/"+first, tok, nil, 403, "admin token")
	})
	t.Run("Revoke", func(t *testing.T) {
		var got cloud.TenantTokenInfo
		e.must("DELETE", "/v1/admin/tenants/acme/tokens/"+first, adminToken, map[string]string{"reason": "lost phone", "operator": "ops-1"}, 200, &got)
		if got.RevokedAt == nil {
			t.Fatalf("got %+v, want revoked_at", got)
		}
		e.wantError("GET", "/v1/stores", tok, nil, 401, "invalid token")
		e.must("GET", "/v1/stores", second.Token, nil, 200, nil) // the other token lives on
		e.wantError("DELETE", "/v1/admin/tenants/acme/tokens/"+first, adminToken, nil, 409, "revoked already")
		e.wantError("DELETE", "/v1/admin/tenants/acme/tokens/nope", adminToken, nil, 404, "no token")
		e.wantError("GET", "/v1/admin/tenants/nobody/tokens", adminToken, nil, 404, "not found")
		if n := e.count(`SELECT count(*) FROM audit_events WHERE action = $1 AND resource = $2 AND reason = 'lost phone'`,
			string(storeprint.ActionRevokeTenantToken), "tenant/acme/token/"+first); n != 1 {
			t.Fatalf("got %d audit events of the revocation, want 1", n)
		}
	})
}

// Bad tokens are limited per client address: past ten, a bad token is
// 429 with Retry-After until time passes. A valid token from the same
// address is served all along: the token is checked first.
func TestServer_BadTokens(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	e := setup(t, func(s *cloudhttp.Server) {
		s.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	})
	for i := 0; i < cloudhttp.BadTokenBurst; i++ {
		e.wantError("GET", "/v1/stores", "spt1.guess", nil, 401, "invalid token")
	}
	req, _ := http.NewRequest("GET", e.server.URL()+"/v1/stores", nil)
	req.Header.Set("Authorization", "Bearer spt1.guess")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after %d bad tokens: got %d Retry-After %q, want 429", cloudhttp.BadTokenBurst, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for range 60 {
		e.wantError("GET", "/v1/stores", "spt1.guess", nil, 429, "too many bad tokens")
	}
	e.must("GET", "/v1/stores", adminToken, nil, 200, nil)
	ahead.Add(int64(cloudhttp.BadTokenEvery))
	e.wantError("GET", "/v1/stores", "spt1.guess", nil, 401, "invalid token")
}

// With MetricsAddr the metrics move to their own listener, without a
// token, and are gone from the API's.
func TestServer_MetricsListen(t *testing.T) {
	t.Parallel()
	e := setup(t, func(s *cloudhttp.Server) { s.MetricsAddr = "127.0.0.1:0" })
	e.wantError("GET", "/metrics", adminToken, nil, 404, "no route")
	resp, err := http.Get(e.server.MetricsURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "storeprint_cloud_http_requests_total") {
		t.Fatalf("metrics listener: got %d %.200s", resp.StatusCode, b)
	}
}

// TestOpenAPI_Words: the cloud's document is valid OpenAPI 3.1 and its
// enums and id rules are package storeprint's.
func TestOpenAPI_Words(t *testing.T) {
	t.Parallel()
	if api.Doc.OpenAPI != "3.1.0" {
		t.Fatalf("got openapi %q", api.Doc.OpenAPI)
	}
	for _, tc := range []struct {
		schema string
		want   []string
	}{
		{"Status", append(strs(storeprint.Statuses), string(cloud.StatusPendingDelivery))},
		{"Reason", strs(storeprint.Reasons)},
		{"Source", strs(storeprint.Sources)},
		{"ReceiptState", strs(storeprint.ReceiptStates)},
		{"PrinterState", strs(storeprint.PrinterStates)},
		{"Role", strs(storeprint.Roles)},
		{"CommandKind", strs(storeprint.CommandKinds)},
	} {
		var got []string
		for _, v := range api.Doc.Components.Schemas[tc.schema].Value.Enum {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got enum %q, want %q", tc.schema, got, tc.want)
		}
	}
	id := api.Doc.Components.Schemas["ID"].Value
	if id.Pattern != storeprint.IDPattern || *id.MaxLength != storeprint.MaxIDLen {
		t.Errorf("ID: got pattern %q", id.Pattern)
	}
	if no := api.Doc.Components.Schemas["TaskNo"].Value; no.Pattern != storeprint.TaskNoPattern {
		t.Errorf("TaskNo: got pattern %q", no.Pattern)
	}
}

func strs[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}
