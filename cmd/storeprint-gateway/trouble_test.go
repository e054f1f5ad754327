package main

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

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
	hot := &gatewaytest.Sim{Printer: p, Addr: inner.Addr().String()}
	cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	g := startProc(t, cfg)
	post := func(id string) {
		t.Helper()
		if code := gatewaytest.Call(t, "POST", g.base+"/v1/orders", gatewaytest.Order(id, "hot"), nil); code != 201 {
			t.Fatalf("order %s: got %d", id, code)
		}
	}
	post("first")
	gatewaytest.WaitPrinter(t, g.base, "hot-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "paper_end" })
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
	gatewaytest.WaitPrinted(t, hot, orders+1, 20*time.Second)
}
