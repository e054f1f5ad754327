package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres"
	"github.com/storeprint/storeprint/sync"
)

var order = map[string]any{
	"order_id": "d1", "table": "online",
	"items": []map[string]any{
		{"name": "Noodles", "qty": 2, "station": "hot"},
		{"name": "Tea", "qty": 1, "station": "bar", "note": "no sugar"},
	},
}

// ingestFailedTask has the store's gateway report a failed task on
// printer hot-1, which is in failover to pass-1.
func ingestFailedTask(t *testing.T, e *env, storeID, gatewayID string) {
	t.Helper()
	ctx := context.Background()
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second) // today: its alert is current
	data, _ := json.Marshal(sync.TaskEvent{TaskNo: "order_f_station_hot", Version: 4, OrderID: "f", Station: "hot",
		PrinterID: "hot-1", Status: "failed", Attempt: 5, LastError: "offline", CreatedAt: at, UpdatedAt: at})
	receipt, _ := json.Marshal(sync.ReceiptEvent{TaskNo: "order_f_station_hot", Attempt: 5, State: storeprint.ReceiptPrepared, PrinterID: "hot-1", At: at})
	if _, err := postgres.NewIngestService(e.db).Ingest(ctx, gatewayID, storeID, "", []sync.Event{
		{Seq: 1, Kind: sync.KindTask, TaskNo: "order_f_station_hot", At: at, Data: data},
		{Seq: 2, Kind: sync.KindReceipt, TaskNo: "order_f_station_hot", At: at, Data: receipt},
	}); err != nil {
		t.Fatal(err)
	}
	if err := postgres.NewGatewayService(e.db).UpdatePrinters(ctx, storeID, gatewayID, []*cloud.Printer{
		{ID: "hot-1", Status: storeprint.PrinterOffline, Stations: []string{"hot"}, Backup: "pass-1", Failover: true},
		{ID: "pass-1", Status: storeprint.PrinterReady},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestServer_CreateOrder(t *testing.T) {
	t.Parallel()
	e := setup(t)
	acme := e.tenant("acme", "s1")
	globex := e.tenant("globex", "g1")
	want := cloud.OrderResult{OrderID: "d1", Tasks: []*cloud.OrderTask{
		{TaskNo: "order_d1_station_bar", Station: "bar", Status: cloud.StatusPendingDelivery},
		{TaskNo: "order_d1_station_hot", Station: "hot", Status: cloud.StatusPendingDelivery},
	}}
	t.Run("OK", func(t *testing.T) {
		var got cloud.OrderResult
		e.must("POST", "/v1/stores/s1/orders", acme, order, 201, &got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
	t.Run("Replay", func(t *testing.T) {
		status, first := e.do("POST", "/v1/stores/s1/orders", acme, order)
		if status != 200 {
			t.Fatalf("got %d, want 200", status)
		}
		_, second := e.do("POST", "/v1/stores/s1/orders", adminToken, order)
		if string(first) != string(second) {
			t.Fatalf("got %s then %s, want the same body", first, second)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		changed := map[string]any{"order_id": "d1", "items": []map[string]any{{"name": "Noodles", "qty": 3, "station": "hot"}}}
		e.wantError("POST", "/v1/stores/s1/orders", acme, changed, 409, "different content")
	})
	t.Run("ErrValidation", func(t *testing.T) {
		e.wantError("POST", "/v1/stores/s1/orders", acme, map[string]any{"order_id": "d2", "items": []any{}}, 400, "items must not be empty")
		e.wantError("POST", "/v1/stores/s1/orders", acme, map[string]any{"order_id": "d 2", "items": []any{}}, 400, "order_id")
		e.wantError("POST", "/v1/stores/s1/orders", acme, `{"order_id": "d2", "items": [{"name": "x", "qty": "two", "station": "hot"}]}`, 400, "items[0].qty must be an integer, not a string")
	})
	t.Run("ErrUnknownStore", func(t *testing.T) {
		e.wantError("POST", "/v1/stores/nowhere/orders", adminToken, order, 404, `store "nowhere" not found`)
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		e.wantError("POST", "/v1/stores/s1/orders", globex, map[string]any{"order_id": "d9", "items": order["items"]}, 404, "not found")
		e.wantError("POST", "/v1/stores/s1/orders", globex, order, 404, "not found")
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		big := fmt.Sprintf(`{"order_id": "big", "note": "%s", "items": []}`, strings.Repeat("x", 2<<20))
		e.wantError("POST", "/v1/stores/s1/orders", acme, big, 413, "larger than")
	})
	t.Run("NothingWritten", func(t *testing.T) {
		if n := e.count(`SELECT count(*) FROM cloud_orders`); n != 1 {
			t.Fatalf("got %d orders, want 1", n)
		}
		if n := e.count(`SELECT count(*) FROM downstream`); n != 1 {
			t.Fatalf("got %d downstream rows, want 1", n)
		}
	})
	t.Run("ErrUnknownStation", func(t *testing.T) {
		// The store's gateway reports hot only: an order for bar is
		// refused at once, naming it, and nothing is stored.
		var gw struct {
			GatewayID string `json:"gateway_id"`
		}
		e.must("POST", "/v1/admin/stores/s1/gateways", adminToken, nil, 201, &gw)
		ingestFailedTask(t, e, "s1", gw.GatewayID)
		e.wantError("POST", "/v1/stores/s1/orders", acme, map[string]any{"order_id": "d7", "items": order["items"]}, 422, `no station "bar"`)
		if n := e.count(`SELECT count(*) FROM cloud_orders WHERE order_id = 'd7'`); n != 0 {
			t.Fatalf("got %d orders d7, want none", n)
		}
	})
}

// TestServer_CreateOrder_Concurrent posts the same order from 20 clients
// at once: exactly one 201, nineteen 200 with the same tasks, one row each.
func TestServer_CreateOrder_Concurrent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token := e.tenant("acme", "s1")
	body, _ := json.Marshal(order)
	const clients = 20
	statuses := make([]int, clients)
	bodies := make([]string, clients)
	errs := make([]error, clients)
	start := make(chan struct{})
	var wg stdsync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.server.URL()+"/v1/stores/s1/orders", strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+token)
			<-start
			resp, err := client.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			statuses[i], bodies[i], errs[i] = resp.StatusCode, string(b), err
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range clients {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		switch statuses[i] {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("client %d: got %d %s", i, statuses[i], bodies[i])
		}
		if bodies[i] != bodies[0] {
			t.Fatalf("client %d got %s, want %s", i, bodies[i], bodies[0])
		}
	}
	if created != 1 {
		t.Fatalf("got %d answers 201, want exactly 1", created)
	}
	for _, q := range []string{
		`SELECT count(*) FROM cloud_orders WHERE order_id = 'd1'`,
		`SELECT count(*) FROM print_tasks WHERE task_no = 'order_d1_station_hot'`,
		`SELECT count(*) FROM print_tasks WHERE task_no = 'order_d1_station_bar'`,
		`SELECT count(*) FROM downstream WHERE kind = 'order'`,
	} {
		if n := e.count(q); n != 1 {
			t.Errorf("%s: got %d, want 1", q, n)
		}
	}
}

func TestServer_FindTasks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	acme := e.tenant("acme", "s1")
	globex := e.tenant("globex", "g1")
	var gw struct {
		GatewayID string `json:"gateway_id"`
	}
	e.must("POST", "/v1/admin/stores/s1/gateways", adminToken, nil, 201, &gw)
	e.must("POST", "/v1/stores/s1/orders", acme, order, 201, nil) // before the gateway reports its stations (hot only)
	ingestFailedTask(t, e, "s1", gw.GatewayID)

	t.Run("One", func(t *testing.T) {
		var got cloud.Task
		e.must("GET", "/v1/stores/s1/tasks/order_f_station_hot", acme, nil, 200, &got)
		if got.Status != storeprint.StatusFailed || got.LastError != "offline" || len(got.Receipts) != 1 ||
			got.Receipts[0].State != storeprint.ReceiptPrepared {
			t.Fatalf("got %+v, want failed with its receipt", got)
		}
	})
	t.Run("ByStatus", func(t *testing.T) {
		var got []cloud.Task
		e.must("GET", "/v1/stores/s1/tasks?status=pending_delivery", acme, nil, 200, &got)
		if len(got) != 2 || got[0].Source != "cloud" {
			t.Fatalf("got %+v, want the two cloud tasks", got)
		}
		e.must("GET", "/v1/stores/s1/tasks", acme, nil, 200, &got)
		if len(got) != 3 {
			t.Fatalf("got %d tasks, want 3", len(got))
		}
	})
	t.Run("ErrBadStatus", func(t *testing.T) {
		e.wantError("GET", "/v1/stores/s1/tasks?status=lost", acme, nil, 400, `status "lost"`)
		e.wantError("GET", "/v1/stores/s1/tasks?limit=x", acme, nil, 400, "limit")
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		e.wantError("GET", "/v1/stores/s1/tasks/order_f_station_hot", globex, nil, 404, "not found")
		e.wantError("GET", "/v1/stores/s1/tasks", globex, nil, 404, "not found")
		e.wantError("GET", "/v1/stores/s1/alerts", globex, nil, 404, "not found")
		e.wantError("POST", "/v1/stores/s1/tasks/order_f_station_hot/retry", globex, nil, 404, "not found")
	})
	t.Run("ErrTenantOnAdmin", func(t *testing.T) {
		e.wantError("POST", "/v1/admin/stores", acme, map[string]string{"store_id": "s9", "tenant_id": "acme", "name": "x"}, 403, "admin token")
		e.wantError("DELETE", "/v1/admin/gateways/"+gw.GatewayID, acme, nil, 403, "admin token")
	})
	t.Run("Alerts", func(t *testing.T) {
		var got []cloud.Alert
		e.must("GET", "/v1/stores/s1/alerts", acme, nil, 200, &got)
		if len(got) != 1 || got[0].Kind != "failed" {
			t.Fatalf("got %+v, want the failed task", got)
		}
	})
	t.Run("Stores", func(t *testing.T) {
		var got []cloud.StoreStatus
		e.must("GET", "/v1/stores", globex, nil, 200, &got)
		if len(got) != 1 || got[0].ID != "g1" {
			t.Fatalf("globex got %+v, want only g1", got)
		}
		e.must("GET", "/v1/stores", acme, nil, 200, &got)
		if len(got) != 1 || got[0].Online || len(got[0].Printers) != 2 || !got[0].Printers[0].Failover || got[0].OpenAlerts != 1 {
			t.Fatalf("acme got %+v, want s1 offline with printers and an alert", got)
		}
	})
	t.Run("Commands", func(t *testing.T) {
		var c cloud.Command
		e.must("POST", "/v1/stores/s1/tasks/order_f_station_hot/retry", acme, map[string]string{"command_id": "c1", "reason": "paper"}, 202, &c)
		if c.Seq != 2 || c.Kind != storeprint.CommandRetry {
			t.Fatalf("got %+v, want the retry at seq 2 (after the order)", c)
		}
		e.must("POST", "/v1/stores/s1/tasks/order_f_station_hot/retry", acme, map[string]string{"command_id": "c1"}, 200, &c)
		e.wantError("POST", "/v1/stores/s1/tasks/order_d1_station_hot/retry", acme, nil, 409, "pending_delivery")
		e.wantError("POST", "/v1/stores/s1/printers/pass-1/failover/ack", acme, nil, 409, "not in failover")
		e.wantError("POST", "/v1/stores/s1/tasks/nope/reprint", acme, nil, 404, "task nope not found")
	})
}

// GET /v1/stores pages: limit and after, a Link to the next page while
// more follow, and never more than 1 MB of JSON in a page.
func TestServer_FindStores(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.tenant("acme", "s1", "s2", "s3", "s4", "s5")
	page := func(path string) ([]cloud.StoreStatus, string, int) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.server.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var got []cloud.StoreStatus
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, b, err)
		}
		return got, resp.Header.Get("Link"), len(b)
	}
	ids := func(stores []cloud.StoreStatus) string {
		var out []string
		for _, st := range stores {
			out = append(out, st.ID)
		}
		return strings.Join(out, " ")
	}
	t.Run("Pages", func(t *testing.T) {
		var seen []string
		next := "/v1/stores?limit=2"
		for next != "" {
			got, link, _ := page(next)
			seen = append(seen, ids(got))
			next = ""
			if link != "" {
				m := regexp.MustCompile(`^<(/v1/stores\?[^>]+)>; rel="next"$`).FindStringSubmatch(link)
				if m == nil {
					t.Fatalf("got Link %q", link)
				}
				next = m[1]
			}
		}
		if got := strings.Join(seen, "|"); got != "s1 s2|s3 s4|s5" {
			t.Fatalf("got pages %s, want s1 s2|s3 s4|s5", got)
		}
	})
	t.Run("After", func(t *testing.T) {
		got, link, _ := page("/v1/stores?after=s3")
		if ids(got) != "s4 s5" || link != "" {
			t.Fatalf("got %s (Link %q), want s4 s5 and no next page", ids(got), link)
		}
	})
	t.Run("MaxBytes", func(t *testing.T) {
		// Four stores of about 350 KB each: two fit in a page.
		for _, id := range []string{"s1", "s2", "s3", "s4"} {
			var gw struct {
				GatewayID string `json:"gateway_id"`
			}
			e.must("POST", "/v1/admin/stores/"+id+"/gateways", adminToken, nil, 201, &gw)
			var printers []*cloud.Printer
			for i := range 1500 {
				p := &cloud.Printer{ID: fmt.Sprintf("printer-%04d", i), Status: storeprint.PrinterReady}
				for j := range 10 {
					p.Stations = append(p.Stations, fmt.Sprintf("station-%04d", j))
				}
				printers = append(printers, p)
			}
			if err := postgres.NewGatewayService(e.db).UpdatePrinters(context.Background(), id, gw.GatewayID, printers); err != nil {
				t.Fatal(err)
			}
		}
		got, link, size := page("/v1/stores")
		if ids(got) != "s1 s2" || size > cloud.MaxStoresPageBytes || link != `</v1/stores?after=s2>; rel="next"` {
			t.Fatalf("got %s in %d bytes (Link %q), want s1 s2 within 1 MiB and a next page after s2", ids(got), size, link)
		}
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		e.wantError("GET", "/v1/stores?limit=1001", adminToken, nil, 400, "limit must be between 1 and 1000")
		e.wantError("GET", "/v1/stores?limit=-1", adminToken, nil, 400, "limit must be a positive number")
		e.wantError("GET", "/v1/stores?after=a%20b", adminToken, nil, 400, "after")
	})
}

