package http_test

import (
	"net/http"
	"testing"
)

// Text with a bidirectional control character is refused with a 400
// naming its field; a body that is not valid UTF-8 is refused, not
// altered; every answer says nosniff.
func TestServer_Text(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.must("POST", "/v1/admin/tenants", adminToken, map[string]string{"tenant_id": "acme", "name": "Acme"}, 201, nil)
	for _, tc := range []struct {
		body    any
		mention string
	}{
		{map[string]string{"store_id": "s1", "tenant_id": "acme", "name": "Noodles \u202eselddoN"}, "name contains the bidirectional control character U+202E"},
		{map[string]string{"store_id": "s1", "tenant_id": "acme", "name": "\u2066Noodles\u2069"}, "name contains the bidirectional control character U+2066"},
		{`{"store_id":"s1","tenant_id":"acme","name":"Noodles ` + "\xff" + `"}`, "not valid UTF-8 (at byte 52)"},
	} {
		e.wantError("POST", "/v1/admin/stores", adminToken, tc.body, 400, tc.mention)
	}
	if n := e.count(`SELECT count(*) FROM stores`); n != 0 {
		t.Fatalf("got %d stores, want none", n)
	}
	for _, path := range []string{"/healthz", "/v1/stores", "/v1/nothing", "/openapi.json", "/"} {
		req, _ := http.NewRequest("GET", e.server.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: got X-Content-Type-Options %q, want nosniff", path, got)
		}
	}
}
