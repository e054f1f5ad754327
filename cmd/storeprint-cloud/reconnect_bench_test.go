package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	nethttp "net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/sync"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// The chain reconnecting at once: many gateways, each back from an outage
// with a backlog in its outbox, link to two cloud nodes on one PostgreSQL
// at the same moment, each through the real sync client. The same rows go
// into PostgreSQL raw (INSERT ... SELECT FROM unnest ... ON CONFLICT DO
// NOTHING in batches of the link's size, on one connection and on as many
// as the two nodes ingest on at once) for the ceiling. Sizes from
// STOREPRINT_BENCH_GATEWAYS (1000) and STOREPRINT_BENCH_BACKLOG (2000
// events a gateway). The nodes run as storeprint-cloud processes, so that
// each one's memory is its own; STOREPRINT_BENCH_INPROCESS=1 runs them in
// this process instead, for a CPU profile of both ends. make bench runs
// it with STOREPRINT_BENCH_BACKLOG=500, a quarter of the rows; the full
// size and a profile:
//
//	go test -run '^$' -bench BenchmarkChainReconnect -benchtime 1x -timeout 60m ./cmd/storeprint-cloud/
//	STOREPRINT_BENCH_INPROCESS=1 go test -run '^$' -bench BenchmarkChainReconnect -benchtime 1x -cpuprofile cpu.out ./cmd/storeprint-cloud/
//
// With STOREPRINT_BENCH_STATEMENTS=1, on a server that loads
// pg_stat_statements (STOREPRINT_TEST_DATABASE_URL, see pgtest), it
// prints the statements of the raw inserts and of the link side by side.

// rawParallel is the raw ceiling's connections: two nodes, each ingesting
// on at most syncserver's default IngestSlots (4) at once.
const rawParallel = 8

