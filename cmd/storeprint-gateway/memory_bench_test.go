package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// aimBurstRSS is the most the gateway may hold resident in a burst of
// 100,000 tickets, with the default settings.
const aimBurstRSS = 64 << 20

// BenchmarkBurstRSS measures the real gateway's resident memory around a
// burst of 100,000 tasks (50,000 orders of two tickets from posClients POS
// clients, the printers out of paper so that every ticket waits): idle
// before, its peak (VmHWM), when the last order is answered, and once the store's
// compactions are over (the lowest reading within a minute after the
// burst). Linux only (it reads /proc).
func BenchmarkBurstRSS(b *testing.B) {
	hot, cold := gatewaytest.StartSim(b, printersim.FaultPaperEnd), gatewaytest.StartSim(b, printersim.FaultPaperEnd)
	cfg := writeConfig(b, gatewaytest.Config(b, b.TempDir(),
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	g, exit := testbin.TryGateway(b, testbin.Build(b, "github.com/storeprint/storeprint/cmd/storeprint-gateway"), cfg)
	if exit != nil {
		b.Fatalf("gateway did not start: %s", exit.Log)
	}
	idle := readRSS(b, g.Pid())
	// The highest reading, sampled, for what made up the peak.
	stop, sampled := make(chan struct{}), make(chan rss)
	go func() {
		var top rss
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				sampled <- top
				return
			case <-tick.C:
				if r := readRSS(b, g.Pid()); r.total > top.total {
					top = r
				}
			}
		}
	}()
	start := time.Now()
	postLoad(b, g.Base, "burst", 0, 50000)
	took := time.Since(start)
	end := readRSS(b, g.Pid())
	settled := end
	for i := 0; i < 60; i++ {
		time.Sleep(time.Second)
		if r := readRSS(b, g.Pid()); r.total < settled.total {
			settled = r
		}
	}
	close(stop)
	top := <-sampled
	peak := readRSS(b, g.Pid()).peak
	fmt.Printf("BurstRSS: 100,000 tasks in %s (%.0f orders/s); RSS idle %d MiB, at its peak %d MiB (aim at most %d MiB: %s), at the end of the burst %d MiB (anon %d), settled %d MiB (anon %d, mapped files %d; aim below %d MiB: %s)\n",
		took.Round(time.Second), 50000/took.Seconds(), idle.total>>20, peak>>20, aimBurstRSS>>20, metOrNot(peak <= aimBurstRSS),
		end.total>>20, end.anon>>20, settled.total>>20, settled.anon>>20, settled.file>>20, aimBurstRSS>>20, metOrNot(settled.total < aimBurstRSS))
	fmt.Printf("  the highest reading every 100 ms: %d MiB (anon %d, mapped files %d)\n", top.total>>20, top.anon>>20, top.file>>20)
	b.ReportMetric(50000/took.Seconds(), "burst-orders/s")
	b.ReportMetric(float64(idle.total)/(1<<20), "idle-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(end.total)/(1<<20), "burst-end-MiB")
	b.ReportMetric(float64(settled.total)/(1<<20), "settled-MiB")
	b.ReportMetric(float64(settled.anon)/(1<<20), "settled-anon-MiB")
}
