package main

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The aims for what a printed ticket costs the store's disk: syncs (the
// store's log, the metric storeprint_storage_sync_seconds_count) and
// bytes written (the process's write_bytes in /proc).
const (
	aimSyncsPerTicket = 2.5
	aimBytesPerTicket = 12 << 10
)

// storeRate is the paced store load of BenchmarkStoreWrites, in orders a
// second (STOREPRINT_BENCH_STORE_RATE, default 5), and storeSeconds how
// long it lasts (STOREPRINT_BENCH_STORE_SECONDS, default 20).
func storeRate() float64 {
	if r, err := strconv.ParseFloat(os.Getenv("STOREPRINT_BENCH_STORE_RATE"), 64); err == nil && r > 0 {
		return r
	}
	return 5
}

func storeSeconds() time.Duration {
	if s, err := strconv.ParseFloat(os.Getenv("STOREPRINT_BENCH_STORE_SECONDS"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 20 * time.Second
}

// BenchmarkStoreWrites measures what each printed ticket costs the store's
// disk, on the real gateway with two stations printing on simulators: the
// store's syncs and the bytes the process wrote to disk, per ticket, at a
// paced store load (storeRate two-station orders a second for
// storeSeconds) and in a burst of 1,000 orders from posClients clients,
// with the p50 and p99 of the POS answers (timed from when each paced
// order was due).
// Each phase counts from its first order until every ticket of it is
// printed and the store is quiet again (two seconds without a sync), so
// that what a ticket's transitions leave for a later sync is counted too.
// Linux only (it reads /proc). Run it with -benchtime 1x.
func BenchmarkStoreWrites(b *testing.B) {
	g := startBenchGateway(b, printersim.FaultNone)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	postLoad(b, g.Base, "warm-"+run, 0, 20)
	printedAll := 40.0
	phase := func(name string, post func(prefix string) loadResult) {
		quiet(b, g.Base, printedAll)
		t0, w0 := readStoreTimings(b, g.Base), readWriteBytes(b, g.Pid())
		r := post(name + "-" + run)
		printedAll += 2 * float64(r.orders)
		quiet(b, g.Base, printedAll)
		t := readStoreTimings(b, g.Base).since(t0)
		w := readWriteBytes(b, g.Pid()) - w0
		tickets := t.printed
		syncs, bytes := t.syncs/tickets, float64(w)/tickets
		fmt.Printf("  %-28s %5.0f tickets: %.2f store syncs a ticket (aim at most %.1f: %s), %.1f KiB written a ticket (aim at most %d: %s); %.1f updates a sync; POS answers p50 %.1f ms, p99 %.1f ms\n",
			name, tickets, syncs, aimSyncsPerTicket, metOrNot(syncs <= aimSyncsPerTicket), bytes/1024, aimBytesPerTicket>>10, metOrNot(bytes <= aimBytesPerTicket), t.synced/t.syncs, ms(r.p50), ms(r.p99))
		b.ReportMetric(syncs, name+"-syncs/ticket")
		b.ReportMetric(bytes/1024, name+"-KiB/ticket")
	}
	rate, d := storeRate(), storeSeconds()
	fmt.Printf("BenchmarkStoreWrites: the disk a printed ticket costs, two stations printing on simulators\n")
	phase(fmt.Sprintf("paced-%g-a-second-for-%s", rate, d), func(prefix string) loadResult { return postLoadAt(b, g.Base, prefix, d, rate) })
	phase("burst-1000-orders", func(prefix string) loadResult { return postLoad(b, g.Base, prefix, 0, 1000) })
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// quiet waits until the two printers confirmed printed tickets and the
// store made no sync for two seconds.
func quiet(b *testing.B, base string, printed float64) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	last := readStoreTimings(b, base)
	still := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		t := readStoreTimings(b, base)
		if t.syncs != last.syncs || t.printed < printed {
			last, still = t, time.Now()
			continue
		}
		if time.Since(still) >= 2*time.Second {
			return
		}
	}
	b.Fatalf("the gateway did not print %.0f tickets and fall quiet within 5 minutes", printed)
}