// backlogEvents is a gateway's outbox after an outage: tasks that were
// accepted, printed and confirmed while the cloud was away, six events a
// task as the gateway writes them (queued, printing, the receipt's three
// steps, done); the last task may be cut short. The events are the same
// for every store (task_nos are per store).
func backlogEvents(n int) []sync.Event {
	base := time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
	out := make([]sync.Event, 0, n)
	for i := 0; len(out) < n; i++ {
		no := fmt.Sprintf("order_b%07d_station_hot", i)
		created := base.Add(time.Duration(i) * time.Second)
		task := func(v uint64, st storeprint.Status, at time.Time) {
			t := sync.TaskEvent{TaskNo: no, Version: v, OrderID: fmt.Sprintf("b%07d", i), Station: "hot", PrinterID: "hot-1",
				Status: st, CreatedAt: created, UpdatedAt: at}
			if st != storeprint.StatusQueued {
				t.Attempt = 1
			}
			if st == storeprint.StatusDone {
				t.PrintedAt = &at
			}
			b, _ := json.Marshal(t)
			out = append(out, sync.Event{Seq: uint64(len(out) + 1), Kind: sync.KindTask, TaskNo: no, At: at, Data: b})
		}
		receipt := func(st storeprint.ReceiptState, at time.Time) {
			b, _ := json.Marshal(sync.ReceiptEvent{TaskNo: no, Attempt: 1, State: st, PrinterID: "hot-1",
				PayloadSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", ProcessID: fmt.Sprintf("%04d", i%10000), At: at})
			out = append(out, sync.Event{Seq: uint64(len(out) + 1), Kind: sync.KindReceipt, TaskNo: no, At: at, Data: b})
		}
		steps := []func(){
			func() { task(1, storeprint.StatusQueued, created) },
			func() { task(2, storeprint.StatusPrinting, created.Add(10*time.Millisecond)) },
			func() { receipt(storeprint.ReceiptPrepared, created.Add(11*time.Millisecond)) },
			func() { receipt(storeprint.ReceiptSubmitted, created.Add(20*time.Millisecond)) },
			func() { receipt(storeprint.ReceiptPrinted, created.Add(900*time.Millisecond)) },
			func() { task(3, storeprint.StatusDone, created.Add(901*time.Millisecond)) },
		}
		for _, s := range steps {
			if len(out) < n {
				s()
			}
		}
	}
	return out
}

// backlogTasks is the number of tasks backlogEvents(n) names.
func backlogTasks(n int) int { return (n + 5) / 6 }

var _ synclink.Gateway = (*backlogGateway)(nil)

// backlogGateway is a store's gateway as the link sees it, in memory: an
// outbox holding a backlog, one printer, nothing else to do. It counts
// the sessions the link opened (its Hello calls) and notes when the cloud
// has acknowledged the whole backlog.
type backlogGateway struct {
	events      []sync.Event // shared by every gateway: read only
	incarnation string
	link        *synclink.Client
	start       time.Time
	sessions    atomic.Int32

	once    stdsync.Once
	cleared chan struct{} // closed once the link's cursor reached the last event
	took    time.Duration // from start to cleared

	mu   stdsync.Mutex
	down uint64
}

func newBacklogGateway(events []sync.Event, incarnation string) *backlogGateway {
	return &backlogGateway{events: events, incarnation: incarnation, cleared: make(chan struct{})}
}

// check notes the moment the link's cursor reaches the backlog's end. The
// link asks the outbox for more events after each acknowledgement it
// takes, so checking there sees the last one at once.
func (g *backlogGateway) check() {
	if g.link.State().Cursor >= uint64(len(g.events)) {
		g.once.Do(func() {
			g.took = time.Since(g.start)
			close(g.cleared)
		})
	}
}

func (g *backlogGateway) OutboxEvents(ctx context.Context, after uint64, limit int) ([]sync.Event, error) {
	g.check()
	from := min(int(after), len(g.events))
	return slices.Clone(g.events[from:min(from+limit, len(g.events))]), nil
}

func (g *backlogGateway) OutboxAcked(ctx context.Context, cursor uint64) error {
	g.check()
	return nil
}

func (g *backlogGateway) Hello(ctx context.Context) (sync.Hello, error) {
	g.sessions.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	return sync.Hello{Incarnation: g.incarnation, LastSeq: uint64(len(g.events)), DownCursor: g.down}, nil
}

func (g *backlogGateway) ApplyDown(ctx context.Context, cmds []sync.Command, through uint64) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range cmds {
		g.down = max(g.down, c.Seq)
	}
	g.down = max(g.down, through)
	return g.down, nil
}

func (g *backlogGateway) ApplyStates(ctx context.Context, states []sync.TaskEvent) ([]sync.TaskEvent, error) {
	return states, nil
}

func (g *backlogGateway) Learned() {}

func (g *backlogGateway) Snapshot(ctx context.Context, after string, limit int) ([]sync.TaskEvent, []sync.ReceiptEvent, error) {
	return nil, nil, nil
}

func (g *backlogGateway) PrinterStatuses(ctx context.Context) ([]sync.PrinterStatus, error) {
	return []sync.PrinterStatus{{ID: "hot-1", Status: storeprint.PrinterReady, Stations: []string{"hot"}}}, nil
}

func (g *backlogGateway) Subscribe() (<-chan struct{}, func()) { return nil, func() {} }

// benchNode is a cloud node: a storeprint-cloud process, or (in process)
// the program on this process's Main.
type benchNode struct {
	base string
	pid  int // 0 in process
	peak func() int64
}

// cpu is the node process's CPU time so far (user and system).
func (n *benchNode) cpu() time.Duration {
	if n.pid == 0 {
		return 0
	}
	d, _ := testbin.ProcessCPU(n.pid)
	return d
}

// startBenchNodes starts n cloud nodes on the database.
func startBenchNodes(b *testing.B, dbURL string, n int) []*benchNode {
	b.Helper()
	var nodes []*benchNode
	inProcess := os.Getenv("STOREPRINT_BENCH_INPROCESS") == "1"
	for i := 0; i < n; i++ {
		if inProcess {
			c := startCloud(b, dbURL, "127.0.0.1:0", func(m *Main) { m.Stderr = io.Discard })
			nodes = append(nodes, &benchNode{base: c.base})
			continue
		}
		nodes = append(nodes, startCloudProcess(b, dbURL))
	}
	return nodes
}

var cloudListenLine = "storeprint-cloud listening on "

// startCloudProcess runs storeprint-cloud on dbURL; its log goes to a file
// shown if the benchmark fails.
func startCloudProcess(b *testing.B, dbURL string) *benchNode {
	b.Helper()
	bin := testbin.Build(b, "github.com/storeprint/storeprint/cmd/storeprint-cloud")
	logPath := filepath.Join(b.TempDir(), "cloud.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--listen", "127.0.0.1:0", "--admin-token", adminToken, "--database-url", dbURL)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		logFile.Close()
		if b.Failed() {
			log, _ := os.ReadFile(logPath)
			b.Logf("cloud log (last lines):\n%s", lastLines(string(log), 40))
		}
	})
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), cloudListenLine); ok {
				base <- s
			}
		}
	}()
	n := &benchNode{pid: cmd.Process.Pid}
	n.peak = func() int64 { return procStatusKB(n.pid, "VmHWM") * 1024 }
	select {
	case n.base = <-base:
	case <-time.After(60 * time.Second):
		log, _ := os.ReadFile(logPath)
		b.Fatalf("storeprint-cloud did not start:\n%s", log)
	}
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// procStatusKB reads a kB field of /proc/<pid>/status (VmRSS, VmHWM).
func procStatusKB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// createStores makes n stores of one tenant, each with a gateway, through
// the admin API, a few at a time.
func createStores(b *testing.B, base, prefix string, n int) []store {
	b.Helper()
	do(b, adminToken, "POST", base+"/v1/admin/tenants", map[string]string{"tenant_id": "chain", "name": "chain"}, nil)
	stores := make([]store, n)
	errs := make(chan error, n)
	var next atomic.Int64
	var wg stdsync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				st, err := newStore(base, "chain", fmt.Sprintf("%s-%04d", prefix, i))
				if err != nil {
					errs <- err
					return
				}
				stores[i] = st
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return stores
}

