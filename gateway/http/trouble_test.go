package http_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A flaky printer is one problem, not a ticket each: one printer cuts
// every ticket off, the other never confirms. Each goes into trouble
// after at most two flagged tickets; every other ticket of the shift waits
// for it, unflagged, and orders that come in meanwhile wait too: the
// printer is tried again once per cool-down, not sent every ticket, and
// nothing reaches paper twice.
func TestServer_PrinterTroubleFlagsOnce(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultDrop), gatewaytest.StartSim(t, printersim.FaultLostAck)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "pass-1", Addr: pass.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	post := func(from, to int) {
		for i := from; i < to; i++ {
			if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(fmt.Sprintf("f%02d", i), "hot", "pass"), nil); code != 201 {
				t.Fatalf("order %d: got %d", i, code)
			}
		}
	}
	post(0, 12)
	for _, id := range []string{"hot-1", "pass-1"} {
		gatewaytest.WaitPrinter(t, base, id, 30*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.InTrouble })
	}
	check := func(orders int) {
		t.Helper()
		var all []gatewaytest.TaskJSON
		gatewaytest.Call(t, "GET", base+"/v1/tasks?limit=1000", nil, &all)
		flagged, attempts := map[string]int{}, map[string]int{}
		for _, tj := range all {
			if tj.Status == "attention_required" {
				flagged[tj.PrinterID]++
			}
			attempts[tj.PrinterID] += tj.Attempt
		}
		if len(all) != 2*orders {
			t.Fatalf("got %d tasks, want %d", len(all), 2*orders)
		}
		for _, id := range []string{"hot-1", "pass-1"} {
			if flagged[id] == 0 || flagged[id] > 2 {
				t.Errorf("printer %s in trouble: %d tickets flagged, want 1 or 2 for the one problem", id, flagged[id])
			}
		}
		t.Logf("%d orders: flagged %v, attempts %v", orders, flagged, attempts)
	}
	check(12)
	before := map[string]int{}
	var all []gatewaytest.TaskJSON
	gatewaytest.Call(t, "GET", base+"/v1/tasks?limit=1000", nil, &all)
	for _, tj := range all {
		before[tj.PrinterID] += tj.Attempt
	}

	// Orders keep coming while the printers are in trouble: they wait,
	// through the printers' next status checks.
	posted := time.Now()
	post(12, 16)
	gatewaytest.WaitUntil(t, base, 40*time.Second, func() (bool, string) {
		var ps []struct {
			ID        string     `json:"id"`
			CheckedAt *time.Time `json:"checked_at"`
		}
		gatewaytest.Call(t, "GET", base+"/v1/printers", nil, &ps)
		checked := 0
		for _, p := range ps {
			if p.CheckedAt != nil && p.CheckedAt.After(posted.Add(time.Second)) {
				checked++
			}
		}
		return checked == 2, fmt.Sprintf("printers checked since the new orders: %d of 2", checked)
	})
	check(16)
	gatewaytest.Call(t, "GET", base+"/v1/tasks?limit=1000", nil, &all)
	after := map[string]int{}
	for _, tj := range all {
		after[tj.PrinterID] += tj.Attempt
	}
	for _, id := range []string{"hot-1", "pass-1"} {
		if after[id] >= 8 {
			t.Errorf("printer %s in trouble: %d attempts for 16 tickets (%d before the last 4 orders): want it tried once a cool-down, not sent every ticket", id, after[id], before[id])
		}
	}
	seen := map[string]int{}
	for _, p := range pass.Printed() {
		if seen[p.TaskNo]++; seen[p.TaskNo] > 1 {
			t.Errorf("%s is on paper %d times", p.TaskNo, seen[p.TaskNo])
		}
	}
	if got := len(hot.Printed()); got != 0 {
		t.Errorf("a printer that cuts every ticket off printed %d", got)
	}
}
