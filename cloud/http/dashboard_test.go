package http_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// dashboardEnv has acme's s1 with a failed ticket and a printer in
// failover, and globex's g1 with nothing.
func dashboardEnv(t *testing.T) (e *env, acme, globex string) {
	t.Helper()
	e = setup(t)
	acme = e.tenant("acme", "s1")
	globex = e.tenant("globex", "g1")
	var gw struct {
		GatewayID string `json:"gateway_id"`
	}
	e.must("POST", "/v1/admin/stores/s1/gateways", adminToken, nil, 201, &gw)
	ingestFailedTask(t, e, "s1", gw.GatewayID)
	return e, acme, globex
}

func TestServer_Dashboard(t *testing.T) {
	t.Parallel()
	e, acme, globex := dashboardEnv(t)
	t.Run("Admin", func(t *testing.T) {
		var got cloud.Dashboard
		e.must("GET", "/v1/dashboard", adminToken, nil, 200, &got)
		if got.Summary.Stores != 2 || len(got.Stores) != 2 || got.Stores[0].ID != "s1" {
			t.Fatalf("got %+v, want s1 (in trouble) and g1", got)
		}
		if len(got.Queue) != 1 || got.Queue[0].TaskNo != "order_f_station_hot" || got.Queue[0].TaskStatus != storeprint.StatusFailed {
			t.Fatalf("got queue %+v, want the failed ticket", got.Queue)
		}
		if len(got.Printers) != 1 || got.Printers[0].ID != "hot-1" || !got.Printers[0].Failover {
			t.Fatalf("got printers in trouble %+v, want hot-1 in failover", got.Printers)
		}
	})
	t.Run("Tenant", func(t *testing.T) {
		var got cloud.Dashboard
		e.must("GET", "/v1/dashboard", globex, nil, 200, &got)
		if len(got.Stores) != 1 || got.Stores[0].ID != "g1" || len(got.Queue) != 0 || len(got.Printers) != 0 || got.Summary.Stores != 1 {
			t.Fatalf("globex got %+v, want g1 alone", got)
		}
		e.must("GET", "/v1/dashboard", acme, nil, 200, &got)
		if len(got.Stores) != 1 || got.Stores[0].ID != "s1" || len(got.Queue) != 1 {
			t.Fatalf("acme got %+v, want s1 alone with its alert", got)
		}
	})
	t.Run("Since", func(t *testing.T) {
		since := time.Now().Add(-time.Hour).Truncate(time.Second).In(time.FixedZone("CST", 8*3600))
		var got cloud.Dashboard
		e.must("GET", "/v1/dashboard?limit=1&since="+url.QueryEscape(since.Format(time.RFC3339)), adminToken, nil, 200, &got)
		if !got.Since.Equal(since) || len(got.Stores) != 1 {
			t.Fatalf("got since %v and %d stores, want %v and 1", got.Since, len(got.Stores), since)
		}
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		e.wantError("GET", "/v1/dashboard?since=yesterday", acme, nil, 400, "since must be an RFC 3339 time")
		e.wantError("GET", "/v1/dashboard?since=2020-01-01T00:00:00Z", acme, nil, 400, "within the last 48 hours")
		e.wantError("GET", "/v1/dashboard?since="+url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), acme, nil, 400, "in the future")
		e.wantError("GET", "/v1/dashboard?limit=0", acme, nil, 400, "limit must be a positive number")
		e.wantError("GET", "/v1/dashboard?limit=100000", acme, nil, 400, "limit must be between 1 and 500")
	})
	t.Run("ErrCredential", func(t *testing.T) {
		e.wantError("GET", "/v1/dashboard", "", nil, 401, "missing bearer token")
		e.wantError("GET", "/v1/dashboard", "wrong", nil, 401, "invalid token")
		e.wantError("GET", "/v1/dashboard", cloud.NewGatewayToken("s1"), nil, 403, "sync link")
	})
}

