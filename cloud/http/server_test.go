package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud"
	cloudhttp "github.com/storeprint/storeprint/cloud/http"
	"github.com/storeprint/storeprint/cloud/postgres"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/openapitest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const adminToken = "admin-token-for-tests-0123456789"

// api checks every exchange of these tests against the cloud's OpenAPI
// document; client goes through it.
var (
	api    = openapitest.MustNew("cloud", cloudhttp.OpenAPI)
	client = &http.Client{Transport: api.Transport(nil)}
)

// env is one test's server on a real database and socket.
type env struct {
	t      *testing.T
	url    string // the database
	db     *postgres.DB
	server *cloudhttp.Server
}

func setup(t *testing.T, opts ...func(*cloudhttp.Server)) *env {
	t.Helper()
	url := pgtest.NewDatabase(t)
	db, err := postgres.Open(context.Background(), url+"&pool_max_conns=24")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	s := cloudhttp.NewServer()
	s.Addr = "127.0.0.1:0"
	s.AdminToken = adminToken
	s.Health = db
	s.TenantService = postgres.NewTenantService(db)
	s.StoreService = postgres.NewStoreService(db)
	s.GatewayService = postgres.NewGatewayService(db)
	s.OrderService = postgres.NewOrderService(db)
	s.TaskService = postgres.NewTaskService(db)
	s.CommandService = postgres.NewCommandService(db)
	s.AuditService = postgres.NewAuditService(db)
	s.DeviceService = postgres.NewDeviceService(db)
	s.LinkService = postgres.NewLinkService(db)
	s.DashboardService = postgres.NewDashboardService(db)
	for _, o := range opts {
		o(s)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{t: t, url: url, db: db, server: s}
}

// do sends a request with a token (none when empty) and a body (raw when
// a string or []byte, else JSON) and returns the status and body.
func (e *env) do(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.server.URL()+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// must sends a request and decodes the answer into v, failing unless the
// status is want.
func (e *env) must(method, path, token string, body any, want int, v any) {
	e.t.Helper()
	status, out := e.do(method, path, token, body)
	if status != want {
		e.t.Fatalf("%s %s: got %d %s, want %d", method, path, status, out, want)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, out, err)
		}
	}
}

// wantError checks a 4xx answer: the status and an "error" naming the
// problem.
func (e *env) wantError(method, path, token string, body any, want int, mention string) {
	e.t.Helper()
	status, out := e.do(method, path, token, body)
	var got struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		e.t.Fatalf("%s %s: the answer %q is not JSON: %v", method, path, out, err)
	}
	if status != want || !strings.Contains(got.Error, mention) {
		e.t.Fatalf("%s %s: got %d %q, want %d with an error mentioning %q", method, path, status, got.Error, want, mention)
	}
}

// count answers a count(*) query on the test's database.
func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// tenant creates a tenant with a store and returns a tenant token.
func (e *env) tenant(tenantID string, stores ...string) string {
	e.t.Helper()
	e.must("POST", "/v1/admin/tenants", adminToken, map[string]string{"tenant_id": tenantID, "name": tenantID}, 201, nil)
	for _, s := range stores {
		e.must("POST", "/v1/admin/stores", adminToken, map[string]string{"store_id": s, "tenant_id": tenantID, "name": s}, 201, nil)
	}
	var tok cloud.TenantToken
	e.must("POST", "/v1/admin/tenants/"+tenantID+"/tokens", adminToken, nil, 201, &tok)
	return tok.Token
}

func TestServer_Health(t *testing.T) {
	t.Parallel()
	e := setup(t)
	t.Run("OK", func(t *testing.T) {
		var got map[string]string
		e.must("GET", "/healthz", "", nil, 200, &got)
		if got["status"] != "ok" {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("Metrics", func(t *testing.T) {
		e.do("GET", "/v1/stores", adminToken, nil)
		if status, _ := e.do("GET", "/metrics", "", nil); status != 401 {
			t.Fatalf("metrics without a token: got %d, want 401", status)
		}
		status, out := e.do("GET", "/metrics", adminToken, nil)
		if status != 200 || !strings.Contains(string(out), `storeprint_cloud_http_requests_total{code="200",route="GET /v1/stores"}`) {
			t.Fatalf("got %d, want the request counted by route:\n%s", status, out)
		}
	})
	t.Run("ErrNoRoute", func(t *testing.T) {
		e.wantError("GET", "/v1/nothing", adminToken, nil, 404, "no route for GET /v1/nothing")
	})
}

// A known path with another method gets a JSON 405 naming the method to
// use; an unknown path a JSON 404.
func TestServer_Routes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	code, body := e.do("GET", "/v1/admin/tenants", adminToken, nil)
	if code != http.StatusMethodNotAllowed || !strings.Contains(string(body), "use POST") {
		t.Fatalf("got %d %s, want 405 naming POST", code, body)
	}
	code, body = e.do("GET", "/v1/nothing", adminToken, nil)
	if code != http.StatusNotFound || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("got %d %s, want a JSON 404", code, body)
	}
}