// newStore is createStore for other goroutines than the benchmark's.
func newStore(base, tenant, id string) (store, error) {
	var gw struct {
		GatewayID string `json:"gateway_id"`
		Token     string `json:"token"`
	}
	for _, r := range []struct {
		url  string
		body map[string]string
		out  any
	}{
		{base + "/v1/admin/stores", map[string]string{"store_id": id, "tenant_id": tenant, "name": id}, nil},
		{base + "/v1/admin/stores/" + id + "/gateways", map[string]string{"reason": "bench"}, &gw},
	} {
		body, _ := json.Marshal(r.body)
		req, err := nethttp.NewRequest("POST", r.url, bytes.NewReader(body))
		if err != nil {
			return store{}, err
		}
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := httpc.Do(req)
		if err != nil {
			return store{}, err
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			return store{}, fmt.Errorf("POST %s: %d %s", r.url, resp.StatusCode, data)
		}
		if r.out != nil {
			if err := json.Unmarshal(data, r.out); err != nil {
				return store{}, err
			}
		}
	}
	return store{id: id, gatewayID: gw.GatewayID, token: gw.Token}, nil
}

// replayResult is one run of gateways replaying their backlogs at once.
type replayResult struct {
	total      time.Duration   // the last gateway cleared
	perGateway []time.Duration // each gateway cleared, from the start
	sessions   int             // links opened, over all gateways
	breaks     map[string]int  // why links broke, as the gateways logged it (once until the reason changes)
}

// breakCounter is a log handler that counts the gateways' "sync link
// down" lines by their error.
type breakCounter struct {
	mu     stdsync.Mutex
	counts map[string]int
}

func (h *breakCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *breakCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *breakCounter) WithGroup(string) slog.Handler            { return h }
func (h *breakCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "sync link down" {
		return nil
	}
	msg := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			msg = a.Value.String()
			// Ports and addresses differ from link to link.
			if i := strings.LastIndex(msg, ": "); i >= 0 && len(msg) > 80 {
				msg = msg[i+2:]
			}
		}
		return true
	})
	h.mu.Lock()
	h.counts[msg]++
	h.mu.Unlock()
	return nil
}

