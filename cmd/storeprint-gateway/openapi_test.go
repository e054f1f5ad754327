package main

import (
	"encoding/json"
	"testing"

	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// TestOpenAPI_Routes: every route the gateway answers is in its OpenAPI
// document with the role it needs, the document lists nothing the
// gateway does not serve, and the gateway serves the document without a
// token.
func TestOpenAPI_Routes(t *testing.T) {
	t.Parallel()
	hot := startSim(t, printersim.FaultNone)
	cfg := writeConfig(t, t.TempDir(), []printerConf{{id: "hot-1", addr: hot.addr}}, []stationConf{{name: "hot", printer: "hot-1"}})
	m, base := runGateway(t, cfg)

	undocumented, unserved := api.Missing(m.HTTP.Routes())
	for _, r := range undocumented {
		t.Errorf("the gateway answers %s, the OpenAPI document lacks it", r)
	}
	for _, op := range unserved {
		t.Errorf("the OpenAPI document lists %s, the gateway does not serve it", op)
	}
	for _, r := range m.HTTP.Routes() {
		op := api.Operation(r)
		if op == nil {
			continue
		}
		want := string(m.HTTP.RouteRole(r))
		if want == "" {
			want = "none"
		}
		if got, _ := op.Extensions["x-storeprint-role"].(string); got != want {
			t.Errorf("%s: the document says role %q, the gateway needs %q", r, got, want)
		}
	}

	var doc map[string]any
	if code := callToken(t, "", "GET", base+"/openapi.json", nil, &doc); code != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json without a token: got %d %v", code, doc["openapi"])
	}
	served, _ := json.Marshal(doc)
	var embedded map[string]any
	if err := json.Unmarshal(gwhttp.OpenAPI, &embedded); err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(embedded); string(served) != string(want) {
		t.Fatal("the served document differs from the embedded one")
	}
}
