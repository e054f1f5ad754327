package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/internal/testlog"
)

func TestMain(m *testing.M) { pgtest.Main(m, testbin.Cleanup) }

const adminToken = "e2e-admin-token-0123456789"

func newMain(env map[string]string) (*Main, *testlog.Buffer) {
	m := NewMain()
	out := &testlog.Buffer{}
	m.Stdout, m.Stderr = out, io.Discard
	m.Getenv = func(k string) string { return env[k] }
	return m, out
}

func TestMain_ParseFlags(t *testing.T) {
	t.Parallel()
	t.Run("Flags", func(t *testing.T) {
		m, _ := newMain(nil)
		err := m.ParseFlags([]string{"run", "--listen", "127.0.0.1:0", "--admin-token", adminToken, "--database-url", "postgres://db/x", "--migrate=false"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Listen != "127.0.0.1:0" || m.AdminToken != adminToken || m.DatabaseURL != "postgres://db/x" || m.Migrate ||
			m.AlertTTL != cloud.DefaultAlertTTL {
			t.Fatalf("got %+v", m)
		}
	})
	t.Run("AlertTTL", func(t *testing.T) {
		m, _ := newMain(map[string]string{"STOREPRINT_ALERT_TTL": "2d"})
		if err := m.ParseFlags([]string{"migrate", "--database-url", "postgres://db/x"}); err != nil || m.AlertTTL != 48*time.Hour {
			t.Fatalf("got %v %v, want 48h from the variable", m.AlertTTL, err)
		}
		if err := m.ParseFlags([]string{"migrate", "--database-url", "postgres://db/x", "--alert-ttl", "90m"}); err != nil || m.AlertTTL != 90*time.Minute {
			t.Fatalf("got %v %v, want 90m from the flag", m.AlertTTL, err)
		}
	})
	t.Run("Env", func(t *testing.T) {
		m, _ := newMain(map[string]string{
			"STOREPRINT_LISTEN": "127.0.0.1:7000", "STOREPRINT_ADMIN_TOKEN": adminToken,
			"DATABASE_URL": "postgres://db/plain", "STOREPRINT_MIGRATE": "false", "STOREPRINT_LOG_FORMAT": "json",
		})
		if err := m.ParseFlags([]string{"run"}); err != nil {
			t.Fatal(err)
		}
		if m.Listen != "127.0.0.1:7000" || m.AdminToken != adminToken || m.DatabaseURL != "postgres://db/plain" || m.Migrate || m.LogFormat != "json" {
			t.Fatalf("got %+v", m)
		}
	})
	t.Run("FlagWins", func(t *testing.T) {
		m, _ := newMain(map[string]string{
			"STOREPRINT_LISTEN": "127.0.0.1:7000", "STOREPRINT_DATABASE_URL": "postgres://db/storeprint", "DATABASE_URL": "postgres://db/plain",
		})
		if err := m.ParseFlags([]string{"migrate", "--listen", "127.0.0.1:8000"}); err != nil {
			t.Fatal(err)
		}
		if m.Listen != "127.0.0.1:8000" || m.DatabaseURL != "postgres://db/storeprint" || !m.Migrate {
			t.Fatalf("got listen %q database %q migrate %v", m.Listen, m.DatabaseURL, m.Migrate)
		}
	})
	for name, tc := range map[string]struct {
		args    []string
		env     map[string]string
		mention string
	}{
		"ErrNoCommand":      {nil, nil, "command is required"},
		"ErrUnknownCommand": {[]string{"serve"}, nil, `unknown command "serve"`},
		"ErrNoDatabase":     {[]string{"migrate"}, nil, "--database-url"},
		"ErrNoAdminToken":   {[]string{"run", "--database-url", "postgres://x"}, nil, "--admin-token"},
		"ErrBadMigrate":     {[]string{"run"}, map[string]string{"STOREPRINT_MIGRATE": "maybe"}, "STOREPRINT_MIGRATE"},
		"ErrUnknownFlag":    {[]string{"run", "--colour"}, nil, "colour"},
		"ErrExtraArg":       {[]string{"migrate", "--database-url", "postgres://x", "now"}, nil, `unexpected argument "now"`},
		"ErrAlertTTL":       {[]string{"migrate", "--database-url", "postgres://x", "--alert-ttl", "soon"}, nil, `alert-ttl: "soon" is not a positive duration`},
		"ErrAlertTTLZero":   {[]string{"migrate", "--database-url", "postgres://x", "--alert-ttl", "0s"}, nil, "alert-ttl"},
		"ErrAlertTTLEnv":    {[]string{"migrate", "--database-url", "postgres://x"}, map[string]string{"STOREPRINT_ALERT_TTL": "-1d"}, "STOREPRINT_ALERT_TTL"},
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := newMain(tc.env)
			err := m.ParseFlags(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.mention)
			}
		})
	}
	t.Run("Help", func(t *testing.T) {
		m, out := newMain(nil)
		if err := m.ParseFlags([]string{"--help"}); err != errHelp {
			t.Fatalf("got %v, want errHelp", err)
		}
		if !strings.Contains(out.String(), "storeprint-cloud run") {
			t.Fatalf("got %q, want the usage", out)
		}
	})
}