func (r replayResult) quantile(q float64) time.Duration {
	s := slices.Clone(r.perGateway)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// replayAll links every store's gateway to the nodes (round robin) at the
// same moment and waits until each one's backlog is acknowledged.
func replayAll(b *testing.B, nodes []*benchNode, stores []store, events []sync.Event) replayResult {
	b.Helper()
	breaks := &breakCounter{counts: map[string]int{}}
	quiet := slog.New(breaks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*synclink.Client, len(stores))
	gws := make([]*backlogGateway, len(stores))
	for i, st := range stores {
		gws[i] = newBacklogGateway(events, fmt.Sprintf("inc-%04d", i))
		clients[i] = &synclink.Client{URL: "ws://" + strings.TrimPrefix(nodes[i%len(nodes)].base, "http://") + sync.Path,
			GatewayID: st.gatewayID, Token: st.token, StoreID: st.id, Gateway: gws[i], Logger: quiet}
		gws[i].link = clients[i]
	}
	res := replayResult{perGateway: make([]time.Duration, len(stores))}
	var wg stdsync.WaitGroup
	start := time.Now()
	for i, c := range clients {
		gws[i].start = start
		wg.Add(1)
		go func() { defer wg.Done(); c.Run(ctx) }()
	}
	timeout := time.NewTimer(15 * time.Minute)
	defer timeout.Stop()
	for i, g := range gws {
		select {
		case <-g.cleared:
			res.perGateway[i] = g.took
		case <-timeout.C:
			left := 0
			for _, g := range gws {
				select {
				case <-g.cleared:
				default:
					left++
				}
			}
			b.Fatalf("%d of %d gateways not cleared after %s", left, len(gws), time.Since(start))
		}
	}
	res.total = slices.Max(res.perGateway)
	breaks.mu.Lock()
	res.breaks = maps.Clone(breaks.counts)
	breaks.mu.Unlock()
	cancel()
	wg.Wait()
	for _, g := range gws {
		res.sessions += int(g.sessions.Load())
	}
	return res
}

// rawInsert inserts every store's events into table through the same
// statement ingest stores events with, batch rows at a time, on conns
// connections at once, and returns how long it took and the CPU time
// PostgreSQL's server processes took meanwhile.
func rawInsert(b *testing.B, dbURL, table string, stores []store, events []sync.Event, batch, conns int) (time.Duration, time.Duration) {
	b.Helper()
	ctx := context.Background()
	type job struct{ st, from int }
	jobs := make(chan job)
	errs := make(chan error, conns)
	var pool []*pgx.Conn
	for i := 0; i < conns; i++ {
		c, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		pool = append(pool, c)
	}
	sql := `
		INSERT INTO ` + table + ` (store_id, gateway_id, seq, kind, task_no, at, data)
		SELECT $1, $2, u.seq, u.kind, u.task_no, u.at, u.data::json
		FROM unnest($3::bigint[], $4::text[], $5::text[], $6::timestamptz[], $7::text[]) AS u(seq, kind, task_no, at, data)
		ON CONFLICT (store_id, gateway_id, seq) DO NOTHING`
	start, pg0 := time.Now(), postgresCPU(dbURL)
	var wg stdsync.WaitGroup
	for _, c := range pool {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				evs := events[j.from:min(j.from+batch, len(events))]
				seqs, kinds, taskNos, ats, datas := make([]int64, len(evs)), make([]string, len(evs)), make([]string, len(evs)), make([]time.Time, len(evs)), make([]string, len(evs))
				for i, e := range evs {
					seqs[i], kinds[i], taskNos[i], ats[i], datas[i] = int64(e.Seq), e.Kind, e.TaskNo, e.At, string(e.Data)
				}
				st := stores[j.st]
				if _, err := c.Exec(ctx, sql, st.id, st.gatewayID, seqs, kinds, taskNos, ats, datas); err != nil {
					errs <- err
					for range jobs {
					}
					return
				}
			}
		}()
	}
	for s := range stores {
		for from := 0; from < len(events); from += batch {
			jobs <- job{s, from}
		}
	}
	close(jobs)
	wg.Wait()
	el, pg := time.Since(start), postgresCPU(dbURL)-pg0 // before the connections close, and their processes end
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("raw insert: %v", err)
	}
	return el, pg
}