func TestServer_Search(t *testing.T) {
	t.Parallel()
	e, acme, globex := dashboardEnv(t)
	e.must("POST", "/v1/stores/s1/tasks/order_f_station_hot/retry", acme,
		map[string]string{"operator": "Amy", "reason": "paper jam cleared"}, 202, nil)
	type result struct {
		Query string               `json:"q"`
		Tasks []*cloud.TaskHistory `json:"tasks"`
	}
	t.Run("OK", func(t *testing.T) {
		for _, q := range []string{"f", "order_f_station_hot"} {
			var got result
			e.must("GET", "/v1/search?q="+q, acme, nil, 200, &got)
			if got.Query != q || len(got.Tasks) != 1 {
				t.Fatalf("q=%s: got %+v, want one task", q, got)
			}
			h := got.Tasks[0]
			if h.TaskNo != "order_f_station_hot" || h.StoreID != "s1" || len(h.Receipts) != 1 || len(h.Events) != 2 {
				t.Fatalf("q=%s: got %+v with %d receipts and %d events, want the task with 1 and 2", q, h.Task, len(h.Receipts), len(h.Events))
			}
			if len(h.Audit) != 1 || h.Audit[0].Action != storeprint.ActionCloudRetry || h.Audit[0].Operator != "Amy" {
				t.Fatalf("q=%s: got audit %+v, want Amy's retry", q, h.Audit)
			}
		}
	})
	t.Run("OtherTenant", func(t *testing.T) {
		var got result
		e.must("GET", "/v1/search?q=f", globex, nil, 200, &got)
		if len(got.Tasks) != 0 {
			t.Fatalf("globex got %+v, want nothing", got.Tasks)
		}
		e.wantError("GET", "/v1/search?q=f&store_id=s1", globex, nil, 404, `store "s1" not found`)
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		e.wantError("GET", "/v1/search", acme, nil, 400, "q is required")
		e.wantError("GET", "/v1/search?q="+strings.Repeat("x", 201), acme, nil, 400, "q is longer than 200")
		e.wantError("GET", "/v1/search?q=%1b", acme, nil, 400, "control character")
		e.wantError("GET", "/v1/search?q=f&store_id=a+b", acme, nil, 400, "store_id")
		e.wantError("GET", "/v1/search?q=f&limit=1000", acme, nil, 400, "limit must be between 1 and 100")
		e.wantError("GET", "/v1/search?q=f", "", nil, 401, "missing bearer token")
	})
}

// The dashboard page: served without a token (it holds no data), under a
// CSP that allows only this origin, with every asset embedded and no
// reference to another origin.
func TestServer_Page(t *testing.T) {
	t.Parallel()
	e := setup(t)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(e.server.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	t.Run("OK", func(t *testing.T) {
		for path, ctype := range map[string]string{
			"/":                "text/html",
			"/assets/app.js":   "text/javascript",
			"/assets/app.css":  "text/css",
			"/assets/icon.svg": "image/svg+xml",
		} {
			resp, body := get(path)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) {
				t.Fatalf("%s: got %d %s, want 200 %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), ctype)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") ||
				!strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
				t.Fatalf("%s: got CSP %q, want only 'self'", path, csp)
			}
			// The SVG namespace names a spec, it is never fetched.
			body = strings.ReplaceAll(body, `xmlns="http://www.w3.org/2000/svg"`, "")
			if m := external.FindString(body); m != "" {
				t.Fatalf("%s refers to another origin: %s", path, m)
			}
		}
		_, html := get("/")
		for _, want := range []string{`src="/assets/app.js"`, `href="/assets/app.css"`, `id="signin-form"`} {
			if !strings.Contains(html, want) {
				t.Fatalf("the page lacks %s", want)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/assets/", "/assets/nothing.js", "/index.html", "/nothing"} {
			resp, body := get(path)
			if resp.StatusCode != 404 || !strings.Contains(body, `"error"`) {
				t.Fatalf("%s: got %d %s, want a 404 JSON error", path, resp.StatusCode, body)
			}
		}
	})
}
