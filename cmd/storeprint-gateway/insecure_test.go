package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A ws:// cloud URL is refused unless insecure = true, and then warned
// about at start.
func TestMain_InsecureCloud(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	printers, stations := []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}
	cloud := "\n[cloud]\nurl = \"ws://127.0.0.1:1/v1/sync\"\ngateway_id = \"gw-1\"\ntoken = \"t\"\n"
	// The [cloud] table goes last: after it, every key would be its own.
	withCloud := func(extra string) string {
		path := writeConfig(t, gatewaytest.Config(t, t.TempDir(), printers, stations))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, []byte(cloud+extra)...), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	m := NewMain()
	m.Stderr = &testlog.Buffer{}
	if err := m.ParseFlags([]string{"run", "--config", withCloud("")}); err != nil {
		t.Fatal(err)
	}
	if err := m.run(t.Context()); err == nil || !strings.Contains(err.Error(), "cloud.url") || !strings.Contains(err.Error(), "insecure = true") {
		t.Fatalf("ws:// without insecure: got %v, want an error naming cloud.url and insecure", err)
	}
	logs := &testlog.Buffer{}
	_, base := runGateway(t, withCloud("insecure = true\n"), func(m *Main) { m.Stderr = logs })
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("ins-1", "hot"), nil)
	gatewaytest.WaitStatus(t, base, "order_ins-1_station_hot", "done", 10*time.Second) // printing goes on without the cloud
	if !strings.Contains(logs.String(), "not encrypted") {
		t.Fatalf("want a warning about the clear-text link, got:\n%s", logs.String())
	}
}