// rawTable makes a table like task_events (its keys and indexes) for the
// raw ceiling, emptied first.
func rawTable(b *testing.B, dbURL, name string) {
	b.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `DROP TABLE IF EXISTS `+name+`; CREATE TABLE `+name+` (LIKE task_events INCLUDING ALL)`); err != nil {
		b.Fatal(err)
	}
}

// checkIngested checks the cloud holds every event and task, each task
// done, and set nothing aside.
func checkIngested(b *testing.B, dbURL string, stores, backlog int) {
	b.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	var events, tasks, done, receipts, dead int
	err = c.QueryRow(ctx, `SELECT (SELECT count(*) FROM task_events), (SELECT count(*) FROM print_tasks),
		(SELECT count(*) FROM print_tasks WHERE status = 'done'), (SELECT count(*) FROM task_events WHERE kind = 'receipt'), (SELECT count(*) FROM dead_letters)`).
		Scan(&events, &tasks, &done, &receipts, &dead)
	if err != nil {
		b.Fatal(err)
	}
	if events != stores*backlog || tasks != stores*backlogTasks(backlog) || dead != 0 {
		b.Fatalf("got %d events, %d tasks (%d done), %d receipt events, %d dead letters; want %d events, %d tasks, none set aside",
			events, tasks, done, receipts, dead, stores*backlog, stores*backlogTasks(backlog))
	}
}

