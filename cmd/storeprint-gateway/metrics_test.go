package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// /metrics speaks Prometheus and carries the queue, the tasks by status,
// time to paper and retries; it needs a token like every API.
func TestMain_Metrics(t *testing.T) {
	t.Parallel()
	hot := startSim(t, printersim.FaultNone)
	cfg := writeConfig(t, t.TempDir(), []printerConf{{id: "hot-1", addr: hot.addr}}, []stationConf{{name: "hot", printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	call(t, "POST", base+"/v1/orders", order("m-1", "hot"), nil)
	waitStatus(t, base, "order_m-1_station_hot", "done", 10*time.Second)

	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("metrics without a token: got %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	for _, want := range []string{
		`storeprint_queue_depth{printer="hot-1"} 0`,
		`storeprint_tasks{status="done"} 1`,
		`storeprint_time_to_paper_seconds_count{printer="hot-1"} 1`,
		`storeprint_print_attempts_total{outcome="printed",printer="hot-1"} 1`,
		`storeprint_printer_status{printer="hot-1",status="ready"} 1`,
		`storeprint_storage_ok 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, token) {
		t.Error("metrics show the API token")
	}
}
