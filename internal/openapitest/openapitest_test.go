package openapitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/internal/openapitest"
)

const doc = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/things/{id}": {"get": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[a-z]+$"}}],
      "responses": {
        "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": ["integer", "null"]}}}}}},
        "404": {"description": "no", "content": {"application/json": {"schema": {"type": "object"}}}}
      }
    }}
  }
}`

func TestChecker_Check(t *testing.T) {
	t.Parallel()
	c, err := openapitest.New("t", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": []string{"application/json; charset=utf-8"}}
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
		mention    string // empty: valid
	}{
		{"OK", "/things/abc", 200, `{"n":1}`, ""},
		{"OKNull", "/things/abc", 200, `{"n":null}`, ""},
		{"ErrBody", "/things/abc", 200, `{"n":"one"}`, "does not match"},
		{"ErrStatus", "/things/abc", 500, `{"error":"x"}`, "status is not supported"},
		{"BadRequestRefused", "/things/ABC", 404, `{"error":"no such thing"}`, ""},
		{"ErrBadRequestAccepted", "/things/ABC", 200, `{"n":1}`, "accepted it"},
		{"UnknownRouteRefused", "/nothing", 404, `{"error":"no route"}`, ""},
		{"ErrUnknownRouteAnswered", "/nothing", 200, `{}`, "no such operation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "http://127.0.0.1:1"+tc.path, nil)
			err := c.Check(req, nil, tc.status, json, []byte(tc.body))
			switch {
			case tc.mention == "" && err != nil:
				t.Fatalf("got %v, want valid", err)
			case tc.mention != "" && (err == nil || !strings.Contains(err.Error(), tc.mention)):
				t.Fatalf("got %v, want an error mentioning %q", err, tc.mention)
			}
		})
	}
	if got := openapitest.FromMux("GET /v1/tasks/{task_no}"); got != "GET /v1/tasks/{task_no}" {
		t.Errorf("got %q", got)
	}
	if got := openapitest.FromMux("GET /{$}"); got != "GET /" {
		t.Errorf("got %q", got)
	}
	if got := openapitest.FromMux("GET /assets/"); got != "GET /assets/{file}" {
		t.Errorf("got %q", got)
	}
	undocumented, unserved := c.Missing([]string{"GET /things/{id}", "POST /other"})
	if len(undocumented) != 1 || undocumented[0] != "POST /other" || len(unserved) != 0 {
		t.Errorf("got undocumented %v unserved %v", undocumented, unserved)
	}
}