// BenchmarkChainReconnect: 1,000 gateways, each back with a 2,000-event
// backlog, link to two cloud nodes on one PostgreSQL at once. It reports
// the time until every backlog is acknowledged against the raw ceiling,
// each gateway's time (median, p99), each node's peak memory, and the CPU
// every process that took part used against the raw inserts' with the
// machine's load average: on a machine others use, the times measure a
// share of it, the CPU what the work costs.
func BenchmarkChainReconnect(b *testing.B) {
	gateways, backlog := envInt(b, "STOREPRINT_BENCH_GATEWAYS", 1000), envInt(b, "STOREPRINT_BENCH_BACKLOG", 2000)
	events := backlogEvents(backlog)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbURL := pgtest.NewDatabase(b)
		nodes := startBenchNodes(b, dbURL, 2)
		setup := time.Now()
		stores := createStores(b, nodes[0].base, fmt.Sprintf("c%d", i), gateways)
		fmt.Printf("chain: %d stores with a gateway made in %.1fs\n", gateways, time.Since(setup).Seconds())

		rows := float64(gateways * backlog)
		rawTable(b, dbURL, "raw_events")
		raw1, _ := rawInsert(b, dbURL, "raw_events", stores, events, synclink.DefaultBatchSize, 1)
		rawTable(b, dbURL, "raw_events")
		rawStatements := statements(b, dbURL, "raw")
		load0, selfRaw0 := loadAverage(), selfCPU()
		rawN, pgRaw := rawInsert(b, dbURL, "raw_events", stores, events, synclink.DefaultBatchSize, rawParallel)
		selfRaw := selfCPU() - selfRaw0
		rawStmts := rawStatements()
		rawTable(b, dbURL, "raw_events")
		linkStatements := statements(b, dbURL, "through the link")

		ing0 := []nodeIngest{nodeIngested(b, nodes[0]), nodeIngested(b, nodes[1])}
		runtime.GC()
		cpu0, self0, pg1 := []time.Duration{nodes[0].cpu(), nodes[1].cpu()}, selfCPU(), postgresCPU(dbURL)
		b.StartTimer()
		res := replayAll(b, nodes, stores, events)
		b.StopTimer()
		cpu1, self1, pgLink := []time.Duration{nodes[0].cpu(), nodes[1].cpu()}, selfCPU(), postgresCPU(dbURL)-pg1
		load1 := loadAverage()
		linkStmts := linkStatements()
		checkIngested(b, dbURL, gateways, backlog)

		p50, p99 := res.quantile(0.5), res.quantile(0.99)
		fmt.Printf("chain: %d gateways x %d events (%.0f rows)\n", gateways, backlog, rows)
		fmt.Printf("  raw unnest, 1 connection:   %6.1fs  %8.0f rows/s\n", raw1.Seconds(), rows/raw1.Seconds())
		fmt.Printf("  raw unnest, %d connections:  %6.1fs  %8.0f rows/s\n", rawParallel, rawN.Seconds(), rows/rawN.Seconds())
		xRaw, spread := res.total.Seconds()/rawN.Seconds(), p99.Seconds()/p50.Seconds()
		fmt.Printf("  through the link, 2 nodes:  %6.1fs  %8.0f events/s  %.2f x raw (%d conns; aim <= 2: %s), %.2f x raw (1 conn)\n",
			res.total.Seconds(), rows/res.total.Seconds(), xRaw, rawParallel, aim(xRaw <= 2), res.total.Seconds()/raw1.Seconds())
		fmt.Printf("  per gateway: median %.2fs, p99 %.2fs: p99 %.2f x median (aim <= 3: %s); %d links opened for %d gateways\n",
			p50.Seconds(), p99.Seconds(), spread, aim(spread <= 3), res.sessions, gateways)
		printBreaks(res.breaks)
		for j, n := range nodes {
			ing := nodeIngested(b, n)
			ev, bt := ing.events-ing0[j].events, ing.batches-ing0[j].batches
			fmt.Printf("  node %d: %.0f events stored and acknowledged (a batch sent again counts again) in %.0f batches, %.0f events a batch\n",
				j+1, ev, bt, ev/max(bt, 1))
			if n.peak != nil {
				fmt.Printf("  node %d: peak RSS %.0f MiB, CPU %.1fs\n", j+1, float64(n.peak())/(1<<20), (cpu1[j] - cpu0[j]).Seconds())
				b.ReportMetric(float64(n.peak())/(1<<20), fmt.Sprintf("MiB-node%d", j+1))
			}
		}
		fmt.Printf("  the gateways' side (this process): CPU %.1fs\n", (self1 - self0).Seconds())
		if pgLink > 0 && pgRaw > 0 {
			fmt.Printf("  PostgreSQL's server processes: CPU %.1fs through the link, %.1fs raw over %d connections (%.2f x)\n",
				pgLink.Seconds(), pgRaw.Seconds(), rawParallel, pgLink.Seconds()/pgRaw.Seconds())
			// The CPU the work took, whatever else ran beside it: the
			// times above are shares of a machine others may be using.
			linkCPU := pgLink + (self1 - self0)
			for j := range nodes {
				linkCPU += cpu1[j] - cpu0[j]
			}
			rawCPU := pgRaw + selfRaw
			fmt.Printf("  CPU of every process that took part: %.1fs through the link, %.1fs raw over %d connections (%.2f x)\n",
				linkCPU.Seconds(), rawCPU.Seconds(), rawParallel, linkCPU.Seconds()/rawCPU.Seconds())
			b.ReportMetric(linkCPU.Seconds()/rawCPU.Seconds(), "x-raw-cpu")
		}
		fmt.Printf("  the machine's load average (1 min): %s before the raw inserts, %s after the link (%d CPUs)\n", load0, load1, runtime.NumCPU())
		fmt.Print(rawStmts, linkStmts)
		b.ReportMetric(res.total.Seconds(), "s-to-clear")
		b.ReportMetric(res.total.Seconds()/rawN.Seconds(), "x-raw")
		b.ReportMetric(p50.Seconds(), "s-p50-gateway")
		b.ReportMetric(p99.Seconds(), "s-p99-gateway")
		b.ReportMetric(rows/res.total.Seconds(), "events/s")
	}
}

// nodeIngest is what a node's /metrics says it ingested so far.
type nodeIngest struct{ events, batches float64 }

