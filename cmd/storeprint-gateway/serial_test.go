package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// writeSerialConfig writes a configuration with one serial printer, id,
// on the device path, for the station bar.
func writeSerialConfig(t testing.TB, dataDir, id, path string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = \"store-test\"\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n", dataDir, token)
	fmt.Fprintf(&b, "\n[[printers]]\nid = %q\ndriver = \"serial\"\naddress = %q\nbaud = 19200\ndata_bits = 8\nparity = \"none\"\nstop_bits = \"1\"\nflow = \"none\"\n", id, path)
	b.WriteString("connect_timeout = \"1s\"\nconfirm_timeout = \"2s\"\n")
	fmt.Fprintf(&b, "\n[[stations]]\nname = \"bar\"\nprinter = %q\n", id)
	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A serial printer unplugged and plugged back in (its USB-serial device
// gone, then a new one at the same path): the gateway sees it offline,
// prints again as soon as it is back, without a restart, and every ticket
// comes out exactly once.
func TestMain_SerialReplug(t *testing.T) {
	t.Parallel()
	sim, path := printertest.StartSerial(t, printersim.Options{})
	_, base := runGateway(t, writeSerialConfig(t, t.TempDir(), "bar-1", path))

	call(t, "POST", base+"/v1/orders", order("sr-1", "bar"), nil)
	waitStatus(t, base, "order_sr-1_station_bar", "done", 10*time.Second)

	sim.Unplug()
	call(t, "POST", base+"/v1/orders", order("sr-2", "bar"), nil)
	waitPrinter(t, base, "bar-1", 10*time.Second, func(p printerJSON) bool { return p.Status == "offline" })
	if tj := getTask(t, base, "order_sr-2_station_bar"); tj.Status != "queued" && tj.Status != "retry_wait" {
		t.Fatalf("task sr-2: got %s (last error %q) while unplugged, want it waiting", tj.Status, tj.LastError)
	}

	sim.Plug()
	waitStatus(t, base, "order_sr-2_station_bar", "done", 15*time.Second)
	call(t, "POST", base+"/v1/orders", order("sr-3", "bar"), nil)
	waitStatus(t, base, "order_sr-3_station_bar", "done", 10*time.Second)

	got := sim.Printed()
	want := []string{"order_sr-1_station_bar", "order_sr-2_station_bar", "order_sr-3_station_bar"}
	if len(got) != len(want) {
		t.Fatalf("got %d tickets on paper (%+v), want %d: nothing lost, nothing twice", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].TaskNo != w {
			t.Errorf("ticket %d: got %s, want %s", i, got[i].TaskNo, w)
		}
	}
}