func TestMain_Migrate(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		m, out := newMain(map[string]string{"DATABASE_URL": pgtest.NewEmptyDatabase(t)})
		if err := m.ParseFlags([]string{"migrate"}); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "schema at version ") {
			t.Fatalf("got %q", out)
		}
	})
	t.Run("ErrUnreachable", func(t *testing.T) {
		m, _ := newMain(nil)
		if err := m.ParseFlags([]string{"migrate", "--database-url", "postgres://nobody:pw@127.0.0.1:1/x?connect_timeout=2"}); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(context.Background()); err == nil {
			t.Fatal("got nil error for an unreachable database")
		}
	})
}

// client talks to the running program.
type client struct {
	t    *testing.T
	base string
}

func (c *client) do(method, path, token string, body any, want int, v any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := nethttp.NewRequest(method, c.base+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: got %d %s, want %d", method, path, resp.StatusCode, out, want)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// TestMain_Run runs the real program on an empty database and drives it
// as HQ would: it migrates at start, prints its address, and serves the
// API until its context ends.
func TestMain_Run(t *testing.T) {
	t.Parallel()
	m, out := newMain(map[string]string{"STOREPRINT_ADMIN_TOKEN": adminToken, "STOREPRINT_DATABASE_URL": pgtest.NewEmptyDatabase(t)})
	if err := m.ParseFlags([]string{"run", "--listen", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("run ended before serving: %v", err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	if want := "storeprint-cloud listening on " + m.HTTP.URL() + "\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	c := &client{t: t, base: m.HTTP.URL()}
	apis.Add(c.base, cloudAPI)

	c.do("GET", "/healthz", "", nil, 200, nil)
	c.do("POST", "/v1/admin/tenants", adminToken, map[string]string{"tenant_id": "acme", "name": "Acme"}, 201, nil)
	c.do("POST", "/v1/admin/tenants", adminToken, map[string]string{"tenant_id": "globex", "name": "Globex"}, 201, nil)
	c.do("POST", "/v1/admin/stores", adminToken, map[string]string{"store_id": "s1", "tenant_id": "acme", "name": "One"}, 201, nil)
	var acme, globex cloud.TenantToken
	c.do("POST", "/v1/admin/tenants/acme/tokens", adminToken, nil, 201, &acme)
	c.do("POST", "/v1/admin/tenants/globex/tokens", adminToken, nil, 201, &globex)
	var gw struct {
		GatewayID string `json:"gateway_id"`
		Token     string `json:"token"`
	}
	c.do("POST", "/v1/admin/stores/s1/gateways", adminToken, map[string]string{"reason": "new gateway"}, 201, &gw)

	order := map[string]any{"order_id": "w1", "items": []map[string]any{{"name": "Rice", "qty": 1, "station": "hot"}}}
	c.do("POST", "/v1/stores/s1/orders", acme.Token, order, 201, nil)
	c.do("POST", "/v1/stores/s1/orders", acme.Token, order, 200, nil)
	var task cloud.Task
	c.do("GET", "/v1/stores/s1/tasks/order_w1_station_hot", acme.Token, nil, 200, &task)
	if task.Status != cloud.StatusPendingDelivery {
		t.Fatalf("got %s, want pending_delivery", task.Status)
	}

	t.Run("ErrWrongTenant", func(t *testing.T) {
		c := &client{t: t, base: c.base}
		c.do("GET", "/v1/stores/s1/tasks/order_w1_station_hot", globex.Token, nil, 404, nil)
		c.do("POST", "/v1/stores/s1/orders", globex.Token, order, 404, nil)
	})
	t.Run("RevokedGateway", func(t *testing.T) {
		gateways := postgres.NewGatewayService(m.DB)
		if _, err := gateways.Authenticate(context.Background(), gw.GatewayID, gw.Token); err != nil {
			t.Fatalf("before revocation: %v", err)
		}
		c := &client{t: t, base: c.base}
		c.do("DELETE", "/v1/admin/gateways/"+gw.GatewayID, adminToken, map[string]string{"reason": "stolen"}, 200, nil)
		_, err := gateways.Authenticate(context.Background(), gw.GatewayID, gw.Token)
		if storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("after revocation: got %v, want EUNAUTHORIZED", err)
		}
	})
	t.Run("Audit", func(t *testing.T) {
		var events []cloud.AuditEvent
		c := &client{t: t, base: c.base}
		c.do("GET", "/v1/audit?tenant_id=acme", adminToken, nil, 200, &events)
		// tenant, token, store, gateway, revocation
		if len(events) != 6 {
			t.Fatalf("got %d audit events for acme, want 6 (5 actions and one duplicate prevented)", len(events))
		}
	})
}
