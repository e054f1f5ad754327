package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/sync"
	"github.com/storeprint/storeprint/sync/server"
)

// A link without credentials is refused before any service is asked, with
// a JSON error that says what is missing. (Links with credentials are
// tested against PostgreSQL in cmd/storeprint-cloud.)
func TestServer_ServeHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&server.Server{})
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		{"ErrNoCredentials", nil},
		{"ErrNoGateway", map[string]string{"Authorization": "Bearer x"}},
		{"ErrNoToken", map[string]string{sync.HeaderGateway: "gw-1"}},
		{"ErrNotBearer", map[string]string{sync.HeaderGateway: "gw-1", "Authorization": "Basic eA=="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+sync.Path, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error string `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 401 || !strings.Contains(e.Error, sync.HeaderGateway) {
				t.Fatalf("got %d %q, want 401 naming the headers", resp.StatusCode, e.Error)
			}
		})
	}
}
