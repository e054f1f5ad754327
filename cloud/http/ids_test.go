package http_test

import (
	"log/slog"
	"strings"
	"testing"

	cloudhttp "github.com/storeprint/storeprint/cloud/http"
	"github.com/storeprint/storeprint/internal/testlog"
)

// Ids in paths and queries follow the gateway's id rules: a NUL, invalid
// UTF-8 or an over-long id is a 400 naming the parameter, before the
// database sees it, and nothing is logged as an error.
func TestServer_IDs(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	e := setup(t, func(s *cloudhttp.Server) { s.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	tok := e.tenant("acme", "s1")
	long := strings.Repeat("a", 65)
	for _, tc := range []struct {
		method, path, mention string
	}{
		{"GET", "/v1/stores/%00/tasks", "store_id contains a NUL byte"},
		{"GET", "/v1/stores/s%ff/tasks", "store_id is not valid UTF-8"},
		{"GET", "/v1/stores/" + long + "/tasks", "store_id is longer than 64"},
		{"GET", "/v1/stores/s1/tasks?after=%ff", "after is not valid UTF-8"},
		{"GET", "/v1/stores/s1/tasks?after=%00", "after contains a NUL byte"},
		{"GET", "/v1/stores/s1/tasks?status=%00", "status contains a NUL byte"},
		{"GET", "/v1/stores/s1/tasks/order_%00_station_hot", "task_no contains a NUL byte"},
		{"GET", "/v1/stores/s1/tasks/" + strings.Repeat("t", 201), "task_no is longer than 200"},
		{"GET", "/v1/stores/s1/orders/%ff%fe", "order_id is not valid UTF-8"},
		{"GET", "/v1/stores/s%00/link", "store_id contains a NUL byte"},
		{"POST", "/v1/stores/s1/tasks/a%00/retry", "task_no contains a NUL byte"},
		{"POST", "/v1/stores/s1/printers/p%ff/failover/ack", "printer_id is not valid UTF-8"},
		{"POST", "/v1/admin/tenants/%00/tokens", "tenant_id contains a NUL byte"},
		{"DELETE", "/v1/admin/gateways/gw%ff", "gateway_id is not valid UTF-8"},
		{"GET", "/v1/audit?store_id=%00", "store_id contains a NUL byte"},
		{"GET", "/v1/audit?tenant_id=%ff", "tenant_id is not valid UTF-8"},
		{"GET", "/v1/search?q=%00", "q contains a NUL byte"},
		{"GET", "/v1/search?q=o1&store_id=%ff", "store_id is not valid UTF-8"},
		{"GET", "/v1/dashboard?since=%ff", "since is not valid UTF-8"},
		{"GET", "/v1/stores/%2E%2E/tasks", "store_id \"..\" is not an id"},
		{"GET", "/v1/stores/%2E/tasks", "store_id \".\" is not an id"},
		{"GET", "/v1/stores/s1/orders/%2E%2E", "order_id \"..\" is not an id"},
		{"POST", "/v1/admin/tenants/%2E%2E/tokens", "tenant_id \"..\" is not an id"},
		{"DELETE", "/v1/admin/gateways/%2E%2E", "gateway_id \"..\" is not an id"},
	} {
		token := tok
		if strings.Contains(tc.path, "/admin/") {
			token = adminToken
		}
		e.wantError(tc.method, tc.path, token, nil, 400, tc.mention)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("the server logged an error:\n%s", logs)
	}
}
