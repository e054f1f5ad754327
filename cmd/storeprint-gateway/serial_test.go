package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// writeSerialConfig writes a configuration with one serial printer, id,
// on the device path, for the station bar.
func writeSerialConfig(t testing.TB, dataDir, id, path string) string {
	t.Helper()
	printer := fmt.Sprintf("id = %q\ndriver = \"serial\"\naddress = %q\nbaud = 19200\ndata_bits = 8\nparity = \"none\"\nstop_bits = \"1\"\nflow = \"none\"", id, path)
	return writeConfig(t, gatewaytest.ConfigOf(t, dataDir, []string{printer}, []string{fmt.Sprintf("name = \"bar\"\nprinter = %q", id)}, ""))
}

// A serial printer unplugged and plugged back in (its USB-serial device
// gone, then a new one at the same path): the gateway sees it offline,
// prints again as soon as it is back, without a restart, and every ticket
// comes out exactly once.
func TestMain_SerialReplug(t *testing.T) {
	t.Parallel()
	sim, path := printertest.StartSerial(t, printersim.Options{})
	_, base := runGateway(t, writeSerialConfig(t, t.TempDir(), "bar-1", path))

	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("sr-1", "bar"), nil)
	gatewaytest.WaitStatus(t, base, "order_sr-1_station_bar", "done", 10*time.Second)

	sim.Unplug()
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("sr-2", "bar"), nil)
	gatewaytest.WaitPrinter(t, base, "bar-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "offline" })
	if tj := gatewaytest.GetTask(t, base, "order_sr-2_station_bar"); tj.Status != "queued" && tj.Status != "retry_wait" {
		t.Fatalf("task sr-2: got %s (last error %q) while unplugged, want it waiting", tj.Status, tj.LastError)
	}

	sim.Plug()
	gatewaytest.WaitStatus(t, base, "order_sr-2_station_bar", "done", 15*time.Second)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("sr-3", "bar"), nil)
	gatewaytest.WaitStatus(t, base, "order_sr-3_station_bar", "done", 10*time.Second)

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
