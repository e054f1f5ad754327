package main

import (
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// /metrics speaks Prometheus and carries the queue, the tasks by status,
// time to paper and retries; it needs a token like every API.
func TestMain_Metrics(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	_, base := runGateway(t, cfg)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("m-1", "hot"), nil)
	gatewaytest.WaitStatus(t, base, "order_m-1_station_hot", "done", 10*time.Second)

	resp, err := gatewaytest.Client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("metrics without a token: got %d, want 401", resp.StatusCode)
	}
	text := metricsText(t, base)
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
	if strings.Contains(text, gatewaytest.Token) {
		t.Error("metrics show the API token")
	}
	// The order and its printing were updates, each made durable by a
	// sync: the store's timings count them. (A quiet store's witness is
	// a sync of its own, which makes no update durable: syncs may
	// outnumber the updates they made durable.)
	syncs := metricValue(t, text, "storeprint_storage_sync_seconds_count")
	synced := metricValue(t, text, "storeprint_storage_synced_updates_total")
	updates := metricValue(t, text, "storeprint_storage_update_seconds_count")
	if syncs < 1 || synced < 1 || updates < synced || updates < 5 {
		t.Errorf("storage timings: %v syncs made %v updates durable, %v updates answered; want at least the order's and its print's 5", syncs, synced, updates)
	}
}

// startProcs is this process's GOMAXPROCS before any test ran a gateway
// in it (which doubles it): what Go gives a program on this machine.
var startProcs = runtime.GOMAXPROCS(0)

// The real program runs with ProcsPerCPU Ps a CPU and the collector at
// gateway.GCPercent, unless GOMAXPROCS and GOGC say otherwise; /metrics
// shows what it runs with.
func TestMain_RuntimeSettings(t *testing.T) {
	t.Parallel()
	wantProcs, wantGC := ProcsPerCPU*startProcs, gateway.GCPercent
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		wantProcs, _ = strconv.Atoi(v)
	}
	if v, ok := os.LookupEnv("GOGC"); ok {
		wantGC, _ = strconv.Atoi(v)
	}
	for _, tc := range []struct {
		name          string
		env           []string
		procs, gcPcnt int
	}{
		{"Defaults", nil, wantProcs, wantGC},
		{"Environment", []string{"GOMAXPROCS=3", "GOGC=80"}, 3, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: "127.0.0.1:9"}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
			g := startProc(t, cfg, tc.env...)
			text := metricsText(t, g.base)
			for name, want := range map[string]int{"go_sched_gomaxprocs_threads": tc.procs, "go_gc_gogc_percent": tc.gcPcnt} {
				if got := metricValue(t, text, name); got != float64(want) {
					t.Errorf("%s: got %v, want %d", name, got, want)
				}
			}
		})
	}
}

// metricsText reads /metrics with the API token.
func metricsText(t testing.TB, base string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+gatewaytest.Token)
	resp, err := gatewaytest.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// metricValue returns the value of an unlabelled metric in text.
func metricValue(t testing.TB, text, name string) float64 {
	t.Helper()
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("metrics lack %s", name)
	return 0
}

// /metrics carries what an operations team alerts on: the version, the
// data disk's free space and reserve, where each station prints, and,
// with a [cloud], the link's state and backlog, the oldest event waiting
// aged by the gateway's clock. Without a [cloud] there is no link and no
// link metrics (a store that never links must not page as "link down").
func TestMain_MetricsOperations(t *testing.T) {
	t.Parallel()
	t.Run("NoCloud", func(t *testing.T) {
		t.Parallel()
		hot := gatewaytest.StartSim(t, printersim.FaultNone)
		cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "hot-1"}}))
		_, base := runGateway(t, cfg)
		text := metricsText(t, base)
		for _, want := range []string{
			`storeprint_build_info{goversion="` + runtime.Version() + `",version="`,
			`storeprint_station_printer{printer="hot-1",station="cold"} 1`,
			`storeprint_station_printer{printer="hot-1",station="hot"} 1`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		if got := metricValue(t, text, "storeprint_storage_reserve_bytes"); got != float64(gateway.DefaultReserve) {
			t.Errorf("storeprint_storage_reserve_bytes: got %v, want the default %d", got, gateway.DefaultReserve)
		}
		if free := metricValue(t, text, "storeprint_storage_free_bytes"); free <= 0 {
			t.Errorf("storeprint_storage_free_bytes: got %v, want the disk's free bytes", free)
		}
		if strings.Contains(text, "storeprint_sync_") {
			t.Errorf("a gateway without a cloud serves link metrics:\n%s", text)
		}
	})
	t.Run("LinkDown", func(t *testing.T) {
		t.Parallel()
		top := "[cloud]\nurl = \"ws://127.0.0.1:1/v1/sync\"\ninsecure = true\ngateway_id = \"gw-m\"\ntoken = \"" + cloudToken + "\"\n"
		cfg := writeConfig(t, gatewaytest.ConfigTop(t, t.TempDir(), top, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: "127.0.0.1:9"}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
		clock := &gatewaytest.MovingClock{}
		_, base := runGateway(t, cfg, func(m *Main) { m.Clock = clock })
		text := metricsText(t, base)
		if up, pending, oldest := metricValue(t, text, "storeprint_sync_link_up"), metricValue(t, text, "storeprint_sync_pending_events"),
			metricValue(t, text, "storeprint_sync_oldest_pending_seconds"); up != 0 || pending != 0 || oldest != 0 {
			t.Fatalf("before any order: link up %v, %v pending, oldest %vs; want 0, 0, 0", up, pending, oldest)
		}
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("m-1", "hot"), nil)
		clock.Add(5 * time.Minute)
		text = metricsText(t, base)
		if pending := metricValue(t, text, "storeprint_sync_pending_events"); pending < 1 {
			t.Errorf("storeprint_sync_pending_events: got %v, want the order's events", pending)
		}
		// The event was written at most as long ago as this test ran.
		if oldest := metricValue(t, text, "storeprint_sync_oldest_pending_seconds"); oldest < 300 || oldest > 3600 {
			t.Errorf("storeprint_sync_oldest_pending_seconds: got %v, want 300 and the test's time", oldest)
		}
	})
}

// storeprint_station_printer says where a station's tickets go now: its
// printer, then the backup once the printer failed over.
func TestMain_MetricsStationFailover(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultDown), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{
		{ID: "hot-1", Addr: hot.Addr, Backup: "pass-1", Extra: "failover_after = \"1s\"\n"},
		{ID: "pass-1", Addr: pass.Addr},
	}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}}))
	_, base := runGateway(t, cfg)
	if text := metricsText(t, base); !strings.Contains(text, `storeprint_station_printer{printer="hot-1",station="hot"} 1`) {
		t.Fatalf("before failover: no hot station on hot-1:\n%s", text)
	}
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("sf-1", "hot"), nil)
	gatewaytest.WaitStatus(t, base, "order_sf-1_station_hot", "done", 10*time.Second)
	text := metricsText(t, base)
	if !strings.Contains(text, `storeprint_station_printer{printer="pass-1",station="hot"} 1`) ||
		strings.Contains(text, `storeprint_station_printer{printer="hot-1",station="hot"}`) {
		t.Fatalf("failed over: want the hot station on pass-1 only:\n%s", text)
	}
}