// An alert acknowledged by a person: audited, shown as acknowledged, and
// in the store's alert history.
func TestServer_AcknowledgeAlert(t *testing.T) {
	t.Parallel()
	e := setup(t)
	acme := e.tenant("acme", "s1")
	globex := e.tenant("globex", "g1")
	var gw struct {
		GatewayID string `json:"gateway_id"`
	}
	e.must("POST", "/v1/admin/stores/s1/gateways", adminToken, nil, 201, &gw)
	ingestFailedTask(t, e, "s1", gw.GatewayID)
	const path = "/v1/stores/s1/alerts/order_f_station_hot:failed:5/ack"
	t.Run("OK", func(t *testing.T) {
		var got cloud.Alert
		e.must("POST", path, acme, map[string]string{"operator": "Amy", "reason": "on the phone with the store"}, 200, &got)
		if got.State != cloud.AlertAcknowledged || got.AcknowledgedBy != "Amy" || got.AcknowledgedAt == nil {
			t.Fatalf("got %+v, want acknowledged by Amy", got)
		}
		e.must("POST", path, adminToken, map[string]string{"operator": "Bo"}, 200, &got)
		if got.AcknowledgedBy != "Amy" {
			t.Fatalf("got %+v, want Amy's acknowledgement kept", got)
		}
		var events []cloud.AuditEvent
		e.must("GET", "/v1/audit?store_id=s1", acme, nil, 200, &events)
		if len(events) == 0 || events[0].Action != storeprint.ActionAlertAck || events[0].Operator != "Amy" {
			t.Fatalf("got audit %+v, want Amy's acknowledgement first", events)
		}
		var d cloud.Dashboard
		e.must("GET", "/v1/dashboard", acme, nil, 200, &d)
		if d.Summary.OpenAlerts != 0 || d.Summary.AcknowledgedAlerts != 1 || len(d.Queue) != 1 || d.Queue[0].State != cloud.AlertAcknowledged {
			t.Fatalf("got summary %+v queue %+v, want the alert acknowledged", d.Summary, d.Queue)
		}
	})
	t.Run("History", func(t *testing.T) {
		var got []cloud.Alert
		e.must("GET", "/v1/stores/s1/alerts?history=true&limit=10", acme, nil, 200, &got)
		if len(got) != 1 || got[0].State != cloud.AlertAcknowledged {
			t.Fatalf("got %+v, want the acknowledged alert", got)
		}
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		e.wantError("POST", path, acme, nil, 400, "request body is empty")
		e.wantError("POST", path, acme, map[string]string{"reason": "x"}, 400, "operator is required")
		e.wantError("POST", path, acme, map[string]string{"operator": "Amy", "extra": "x"}, 400, "unknown field")
		e.wantError("POST", "/v1/stores/s1/alerts/nope/ack", acme, map[string]string{"operator": "Amy"}, 404, `alert "nope" not found`)
		e.wantError("GET", "/v1/stores/s1/alerts?history=maybe", acme, nil, 400, "history must be true or false")
		e.wantError("GET", "/v1/stores/s1/alerts?limit=5000", acme, nil, 400, "limit must be between 1 and 1000")
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		e.wantError("POST", path, globex, map[string]string{"operator": "Eve"}, 404, "not found")
	})
}
