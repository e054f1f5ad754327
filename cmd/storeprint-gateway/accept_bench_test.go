package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The load every accept benchmark puts on an endpoint: posClients POS
// terminals, each on its own kept-alive connection, posting two-station
// orders one after another for benchSeconds (STOREPRINT_BENCH_SECONDS,
// default 5).
const posClients = 16

func benchSeconds() time.Duration {
	if s, err := strconv.ParseFloat(os.Getenv("STOREPRINT_BENCH_SECONDS"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 5 * time.Second
}

// benchRounds is how many times a benchmark measures, to show the spread
// (STOREPRINT_BENCH_ROUNDS, default 2).
func benchRounds() int {
	if n, err := strconv.Atoi(os.Getenv("STOREPRINT_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// loadResult is what one run of the load saw.
type loadResult struct {
	orders   int
	elapsed  time.Duration
	p50, p99 time.Duration
	cpu      time.Duration // the endpoint's process, where measured
	// clients is the CPU of this process meanwhile: the POS clients,
	// and the printer simulators while the gateway prints on them.
	clients time.Duration
	// lag99 is, for a paced load, the p99 of how late the clients sent
	// a request after it was due: the load generator's own lateness
	// (timer wake-ups, or a client still waiting on its last answer),
	// counted in p50 and p99.
	lag99 time.Duration
	spans [][]span // each client's requests, in the order it sent them
	ids   []string // what the requests answered were about (the order ids)
}

// endpointResult is a load's result on the endpoint named.
type endpointResult struct {
	name string
	r    loadResult
}

// span is one request: when it was sent (from the start of the load) and
// how long its answer took.
type span struct{ at, took time.Duration }

// stalls finds the moments every client was waiting on an answer that had
// already taken longer than over: a pause of the endpoint rather than
// requests queueing at random. It returns how many such stalls there
// were, their time together, the longest, and the share of the requests
// slower than over that were waiting during one.
func (r loadResult) stalls(over time.Duration) (n int, total, longest time.Duration, share float64) {
	type edge struct {
		at time.Duration
		d  int
	}
	var edges []edge
	for _, c := range r.spans {
		for _, s := range c {
			if s.took > over {
				edges = append(edges, edge{s.at + over, +1}, edge{s.at + s.took, -1})
			}
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].d < edges[j].d // an answer before the next wait
	})
	clients := len(r.spans)
	var stalled [][2]time.Duration
	waiting := 0
	for _, e := range edges {
		waiting += e.d
		switch {
		case e.d > 0 && waiting == clients:
			stalled = append(stalled, [2]time.Duration{e.at, 0})
		case e.d < 0 && waiting == clients-1:
			stalled[len(stalled)-1][1] = e.at
			d := e.at - stalled[len(stalled)-1][0]
			total += d
			longest = max(longest, d)
		}
	}
	slow, caught := 0, 0
	for _, c := range r.spans {
		for _, s := range c {
			if s.took <= over {
				continue
			}
			slow++
			from, to := s.at+over, s.at+s.took
			i := sort.Search(len(stalled), func(i int) bool { return stalled[i][1] > from })
			if i < len(stalled) && stalled[i][0] < to {
				caught++
			}
		}
	}
	if slow > 0 {
		share = float64(caught) / float64(slow)
	}
	return len(stalled), total, longest, share
}

func TestAimBudget(t *testing.T) {
	// 2 cores at 0.8 of 10,000 orders/s give an order 250 µs; the clients
	// take 80 of them.
	if got := aimBudget(2, 10000, 80); got != 170 {
		t.Errorf("aimBudget(2, 10000, 80) = %v, want 170", got)
	}
	if got := aimBudget(4, 8000, 0); got != 625 {
		t.Errorf("aimBudget(4, 8000, 0) = %v, want 625", got)
	}
}

func TestLoadResult_Stalls(t *testing.T) {
	const m = time.Millisecond
	for _, tc := range []struct {
		name    string
		spans   [][]span
		n       int
		total   time.Duration
		longest time.Duration
		share   float64
	}{
		{name: "none slow", spans: [][]span{{{0, m}}, {{0, m}}}},
		{
			// a waits past 1 ms over [1,5], b over [1,3]: one stall of 2 ms.
			name:  "one",
			spans: [][]span{{{0, 5 * m}}, {{0, 3 * m}, {3 * m, m}}},
			n:     1, total: 2 * m, longest: 2 * m, share: 1,
		},
		{
			// then a over [6,9] and b over [5,10]: a second stall, of 3 ms.
			name:  "two",
			spans: [][]span{{{0, 5 * m}, {5 * m, 4 * m}}, {{0, 3 * m}, {3 * m, m}, {4 * m, 6 * m}}},
			n:     2, total: 5 * m, longest: 3 * m, share: 1,
		},
		{
			// b's wait ends as a's begins: no stall; of the two slow
			// answers none came during one.
			name:  "apart",
			spans: [][]span{{{2 * m, 3 * m}}, {{0, 3 * m}}},
			share: 0,
		},
		{
			// all three over [2,4]; c's second slow answer, over [6,8], is alone.
			name:  "partly",
			spans: [][]span{{{0, 4 * m}}, {{0, 5 * m}}, {{1 * m, 3 * m}, {5 * m, 3 * m}}},
			n:     1, total: 2 * m, longest: 2 * m, share: 0.75,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, total, longest, share := loadResult{spans: tc.spans}.stalls(m)
			if n != tc.n || total != tc.total || longest != tc.longest || share != tc.share {
				t.Errorf("stalls = %d, %v, %v, %.2f; want %d, %v, %v, %.2f", n, total, longest, share, tc.n, tc.total, tc.longest, tc.share)
			}
		})
	}
}

// measureCPU runs the load and adds the CPU the process pid used
// meanwhile (the gateway's includes printing the tickets it accepts), and
// this process's own.
func measureCPU(b *testing.B, pid int, load func() loadResult) loadResult {
	before, self := readCPU(b, pid), readCPU(b, os.Getpid())
	r := load()
	r.cpu = readCPU(b, pid) - before
	r.clients = readCPU(b, os.Getpid()) - self
	return r
}

// aimBudget is the most CPU, in µs an order, that the gateway can spend
// and still reach the throughput aim (0.8 of the ceiling's rate) on cores
// cores, when its clients (and printer simulators) take clients µs an
// order of the same cores: what the cores give an order at that rate,
// less the clients'. It is a bound, not a promise: where the ceiling is
// held back by its syncs rather than by CPU, the gateway's syncs hold it
// back too.
func aimBudget(cores int, ceilingRate, clients float64) float64 {
	return float64(cores)*1e6/(0.8*ceilingRate) - clients
}

// perOrder is d spread over the result's orders, in µs.
func (r loadResult) perOrder(d time.Duration) float64 {
	return float64(d.Microseconds()) / float64(r.orders)
}

func (r loadResult) rate() float64 { return float64(r.orders) / r.elapsed.Seconds() }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// orderBody is a two-station order (hot and cold) as a POS sends it.
func orderBody(id string) []byte {
	return fmt.Appendf(nil, `{"order_id":%q,"table":"A1","items":[{"name":"宫保鸡丁 0","qty":1,"station":"hot","note":"少辣"},{"name":"宫保鸡丁 1","qty":2,"station":"cold","note":"少辣"}]}`, id)
}

// postLoad posts orders to base+"/v1/orders" from posClients clients until
// d has passed (d > 0) or limit orders were sent (limit > 0), whichever
// comes first; one of them must be set. Each order id is prefix-n. Every
// answer must be a 201.
func postLoad(b *testing.B, base, prefix string, d time.Duration, limit int) loadResult {
	b.Helper()
	return postLoadEvery(b, base, prefix, d, limit, 0)
}

// postLoadAt posts orders as postLoad does for d, paced at rate orders a
// second (see load).
func postLoadAt(b *testing.B, base, prefix string, d time.Duration, rate float64) loadResult {
	b.Helper()
	return postLoadEvery(b, base, prefix, d, 0, time.Duration(float64(time.Second)/rate))
}

func postLoadEvery(b *testing.B, base, prefix string, d time.Duration, limit int, every time.Duration) loadResult {
	b.Helper()
	return load(b, d, limit, http.StatusCreated, every, func(n int) (string, string, []byte) {
		id := fmt.Sprintf("%s-%d", prefix, n)
		return id, base + "/v1/orders", orderBody(id)
	})
}

// voidLoad voids the orders ids (at least one) from posClients clients, as
// postLoad posts them; every answer must be a 200.
func voidLoad(b *testing.B, base string, ids []string) loadResult {
	b.Helper()
	body := []byte(`{"operator":"bench","reason":"the queue emptied"}`)
	return load(b, 0, len(ids), http.StatusOK, 0, func(n int) (string, string, []byte) {
		id := ids[n-1]
		return id, base + "/v1/orders/" + id + "/void", body
	})
}

// load sends POST requests from posClients clients, each on its own
// kept-alive connection, until d has passed (d > 0) or limit were sent
// (limit > 0), whichever comes first; one of them must be set. req gives
// the n-th request (from 1): what it is about (the order id), its URL and
// its JSON body. Every answer must be want.
//
// With every 0 each client sends its next request as soon as its last is
// answered. With every > 0 the load is paced: the n-th request is due
// every*(n-1) after the start, a client waits for it to be due, and its
// time is counted from when it was due, not from when a client was free
// to send it, so that an endpoint that falls behind shows as slow answers
// rather than as fewer requests.
func load(b *testing.B, d time.Duration, limit, want int, every time.Duration, req func(n int) (id, url string, body []byte)) loadResult {
	b.Helper()
	if d <= 0 && limit <= 0 {
		b.Fatal("load: neither a time nor a number of requests")
	}
	tr := &http.Transport{MaxIdleConnsPerHost: posClients, MaxConnsPerHost: posClients, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	var next atomic.Int64
	var failed atomic.Bool
	spans := make([][]span, posClients)
	ids := make([][]string, posClients)
	lags := make([][]time.Duration, posClients)
	done := make(chan struct{})
	start := time.Now()
	deadline := start.Add(d)
	for i := range posClients {
		go func() {
			defer func() { done <- struct{}{} }()
			mine := make([]span, 0, 1<<14)
			defer func() { spans[i] = mine }()
			for !failed.Load() {
				n := int(next.Add(1))
				// A paced load sends every request due within d, however
				// late: an endpoint that falls behind takes longer.
				due := time.Duration(n-1) * every
				if (limit > 0 && n > limit) || (d > 0 && every == 0 && time.Now().After(deadline)) || (d > 0 && every > 0 && due >= d) {
					return
				}
				id, url, body := req(n)
				r, err := http.NewRequest("POST", url, bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					failed.Store(true)
					return
				}
				r.Header.Set("Authorization", "Bearer "+gatewaytest.Token)
				r.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				if every > 0 {
					t0 = start.Add(due)
					time.Sleep(time.Until(t0))
					lags[i] = append(lags[i], time.Since(t0))
				}
				resp, err := c.Do(r)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				mine = append(mine, span{t0.Sub(start), time.Since(t0)})
				if err != nil || resp.StatusCode != want {
					code := 0
					if resp != nil {
						code = resp.StatusCode
					}
					b.Errorf("%s %s: %d %v", url, id, code, err)
					failed.Store(true)
					return
				}
				ids[i] = append(ids[i], id)
			}
		}()
	}
	for range posClients {
		<-done
	}
	elapsed := time.Since(start)
	var all []time.Duration
	for _, c := range spans {
		for _, s := range c {
			all = append(all, s.took)
		}
	}
	if failed.Load() {
		b.FailNow()
	}
	lag := slices.Concat(lags...)
	return loadResult{orders: len(all), elapsed: elapsed, p50: percentile(all, 0.50), p99: percentile(all, 0.99), lag99: percentile(lag, 0.99), spans: spans, ids: slices.Concat(ids...)}
}

// startCeiling runs the ceiling program (internal/ceiling) with its file
// in a new temporary directory and returns its base URL and process id.
func startCeiling(b *testing.B, sync bool) (string, int) {
	b.Helper()
	bin := testbin.Build(b, "github.com/storeprint/storeprint/internal/ceiling")
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--file", filepath.Join(b.TempDir(), "orders.jsonl"), "--sync="+strconv.FormatBool(sync))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		b.Fatalf("ceiling did not start: %q %v", line, err)
	}
	return "http://" + addr, cmd.Process.Pid
}

// storeTimings are the sums of a gateway's storage timings (see
// gateway.StoreObserver), as its /metrics shows them.
type storeTimings struct {
	syncs, syncSeconds, synced, updates, updateSeconds float64
	// The syncs that took at most 2.5 ms, and at most 10 ms (the
	// histogram's buckets).
	syncsIn2_5ms, syncsIn10ms float64
	printed                   float64 // tickets the two printers confirmed
}

func readStoreTimings(b *testing.B, base string) storeTimings {
	text := metricsText(b, base)
	return storeTimings{
		syncs:         metricValue(b, text, "storeprint_storage_sync_seconds_count"),
		syncSeconds:   metricValue(b, text, "storeprint_storage_sync_seconds_sum"),
		synced:        metricValue(b, text, "storeprint_storage_synced_updates_total"),
		updates:       metricValue(b, text, "storeprint_storage_update_seconds_count"),
		updateSeconds: metricValue(b, text, "storeprint_storage_update_seconds_sum"),
		syncsIn2_5ms:  metricValue(b, text, `storeprint_storage_sync_seconds_bucket{le="0.0025"}`),
		syncsIn10ms:   metricValue(b, text, `storeprint_storage_sync_seconds_bucket{le="0.01"}`),
		printed:       printedOn(b, text, "hot-1") + printedOn(b, text, "cold-1"),
	}
}

// printedOn is how many tickets the printer confirmed, as text (the
// gateway's /metrics) says: none before its first.
func printedOn(b *testing.B, text, printer string) float64 {
	name := `storeprint_time_to_paper_seconds_count{printer="` + printer + `"}`
	if !strings.Contains(text, name+" ") {
		return 0
	}
	return metricValue(b, text, name)
}

// since is what the timings gained after old.
func (s storeTimings) since(old storeTimings) storeTimings {
	return storeTimings{s.syncs - old.syncs, s.syncSeconds - old.syncSeconds, s.synced - old.synced, s.updates - old.updates, s.updateSeconds - old.updateSeconds,
		s.syncsIn2_5ms - old.syncsIn2_5ms, s.syncsIn10ms - old.syncsIn10ms, s.printed - old.printed}
}

// printStalls prints what stalls each endpoint had (see
// loadResult.stalls): moments every client waited past over at once.
func printStalls(over time.Duration, results ...endpointResult) {
	fmt.Printf("  stalls, every client waiting past the ceiling's p99 (%.2f ms) at once:\n", ms(over))
	for _, r := range results {
		n, total, longest, share := r.r.stalls(over)
		fmt.Printf("    %-42s %4d (%.1f/s), %6.0f ms in all, the longest %5.1f ms; %3.0f%% of its answers slower than that came during one\n",
			r.name, n, float64(n)/r.r.elapsed.Seconds(), ms(total), ms(longest), 100*share)
	}
}

// startBenchGateway runs the real gateway program with two printers (hot
// and cold stations) on simulators with the fault.
func startBenchGateway(b *testing.B, fault printersim.Fault) *testbin.Gateway {
	b.Helper()
	hot, cold := gatewaytest.StartSim(b, fault), gatewaytest.StartSim(b, fault)
	cfg := writeConfig(b, gatewaytest.Config(b, b.TempDir(),
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	return testbin.StartGateway(b, testbin.Build(b, "github.com/storeprint/storeprint/cmd/storeprint-gateway"), cfg)
}

// BenchmarkAcceptSideBySide puts the same load on three endpoints in
// turn, each its own process on this machine and disk: the durable
// ceiling (decode, append to one file, fdatasync shared by concurrent
// requests), the same without the sync (HTTP alone), and the real gateway
// (POST /v1/orders, a 201 once the tasks are synced in Badger) printing
// on two simulators meanwhile. Each round (benchRounds) measures all three
// and prints orders/s, p50 and p99, the CPU an order cost the endpoint and
// this process (the POS clients, and the simulators while the gateway
// prints on them), the gateway's ratios to the ceiling, the stalls of
// the ceiling and the gateway (loadResult.stalls, past the ceiling's
// p99), and the gateway store's sync times; the metrics are those of the
// last round. Run it with -benchtime 1x.
func BenchmarkAcceptSideBySide(b *testing.B) {
	d := benchSeconds()
	ceiling, cPid := startCeiling(b, true)
	httpOnly, hPid := startCeiling(b, false)
	g := startBenchGateway(b, printersim.FaultNone)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	warm := func(base, name string) { postLoad(b, base, "warm-"+name+"-"+run, 0, 2*posClients) }
	warm(ceiling, "c")
	warm(httpOnly, "h")
	warm(g.Base, "g")
	b.ResetTimer()
	var c, h, gw loadResult
	rounds := b.N * benchRounds()
	for round := 1; round <= rounds; round++ {
		prefix := fmt.Sprintf("r%d-%s", round, run)
		c = measureCPU(b, cPid, func() loadResult { return postLoad(b, ceiling, prefix, d, 0) })
		h = measureCPU(b, hPid, func() loadResult { return postLoad(b, httpOnly, prefix, d, 0) })
		before := readStoreTimings(b, g.Base)
		gw = measureCPU(b, g.Pid(), func() loadResult { return postLoad(b, g.Base, prefix, d, 0) })
		st := readStoreTimings(b, g.Base).since(before)
		fmt.Printf("\naccept, round %d of %d: %d POS clients, two-station orders, %s each\n", round, rounds, posClients, d)
		fmt.Printf("  %-44s %9s %8s %8s %12s %14s\n", "endpoint", "orders/s", "p50 ms", "p99 ms", "CPU µs/order", "clients µs/ord")
		for _, r := range []endpointResult{{"durable ceiling (append + shared fdatasync)", c}, {"HTTP only (no sync)", h}, {"storeprint-gateway, printing on two sims", gw}} {
			fmt.Printf("  %-44s %9.0f %8.2f %8.2f %12.0f %14.0f\n", r.name, r.r.rate(), ms(r.r.p50), ms(r.r.p99), r.r.perOrder(r.r.cpu), r.r.perOrder(r.r.clients))
		}
		fmt.Printf("  the gateway printed %.0f tickets/s meanwhile (it accepted %.0f)\n", st.printed/gw.elapsed.Seconds(), 2*gw.rate())
		fmt.Printf("  gateway/ceiling: throughput %.2f (a figure, no aim: a store takes a few orders a minute, see BenchmarkStoreWrites), p99 %.2fx (aim <= 1.25x); gateway/HTTP only: throughput %.2f\n",
			gw.rate()/c.rate(), ms(gw.p99)/ms(c.p99), gw.rate()/h.rate())
		fmt.Printf("  at 0.80 x %.0f orders/s on %d cores (the clients and simulators taking %.0f µs an order) the cores would leave the gateway at most %.0f µs of CPU an order; it spent %.0f\n",
			c.rate(), runtime.NumCPU(), gw.perOrder(gw.clients), aimBudget(runtime.NumCPU(), c.rate(), gw.perOrder(gw.clients)), gw.perOrder(gw.cpu))
		printStalls(c.p99, endpointResult{"durable ceiling", c}, endpointResult{"storeprint-gateway", gw})
		fmt.Printf("  the gateway's store (its /metrics): %.0f syncs/s, %.1f updates each, a sync %.2f ms mean, %.1f%% over 2.5 ms, %.2f%% over 10 ms; an update answered %.2f ms after it was asked for, mean\n",
			st.syncs/gw.elapsed.Seconds(), st.synced/st.syncs, 1000*st.syncSeconds/st.syncs,
			100*(st.syncs-st.syncsIn2_5ms)/st.syncs, 100*(st.syncs-st.syncsIn10ms)/st.syncs, 1000*st.updateSeconds/st.updates)
	}
	b.StopTimer()
	b.ReportMetric(gw.rate(), "gateway-orders/s")
	b.ReportMetric(ms(gw.p99), "gateway-p99-ms")
	b.ReportMetric(c.rate(), "ceiling-orders/s")
	b.ReportMetric(ms(c.p99), "ceiling-p99-ms")
	b.ReportMetric(h.rate(), "http-only-orders/s")
	b.ReportMetric(gw.rate()/c.rate(), "throughput-ratio")
	b.ReportMetric(ms(gw.p99)/ms(c.p99), "p99-ratio")
	b.ReportMetric(0, "ns/op")
}

// paceFractions are the shares of the ceiling's most orders/s at which
// BenchmarkAcceptAtRates offers both endpoints the same paced load.
var paceFractions = []float64{0.1, 0.25, 0.5, 0.8}

// BenchmarkAcceptAtRates compares the durable ceiling and the real
// gateway (printing on two simulators) at the same offered loads, below
// saturation: it measures the ceiling's most orders/s as
// BenchmarkAcceptSideBySide does, then offers each endpoint in turn a
// paced load (see load) at each of paceFractions of that, and prints the
// orders/s each achieved with its p50 and p99 counted from when each
// order was due, the p99 of how late the clients sent them (the load
// generator's share of those times), and the gateway's p99 over the
// ceiling's. It says how the gateway answers at loads below its
// saturation, where the side-by-side's closed loop measures it
// saturated. Run it with -benchtime 1x; STOREPRINT_BENCH_SECONDS sets
// each load's length.
func BenchmarkAcceptAtRates(b *testing.B) {
	d := benchSeconds()
	ceiling, _ := startCeiling(b, true)
	g := startBenchGateway(b, printersim.FaultNone)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	postLoad(b, ceiling, "warm-c-"+run, 0, 2*posClients)
	postLoad(b, g.Base, "warm-g-"+run, 0, 2*posClients)
	b.ResetTimer()
	most := postLoad(b, ceiling, "most-"+run, d, 0).rate()
	fmt.Printf("\naccept at paced loads: the ceiling's most is %.0f orders/s (16 POS clients, as fast as answered, %s); each load below for %s, times in ms counted from when each order was due (sent late: the p99 of how late the POS clients sent it)\n", most, d, d)
	fmt.Printf("  %-8s %9s | %-38s | %-38s | %s\n", "share", "offered", "ceiling: orders/s, p50, p99, sent late", "gateway: orders/s, p50, p99, sent late", "gateway p99 / ceiling's")
	for i, f := range paceFractions {
		rate := f * most
		prefix := fmt.Sprintf("p%d-%s", i, run)
		c := postLoadAt(b, ceiling, prefix, d, rate)
		gw := postLoadAt(b, g.Base, prefix, d, rate)
		fmt.Printf("  %-8.2f %9.0f | %9.0f %8.2f %9.2f %9.2f | %9.0f %8.2f %9.2f %9.2f | %.2fx\n",
			f, rate, c.rate(), ms(c.p50), ms(c.p99), ms(c.lag99), gw.rate(), ms(gw.p50), ms(gw.p99), ms(gw.lag99), ms(gw.p99)/ms(c.p99))
		b.ReportMetric(ms(gw.p99)/ms(c.p99), fmt.Sprintf("p99-ratio-at-%.2f", f))
	}
	b.StopTimer()
	b.ReportMetric(most, "ceiling-orders/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkAcceptBacklog measures how the number of tickets waiting
// changes the gateway's accept rate (both printers out of paper, so
// nothing prints). It accepts from a new store (for benchSeconds, or until
// a tenth of the tickets below wait, whichever comes first), fills the
// queue to 100,000 waiting tickets with the same load and measures again.
// Then it voids every order, which empties the queue but leaves the store
// as large (larger: the voids are stored too), and measures once more. The
// aim compares the full queue with the emptied one: the same store, with
// and without 100,000 tickets waiting. The new store's rate shows what
// the store's growth costs besides. Each round (benchRounds) starts a new
// gateway. Run it with -benchtime 1x.
func BenchmarkAcceptBacklog(b *testing.B) {
	const waiting = 100000 // tickets: two per order
	const nearlyEmpty = waiting / 10
	d := benchSeconds()
	rounds := b.N * benchRounds()
	for round := 1; round <= rounds; round++ {
		b.StopTimer()
		g := startBenchGateway(b, printersim.FaultPaperEnd)
		run := strconv.FormatInt(time.Now().UnixNano(), 36)
		warm := postLoad(b, g.Base, "warm-"+run, 0, 2*posClients)
		b.StartTimer()
		fresh := postLoad(b, g.Base, "fresh-"+run, d, nearlyEmpty/2)
		sent := len(warm.ids) + len(fresh.ids)
		fill := postLoad(b, g.Base, "fill-"+run, 0, waiting/2-sent)
		full := postLoad(b, g.Base, "full-"+run, d, 0)
		b.StopTimer()
		voids := voidLoad(b, g.Base, slices.Concat(warm.ids, fresh.ids, fill.ids, full.ids))
		b.StartTimer()
		emptied := postLoad(b, g.Base, "emptied-"+run, d, 0)
		b.StopTimer()
		fmt.Printf("\naccept with the queue growing, round %d of %d (printers out of paper, %d POS clients)\n", round, rounds, posClients)
		fmt.Printf("  %-52s %9s %8s %8s\n", "queue", "orders/s", "p50 ms", "p99 ms")
		for _, r := range []endpointResult{
			{fmt.Sprintf("a new store, to %d waiting tickets", 2*sent), fresh},
			{fmt.Sprintf("filling to %d waiting tickets", waiting), fill},
			{fmt.Sprintf("%d+ waiting tickets", 2*(sent+len(fill.ids))), full},
			{fmt.Sprintf("(voiding those %d orders)", voids.orders), voids},
			{"the same store, emptied: none waiting", emptied},
		} {
			fmt.Printf("  %-52s %9.0f %8.2f %8.2f\n", r.name, r.r.rate(), ms(r.r.p50), ms(r.r.p99))
		}
		fmt.Printf("  full/emptied: throughput %.2f (aim: no slowdown, about 1), p99 %.2fx; full/new store: throughput %.2f, p99 %.2fx\n",
			full.rate()/emptied.rate(), ms(full.p99)/ms(emptied.p99), full.rate()/fresh.rate(), ms(full.p99)/ms(fresh.p99))
		b.ReportMetric(fresh.rate(), "new-store-orders/s")
		b.ReportMetric(full.rate(), "100k-waiting-orders/s")
		b.ReportMetric(emptied.rate(), "emptied-orders/s")
		b.ReportMetric(full.rate()/emptied.rate(), "full/emptied")
		b.ReportMetric(0, "ns/op")
	}
}

// BenchmarkIdleCPU measures the CPU an idle gateway uses (two printers
// ready, nothing to print, no cloud) over STOREPRINT_BENCH_IDLE_SECONDS
// (default 10), as a percentage of one core. Linux only (it reads /proc).
func BenchmarkIdleCPU(b *testing.B) {
	d := 10 * time.Second
	if s, err := strconv.ParseFloat(os.Getenv("STOREPRINT_BENCH_IDLE_SECONDS"), 64); err == nil && s > 0 {
		d = time.Duration(s * float64(time.Second))
	}
	for range b.N {
		b.StopTimer()
		g := startBenchGateway(b, printersim.FaultNone)
		postLoad(b, g.Base, "idle-"+strconv.FormatInt(time.Now().UnixNano(), 36), 0, 4)
		time.Sleep(3 * time.Second) // the start and the four orders' printing are over
		b.StartTimer()
		before, t0 := readCPU(b, g.Pid()), time.Now()
		time.Sleep(d)
		used, el := readCPU(b, g.Pid())-before, time.Since(t0)
		pct := 100 * used.Seconds() / el.Seconds()
		fmt.Printf("\nidle gateway: %.2f%% of a core over %s (aim < 0.5%%)\n", pct, el.Round(time.Second))
		b.ReportMetric(pct, "cpu-%")
		b.ReportMetric(0, "ns/op")
	}
}
