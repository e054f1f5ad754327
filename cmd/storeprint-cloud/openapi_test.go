package main

import (
	"testing"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
)

// TestOpenAPI_Routes: every route the cloud answers is in its OpenAPI
// document, the document lists nothing the cloud does not serve, and the
// cloud serves the document without a token.
func TestOpenAPI_Routes(t *testing.T) {
	t.Parallel()
	node := startCloud(t, pgtest.NewDatabase(t), "127.0.0.1:0")
	undocumented, unserved := cloudAPI.Missing(node.m.HTTP.Routes())
	for _, r := range undocumented {
		t.Errorf("the cloud answers %s, the OpenAPI document lacks it", r)
	}
	for _, op := range unserved {
		t.Errorf("the OpenAPI document lists %s, the cloud does not serve it", op)
	}
	var doc map[string]any
	if code := do(t, "", "GET", node.base+"/openapi.json", nil, &doc); code != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json without a token: got %d %v", code, doc["openapi"])
	}
}
