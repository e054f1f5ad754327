package main

import (
	"bytes"
	"context"
	"encoding/json"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// createBareStore creates a tenant and a store without a gateway.
func createBareStore(t *testing.T, base, tenant, id string) {
	t.Helper()
	do(t, adminToken, "POST", base+"/v1/admin/tenants", map[string]string{"tenant_id": tenant, "name": tenant}, nil)
	if code := do(t, adminToken, "POST", base+"/v1/admin/stores", map[string]string{"store_id": id, "tenant_id": tenant, "name": id}, nil); code != 201 {
		t.Fatalf("create store: %d", code)
	}
}

type cloudprntPrinter struct {
	PrinterID string   `json:"printer_id"`
	MAC       string   `json:"mac"`
	Stations  []string `json:"stations"`
	Token     string   `json:"token"`
}

func createCloudPRNT(t *testing.T, base, storeID string, body map[string]any) cloudprntPrinter {
	t.Helper()
	var p cloudprntPrinter
	if code := do(t, adminToken, "POST", base+"/v1/admin/stores/"+storeID+"/cloudprnt-printers", body, &p); code != 201 {
		t.Fatalf("create CloudPRNT printer: %d", code)
	}
	return p
}

func postCloudOrder(t *testing.T, base, storeID, id string, want int) {
	t.Helper()
	body := map[string]any{"order_id": id, "table": "外卖", "items": []map[string]any{
		{"name": "宫保鸡丁", "qty": 2, "station": "hot", "note": "不要花生"}, {"name": "珍珠奶茶", "qty": 1, "station": "bar"}}}
	if code := do(t, adminToken, "POST", base+"/v1/stores/"+storeID+"/orders", body, nil); code != want {
		t.Fatalf("cloud order %s: got %d, want %d", id, code, want)
	}
}

// A small store without a gateway box: its cloud orders print on Star
// printers polling the cloud's CloudPRNT endpoint, with the same tasks,
// receipts and dedup as a gateway's, through two cloud nodes alike.
func TestChain_CloudPRNT(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node1 := startCloud(t, dbURL, "127.0.0.1:0")
	node2 := startCloud(t, dbURL, "127.0.0.1:0")
	createBareStore(t, node1.base, "t1", "kiosk-1")
	hot := createCloudPRNT(t, node1.base, "kiosk-1", map[string]any{"printer_id": "hot-1", "mac": "00:11:62:AA:00:01", "stations": []string{"hot"}, "reason": "new kiosk"})
	bar := createCloudPRNT(t, node1.base, "kiosk-1", map[string]any{"printer_id": "bar-1", "mac": "00:11:62:aa:00:02", "stations": []string{"bar"},
		"confirm_timeout": "1s", "reason": "new kiosk"})
	if !strings.HasPrefix(hot.Token, cloud.CloudPRNTTokenPrefix) || hot.MAC != "00:11:62:aa:00:01" {
		t.Fatalf("got %+v, want a CloudPRNT token and the MAC as printers send it", hot)
	}
	// Each printer polls another node: nothing lives in one node's memory.
	hotSim := printertest.StartCloudPRNT(t, node1.base+"/v1/cloudprnt/kiosk-1", printersim.Options{},
		printersim.CloudPRNTOptions{MAC: hot.MAC, User: "hot-1", Password: hot.Token, PollInterval: 50 * time.Millisecond})
	barSim := printertest.StartCloudPRNT(t, node2.base+"/v1/cloudprnt/kiosk-1", printersim.Options{Fault: printersim.FaultLostAck},
		printersim.CloudPRNTOptions{MAC: bar.MAC, User: "bar-1", Password: bar.Token, PollInterval: 50 * time.Millisecond})

	postCloudOrder(t, node2.base, "kiosk-1", "web-1", 201)
	postCloudOrder(t, node1.base, "kiosk-1", "web-1", 200) // the same order again: answered, not printed again
	waitCloudStatus(t, node1.base, "kiosk-1", "order_web-1_station_hot", "done", 20*time.Second)
	var task cloud.Task
	do(t, adminToken, "GET", node2.base+"/v1/stores/kiosk-1/tasks/order_web-1_station_hot", nil, &task)
	var states []string
	for _, r := range task.Receipts {
		states = append(states, string(r.State))
	}
	if task.Attempt != 1 || task.PrinterID != "hot-1" || strings.Join(states, ",") != "prepared,submitted,printed" {
		t.Fatalf("got %+v with receipts %q, want attempt 1 on hot-1, prepared, submitted, printed", task, states)
	}
	got := hotSim.Printed()
	if len(got) != 1 || got[0].TaskNo != "order_web-1_station_hot" || !strings.Contains(got[0].Text, "2 x 宫保鸡丁") {
		t.Fatalf("got on paper %+v, want the hot ticket once", got)
	}

	// The bar printer prints but never confirms: after its confirm
	// timeout the ticket needs a person, and is not printed again.
	waitCloudStatus(t, node2.base, "kiosk-1", "order_web-1_station_bar", "attention_required", 20*time.Second)
	if n := len(barSim.Printed()); n != 1 {
		t.Fatalf("got %d bar tickets, want 1", n)
	}
	var alerts []cloud.Alert
	do(t, adminToken, "GET", node1.base+"/v1/stores/kiosk-1/alerts", nil, &alerts)
	if len(alerts) != 1 || alerts[0].TaskNo != "order_web-1_station_bar" {
		t.Fatalf("got alerts %+v, want one for the unconfirmed bar ticket", alerts)
	}

	// A second order prints once more on the hot printer.
	postCloudOrder(t, node1.base, "kiosk-1", "web-2", 201)
	waitCloudStatus(t, node1.base, "kiosk-1", "order_web-2_station_hot", "done", 20*time.Second)
	if n := len(hotSim.Printed()); n != 2 {
		t.Fatalf("got %d hot tickets, want 2", n)
	}
}

func TestCloudPRNT_Errors(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	logs := &testlog.Buffer{}
	node := startCloud(t, dbURL, "127.0.0.1:0", func(m *Main) { m.Stderr = logs })
	createBareStore(t, node.base, "t2", "kiosk-2")
	p := createCloudPRNT(t, node.base, "kiosk-2", map[string]any{"printer_id": "p-1", "mac": "00:11:62:bb:00:01", "reason": "test"})
	poll := func(mac, user, pass string) int {
		t.Helper()
		b, _ := json.Marshal(protocol.Poll{PrinterMAC: mac, StatusCode: "200 OK"})
		req, _ := nethttp.NewRequestWithContext(context.Background(), "POST", node.base+"/v1/cloudprnt/kiosk-2", bytes.NewReader(b))
		if pass != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		name, mac, pass string
		want            int
	}{
		{"OK", p.MAC, p.Token, 200},
		{"ErrNoToken", p.MAC, "", 401},
		{"ErrWrongToken", p.MAC, cloud.NewCloudPRNTToken("kiosk-2"), 401},
		{"ErrUnknownMAC", "00:11:62:bb:00:99", p.Token, 401}, // as a wrong token: it tells no MAC address
	} {
		if got := poll(tt.mac, "p-1", tt.pass); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
	// Printer-token failures are limited and logged, without the token.
	wrong := cloud.NewCloudPRNTToken("kiosk-2")
	limited := false
	for range 2 * protocol.FailBurst {
		switch got := poll(p.MAC, "p-1", wrong); got {
		case 429:
			limited = true
		case 401:
		default:
			t.Fatalf("a wrong token: got %d, want 401 or 429", got)
		}
	}
	if !limited {
		t.Fatalf("%d wrong tokens: got no 429", 2*protocol.FailBurst)
	}
	log := logs.String()
	if strings.Count(log, "cloudprnt login refused") < 2*protocol.FailBurst+2 || strings.Contains(log, wrong) || strings.Contains(log, p.Token) {
		t.Fatalf("want every refused login logged without its token, got:\n%s", log)
	}
	for _, tt := range []struct {
		name string
		body map[string]any
		want int
	}{
		{"ErrMAC", map[string]any{"printer_id": "p-2", "mac": "nope", "reason": "x"}, 400},
		{"ErrDuplicateMAC", map[string]any{"printer_id": "p-3", "mac": p.MAC, "reason": "x"}, 409},
		{"ErrConfirmTimeout", map[string]any{"printer_id": "p-4", "mac": "00:11:62:bb:00:04", "confirm_timeout": "forever", "reason": "x"}, 400},
	} {
		if code := do(t, adminToken, "POST", node.base+"/v1/admin/stores/kiosk-2/cloudprnt-printers", tt.body, nil); code != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, code, tt.want)
		}
	}
	// A store with a gateway prints its orders there.
	st := createStore(t, node.base, "t2", "shop-2")
	if code := do(t, adminToken, "POST", node.base+"/v1/admin/stores/"+st.id+"/cloudprnt-printers",
		map[string]any{"printer_id": "p-1", "mac": "00:11:62:bb:00:05", "reason": "x"}, nil); code != 409 {
		t.Errorf("store with a gateway: got %d, want 409", code)
	}
}
