package main

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// BenchmarkAcceptOrders measures POS-to-201 with durability on (fsync before
// the answer): orders/s and latency percentiles, from concurrent POS
// clients over real sockets, while the printers print. The gateway runs in
// this process, so that go test -cpuprofile profiles its accept path (see
// BenchmarkAcceptSideBySide for the figures that compare).
func BenchmarkAcceptOrders(b *testing.B) {
	hot, cold := gatewaytest.StartSim(b, printersim.FaultNone), gatewaytest.StartSim(b, printersim.FaultNone)
	cfg := writeConfig(b, gatewaytest.Config(b, b.TempDir(),
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	_, base := runGateway(b, cfg)
	b.ResetTimer()
	r := postLoad(b, base, fmt.Sprintf("b%d", time.Now().UnixNano()), 0, b.N)
	b.StopTimer()
	b.ReportMetric(r.rate(), "orders/s")
	b.ReportMetric(ms(r.p50), "p50-ms")
	b.ReportMetric(ms(r.p99), "p99-ms")
}

// BenchmarkTimeToPaper measures POS-to-confirmation: from posting an order
// to the printer's confirmation on the simulator, one order at a time.
func BenchmarkTimeToPaper(b *testing.B) {
	hot := gatewaytest.StartSim(b, printersim.FaultNone)
	cfg := writeConfig(b, gatewaytest.Config(b, b.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	_, base := runGateway(b, cfg)
	lat := make([]time.Duration, b.N)
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if code, err := postQuiet(base, gatewaytest.Order(fmt.Sprintf("p%s-%d", run, i), "hot")); err != nil || code != 201 {
			b.Fatalf("order %d: %d %v", i, code, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := hot.WaitPrinted(ctx, i+1); err != nil {
			b.Fatal(err)
		}
		cancel()
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
}