// nodeIngested reads the events and batches a node acknowledged from its
// /metrics.
func nodeIngested(b *testing.B, n *benchNode) nodeIngest {
	b.Helper()
	req, err := nethttp.NewRequest("GET", n.base+"/metrics", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := httpc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var in nodeIngest
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), " ")
		f, _ := strconv.ParseFloat(v, 64)
		switch name {
		case "storeprint_cloud_ingested_events_total":
			in.events = f
		case "storeprint_cloud_ingest_batch_seconds_count":
			in.batches = f
		}
	}
	return in
}

// aim words whether a figure meets its aim.
func aim(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

// printBreaks prints why links broke, most frequent first. A gateway
// logs a reason once, until it changes: these are not counts of breaks.
func printBreaks(breaks map[string]int) {
	reasons := slices.Collect(maps.Keys(breaks))
	if len(reasons) > 0 {
		fmt.Printf("  why links broke, as the gateways logged it (once until the reason changes):\n")
	}
	sort.Slice(reasons, func(i, j int) bool { return breaks[reasons[i]] > breaks[reasons[j]] })
	for _, r := range reasons[:min(len(reasons), 5)] {
		fmt.Printf("    %5d x %s\n", breaks[r], r)
	}
}

// loadAverage is the machine's load average over the last minute, as
// /proc/loadavg says (Linux; "?" elsewhere): other processes' work makes
// the times of one run unlike another's.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s: %q is not a number of at least 1", name, v)
	}
	return n
}

// postgresCPU is the CPU time so far (user and system) of the server
// processes of the PostgreSQL cluster dbURL names, that can be read
// (Linux: 0 elsewhere): its postmaster (found by its port) and its
// children. Other clusters on the machine (other tests) are not counted.
func postgresCPU(dbURL string) time.Duration {
	u, err := url.Parse(dbURL)
	if err != nil || u.Port() == "" {
		return 0
	}
	port := []byte("\x00-p\x00" + u.Port() + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	master := ""
	for _, d := range dirs {
		cmd, err := os.ReadFile(d + "/cmdline")
		if err == nil && bytes.Contains(cmd, port) && bytes.Contains(cmd, []byte("postgres\x00")) {
			master = filepath.Base(d)
			break
		}
	}
	if master == "" {
		return 0
	}
	var total time.Duration
	for _, d := range dirs {
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if filepath.Base(d) != master && (len(f) < 2 || f[1] != master) {
			continue
		}
		cpu, _ := testbin.StatCPU(d + "/stat")
		total += cpu
	}
	return total
}

// statements, when STOREPRINT_BENCH_STATEMENTS=1 and the server loads
// pg_stat_statements, resets the database's statement statistics and
// returns a function that tells the statements that took the most of
// its time since, as "name": how often each ran, the rows it touched,
// its time, its buffers and its WAL. Without either it tells nothing.
func statements(b *testing.B, dbURL, name string) func() string {
	b.Helper()
	none := func() string { return "" }
	if os.Getenv("STOREPRINT_BENCH_STATEMENTS") != "1" {
		return none
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		b.Logf("statements: %v", err)
		return none
	}
	if _, err := c.Exec(ctx, `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`); err != nil {
		b.Logf("statements: %v (is pg_stat_statements in shared_preload_libraries?)", err)
		return none
	}
	return func() string {
		c, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		rows, err := c.Query(ctx, `
			SELECT calls, rows, total_exec_time, shared_blks_hit, shared_blks_read + shared_blks_dirtied + shared_blks_written,
			       wal_records, wal_bytes, regexp_replace(left(query, 110), '\s+', ' ', 'g')
			FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			ORDER BY total_exec_time DESC LIMIT 12`)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		var out strings.Builder
		fmt.Fprintf(&out, "  statements, %s (pg_stat_statements): calls, rows, time, buffers hit, read/dirtied/written, WAL records, WAL MiB\n", name)
		for rows.Next() {
			var calls, n, hit, other, walRecs int64
			var ms float64
			var walBytes float64
			var q string
			if err := rows.Scan(&calls, &n, &ms, &hit, &other, &walRecs, &walBytes, &q); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&out, "    %7d %9d %8.1fs %10d %8d %9d %7.1f  %s\n", calls, n, ms/1000, hit, other, walRecs, walBytes/(1<<20), q)
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		return out.String()
	}
}
