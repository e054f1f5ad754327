package main

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A flaky printer is one problem, not a ticket each: one printer cuts
// every ticket off, the other never confirms. Each goes into trouble
// after at most two flagged tickets; every other ticket of the shift waits
// for it, unflagged, and orders that come in meanwhile wait too: the
// printer is tried again once per cool-down, not sent every ticket, and
// nothing reaches paper twice.
func TestMain_PrinterTroubleFlagsOnce(t *testing.T) {
	t.Parallel()
	hot, pass := startSim(t, printersim.FaultDrop), startSim(t, printersim.FaultLostAck)
	cfg := writeConfig(t, t.TempDir(), []printerConf{{id: "hot-1", addr: hot.addr}, {id: "pass-1", addr: pass.addr}},
		[]stationConf{{name: "hot", printer: "hot-1"}, {name: "pass", printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	post := func(from, to int) {
		for i := from; i < to; i++ {
			if code := call(t, "POST", base+"/v1/orders", order(fmt.Sprintf("f%02d", i), "hot", "pass"), nil); code != 201 {
				t.Fatalf("order %d: got %d", i, code)
			}
		}
	}
	post(0, 12)
	for _, id := range []string{"hot-1", "pass-1"} {
		waitPrinter(t, base, id, 30*time.Second, func(p printerJSON) bool { return p.InTrouble })
	}
	check := func(orders int) {
		t.Helper()
		var all []taskJSON
		call(t, "GET", base+"/v1/tasks?limit=1000", nil, &all)
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
	var all []taskJSON
	call(t, "GET", base+"/v1/tasks?limit=1000", nil, &all)
	for _, tj := range all {
		before[tj.PrinterID] += tj.Attempt
	}

	// Orders keep coming while the printers are in trouble: they wait,
	// through the printers' next status checks.
	posted := time.Now()
	post(12, 16)
	waitUntil(t, base, 40*time.Second, func() (bool, string) {
		var ps []struct {
			ID        string     `json:"id"`
			CheckedAt *time.Time `json:"checked_at"`
		}
		call(t, "GET", base+"/v1/printers", nil, &ps)
		checked := 0
		for _, p := range ps {
			if p.CheckedAt != nil && p.CheckedAt.After(posted.Add(time.Second)) {
				checked++
			}
		}
		return checked == 2, fmt.Sprintf("printers checked since the new orders: %d of 2", checked)
	})
	check(16)
	call(t, "GET", base+"/v1/tasks?limit=1000", nil, &all)
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

// countingListener counts the connections a printer simulator accepts:
// the gateway opens one for each status read and each ticket.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// A busy counter posting to a printer out of paper, on the real binary:
// the gateway reads the printer about once a second, not once an order,
// and every ticket prints once the paper is back.
func TestMain_PaperEndNotPolledPerOrder(t *testing.T) {
	t.Parallel()
	p, err := printersim.New(printersim.Options{Fault: printersim.FaultPaperEnd})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: inner}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	hot := &sim{Printer: p, addr: inner.Addr().String()}
	cfg := writeConfig(t, t.TempDir(), []printerConf{{id: "hot-1", addr: hot.addr}}, []stationConf{{name: "hot", printer: "hot-1"}})
	g := startProc(t, cfg)
	post := func(id string) {
		t.Helper()
		if code := call(t, "POST", g.base+"/v1/orders", order(id, "hot"), nil); code != 201 {
			t.Fatalf("order %s: got %d", id, code)
		}
	}
	post("first")
	waitPrinter(t, g.base, "hot-1", 10*time.Second, func(p printerJSON) bool { return p.Status == "paper_end" })
	const orders = 40
	before, start := ln.n.Load(), time.Now()
	for i := range orders {
		post(fmt.Sprintf("busy-%02d", i))
	}
	// One read a second at most, and one that may have been under way.
	reads, allowed := ln.n.Load()-before, 2+int64(time.Since(start)/time.Second)
	if reads > allowed {
		t.Fatalf("%d orders to a printer out of paper: it was connected to %d times, want at most %d", orders, reads, allowed)
	}
	hot.SetFault(printersim.FaultNone)
	waitPrinted(t, hot, orders+1, 20*time.Second)
}
