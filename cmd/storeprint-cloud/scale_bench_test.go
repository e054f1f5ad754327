package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/sync"
)

// The chain-scale benchmark: a database filled through COPY with a
// chain's month (by default 10,000 stores of two tenants with 1,000 tasks
// each, one busy store with 400 times as many, three printers a store),
// then every HQ endpoint timed over HTTP against the real program, the
// dashboard under 1 to 20 viewers, and ingest against an empty and the
// full database. Sizes from STOREPRINT_BENCH_STORES and
// STOREPRINT_BENCH_TASKS (tasks per store); run it with
//
//	make bench-scale
//	make bench-scale BENCH_TASKS=100   # a tenth of the history
//
// The fill writes about 0.85 KB a task (8 GB at the full size).

// scaleShape is what the fill writes.
type scaleShape struct {
	stores int // the first is the busy one
	tasks  int // per store; the busy store has busyFactor times as many
	now    time.Time
}

const (
	busyFactor   = 400
	scaleHistory = 30 * 24 * time.Hour
	scaleTenantA = "acme"
	scaleTenantB = "globex"
)

func scaleShapeFromEnv(b *testing.B) scaleShape {
	s := scaleShape{stores: 10000, tasks: 1000, now: time.Now()}
	for name, p := range map[string]*int{"STOREPRINT_BENCH_STORES": &s.stores, "STOREPRINT_BENCH_TASKS": &s.tasks} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				b.Fatalf("%s: %q is not a number of at least 0", name, v)
			}
			*p = n
		}
	}
	if s.stores < 2 {
		b.Fatal("STOREPRINT_BENCH_STORES: at least 2 stores")
	}
	return s
}

func (s scaleShape) storeID(i int) string { return fmt.Sprintf("st-%05d", i) }
func (s scaleShape) tenant(i int) string {
	if i%2 == 0 {
		return scaleTenantA
	}
	return scaleTenantB
}
func (s scaleShape) gatewayID(i int) string { return fmt.Sprintf("gw-%05d", i) }
func (s scaleShape) tasksOf(i int) int {
	if i == 0 {
		return s.tasks * busyFactor
	}
	return s.tasks
}

// scaleTask is task n of store i: when it was accepted and what became of
// it. r spreads the outcomes: 0.5 % flagged, 0.2 % failed (both with an
// open alert), 0.4 % flagged once and printed later (a resolved alert),
// 1 % with an audit event, 60 % with a task event, 30 % with a receipt.
type scaleTask struct {
	no, order, printer string
	status, reason     string
	created, updated   time.Time
	printed            *time.Time
	r                  int
}

func (s scaleShape) task(i, n int) scaleTask {
	total := s.tasksOf(i)
	step := scaleHistory / time.Duration(total+1)
	r := (n*7919 + i*104729) % 1000
	t := scaleTask{
		no:      fmt.Sprintf("order_%s-%07d_station_hot", s.storeID(i), n),
		order:   fmt.Sprintf("%s-%07d", s.storeID(i), n),
		printer: "hot-1",
		created: s.now.Add(-scaleHistory + time.Duration(n+1)*step),
		r:       r,
	}
	switch {
	case r < 5:
		t.status, t.reason = "attention_required", "uncertain"
		t.updated = t.created.Add(30 * time.Second)
	case r < 7:
		t.status, t.reason = "failed", "retries"
		t.updated = t.created.Add(30 * time.Second)
	default:
		t.status = "done"
		p := t.created.Add(time.Duration(800+r*9) * time.Millisecond)
		t.printed, t.updated = &p, p
	}
	return t
}

// copyRows writes rows through COPY.
func copyRows(b *testing.B, conn *pgx.Conn, table string, cols []string, next func() ([]any, bool)) int64 {
	b.Helper()
	n, err := conn.CopyFrom(context.Background(), pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		row, ok := next()
		if !ok {
			return nil, nil
		}
		return row, nil
	}))
	if err != nil {
		b.Fatalf("copy %s: %v", table, err)
	}
	return n
}

// storeTasks iterates over every task of every store.
type storeTasks struct {
	s    scaleShape
	i, n int
}

func (it *storeTasks) next() (int, scaleTask, bool) {
	for it.i < it.s.stores {
		if it.n < it.s.tasksOf(it.i) {
			t := it.s.task(it.i, it.n)
			it.n++
			return it.i, t, true
		}
		it.i, it.n = it.i+1, 0
	}
	return 0, scaleTask{}, false
}

// fillScale writes the shape into the database at dbURL, whose tenants
// exist already, and returns how many rows each table got.
func fillScale(b *testing.B, dbURL string, s scaleShape) map[string]int64 {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	got := map[string]int64{}
	i := 0
	got["stores"] = copyRows(b, conn, "stores", []string{"store_id", "tenant_id", "name", "created_at"}, func() ([]any, bool) {
		if i == s.stores {
			return nil, false
		}
		i++
		return []any{s.storeID(i - 1), s.tenant(i - 1), fmt.Sprintf("Store %d", i-1), s.now.Add(-scaleHistory)}, true
	})
	i = 0
	copyRows(b, conn, "downstream_cursors", []string{"store_id"}, func() ([]any, bool) {
		if i == s.stores {
			return nil, false
		}
		i++
		return []any{s.storeID(i - 1)}, true
	})
	// 5 % of the gateways never connected.
	i = 0
	got["gateways"] = copyRows(b, conn, "gateways", []string{"store_id", "gateway_id", "token_hash", "online", "link_id", "last_seen", "version"}, func() ([]any, bool) {
		if i == s.stores {
			return nil, false
		}
		i++
		online := (i-1)%20 != 7
		var seen *time.Time
		if online {
			seen = &s.now
		}
		return []any{s.storeID(i - 1), s.gatewayID(i - 1), cloud.HashToken("x"), online, "fill", seen, "1.0.0"}, true
	})
	// Three printers a store; 1 % of the stores have one out of paper, 0.5 %
	// one in failover.
	i = 0
	got["printers"] = copyRows(b, conn, "printers", []string{"store_id", "printer_id", "status", "stations", "backup", "failover", "updated_at"}, func() ([]any, bool) {
		if i == 3*s.stores {
			return nil, false
		}
		st, p := i/3, i%3
		i++
		id, station, status, failover := [3]string{"hot-1", "pass-1", "bar-1"}[p], [3]string{"hot", "pass", "bar"}[p], "ready", false
		if p == 0 && st%100 == 3 {
			status = "paper_end"
		}
		if p == 1 && st%200 == 5 {
			failover = true
		}
		return []any{s.storeID(st), id, status, []string{station}, "", failover, s.now}, true
	})

	it := &storeTasks{s: s}
	got["print_tasks"] = copyRows(b, conn, "print_tasks", []string{"store_id", "task_no", "order_id", "station", "printer_id", "status",
		"version", "attempt", "last_error", "reason", "source", "gateway_id", "created_at", "printed_at", "updated_at"}, func() ([]any, bool) {
		i, t, ok := it.next()
		if !ok {
			return nil, false
		}
		lastErr := ""
		if t.status == "failed" {
			lastErr = "printer offline"
		}
		return []any{s.storeID(i), t.no, t.order, "hot", t.printer, t.status, int64(3), int32(1), lastErr, t.reason, "pos",
			s.gatewayID(i), t.created, t.printed, t.updated}, true
	})

	// Task events and receipts carry per-gateway seqs 1..n, contiguous.
	seqs := make([]int64, s.stores)
	it = &storeTasks{s: s}
	got["task_events"] = copyRows(b, conn, "task_events", []string{"store_id", "gateway_id", "seq", "kind", "task_no", "at", "data"}, func() ([]any, bool) {
		for {
			i, t, ok := it.next()
			if !ok {
				return nil, false
			}
			if t.r%10 >= 6 {
				continue
			}
			seqs[i]++
			data, _ := json.Marshal(sync.TaskEvent{TaskNo: t.no, Version: 3, OrderID: t.order, Station: "hot", PrinterID: t.printer,
				Status: storeprint.Status(t.status), Attempt: 1, Reason: storeprint.Reason(t.reason), Source: storeprint.SourcePOS, CreatedAt: t.created, UpdatedAt: t.updated, PrintedAt: t.printed})
			return []any{s.storeID(i), s.gatewayID(i), seqs[i], sync.KindTask, t.no, t.updated, string(data)}, true
		}
	})
	it = &storeTasks{s: s}
	// A gateway's receipts are its receipt events (the receipts table
	// holds only snapshots' and CloudPRNT printers').
	got["task_events"] += copyRows(b, conn, "task_events", []string{"store_id", "gateway_id", "seq", "kind", "task_no", "at", "data"}, func() ([]any, bool) {
		for {
			i, t, ok := it.next()
			if !ok {
				return nil, false
			}
			if t.r%10 >= 3 || t.printed == nil {
				continue
			}
			seqs[i]++
			data, _ := json.Marshal(sync.ReceiptEvent{TaskNo: t.no, Attempt: 1, State: storeprint.ReceiptPrinted, PrinterID: t.printer,
				ProcessID: "0001", At: *t.printed})
			return []any{s.storeID(i), s.gatewayID(i), seqs[i], sync.KindReceipt, t.no, *t.printed, string(data)}, true
		}
	})
	i = 0
	copyRows(b, conn, "gateway_cursors", []string{"store_id", "gateway_id", "seq"}, func() ([]any, bool) {
		if i == s.stores {
			return nil, false
		}
		i++
		return []any{s.storeID(i - 1), s.gatewayID(i - 1), seqs[i-1]}, true
	})

	it = &storeTasks{s: s}
	got["alerts"] = copyRows(b, conn, "alerts", []string{"store_id", "alert_id", "kind", "task_no", "printer_id", "message", "raised_at", "resolved_at"}, func() ([]any, bool) {
		for {
			i, t, ok := it.next()
			if !ok {
				return nil, false
			}
			switch {
			case t.r < 7:
				return []any{s.storeID(i), t.no + ":" + t.status + ":1", t.status, t.no, t.printer,
					"task " + t.no + " needs a person", t.updated, nil}, true
			case t.r < 11:
				raised := t.created.Add(20 * time.Second)
				if t.printed.Before(raised) {
					raised = *t.printed
				}
				return []any{s.storeID(i), t.no + ":attention_required:1", "attention_required", t.no, t.printer,
					"task " + t.no + " needs a person", raised, *t.printed}, true
			}
		}
	})
	it = &storeTasks{s: s}
	got["audit_events"] = copyRows(b, conn, "audit_events", []string{"tenant_id", "audit_id", "store_id", "source", "actor", "operator",
		"action", "resource", "reason", "at"}, func() ([]any, bool) {
		for {
			i, t, ok := it.next()
			if !ok {
				return nil, false
			}
			if t.r < 11 || t.r >= 21 {
				continue
			}
			action := storeprint.ActionDuplicatePrevented
			if t.r%2 == 0 {
				action = "task.reprint"
			}
			return []any{s.tenant(i), "gateway:" + s.gatewayID(i) + ":" + t.no, s.storeID(i), "gateway", "gateway:" + s.gatewayID(i),
				"Li", action, "task/" + t.no, "bench", t.created.Add(5 * time.Second)}, true
		}
	})
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	return got
}

// latencies is a set of request timings.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(p*float64(len(s))+0.5) - 1
	k = max(0, min(k, len(s)-1))
	return s[k]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// get times one GET and returns the body size; a status other than 200 fails.
func get(b *testing.B, client *nethttp.Client, token, u string) (time.Duration, int) {
	req, _ := nethttp.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatalf("GET %s: %v", u, err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return d, int(n)
}

// refreshPresence keeps the filled gateways online while the benchmark
// runs, as their links would.
func refreshPresence(b *testing.B, conn *pgx.Conn) {
	if _, err := conn.Exec(context.Background(), `UPDATE gateways SET last_seen = now() WHERE online`); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkChainScale(b *testing.B) {
	s := scaleShapeFromEnv(b)
	for range b.N {
		runChainScale(b, s)
	}
}

func runChainScale(b *testing.B, s scaleShape) {
	b.StopTimer()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(b)
	node := startCloud(b, dbURL, "127.0.0.1:0")
	out := os.Stdout
	var tenantToken string
	for _, tn := range []string{scaleTenantA, scaleTenantB} {
		if code := do(b, adminToken, "POST", node.base+"/v1/admin/tenants", map[string]string{"tenant_id": tn, "name": tn}, nil); code != 201 {
			b.Fatalf("create tenant %s: %d", tn, code)
		}
	}
	var tok struct {
		Token string `json:"token"`
	}
	if code := do(b, adminToken, "POST", node.base+"/v1/admin/tenants/"+scaleTenantA+"/tokens", nil, &tok); code != 201 {
		b.Fatalf("tenant token: %d", code)
	}
	tenantToken = tok.Token

	start := time.Now()
	rows := fillScale(b, dbURL, s)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var size string
	if err := conn.QueryRow(ctx, `SELECT pg_size_pretty(pg_database_size(current_database()))`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(out, "\nchain scale: %d stores, %d tasks a store (the busy store %d); filled in %s, %s\n",
		s.stores, s.tasks, s.tasksOf(0), time.Since(start).Round(time.Second), size)
	for _, t := range []string{"stores", "gateways", "printers", "print_tasks", "task_events", "alerts", "audit_events"} {
		fmt.Fprintf(out, "  %-13s %10d rows\n", t, rows[t])
	}

	client := &nethttp.Client{Timeout: 2 * time.Minute, Transport: &nethttp.Transport{MaxIdleConnsPerHost: 64}}
	since := url.QueryEscape(time.Date(s.now.Year(), s.now.Month(), s.now.Day(), 0, 0, 0, 0, time.Local).Format(time.RFC3339))
	busy, quiet := s.storeID(0), s.storeID(2)
	bt, qt := s.task(0, s.tasksOf(0)/2), s.task(2, s.tasksOf(2)/2)
	endpoints := []struct{ name, token, path string }{
		{"dashboard (admin)", adminToken, "/v1/dashboard?since=" + since},
		{"dashboard (tenant)", tenantToken, "/v1/dashboard?since=" + since},
		{"stores (admin)", adminToken, "/v1/stores"},
		{"stores (tenant)", tenantToken, "/v1/stores"},
		{"stores ?after= (admin)", adminToken, "/v1/stores?limit=1000&after=" + s.storeID(s.stores/2)},
		{"store alerts", adminToken, "/v1/stores/" + quiet + "/alerts"},
		{"store alerts ?history=true", adminToken, "/v1/stores/" + busy + "/alerts?history=true"},
		{"tasks (busy store)", adminToken, "/v1/stores/" + busy + "/tasks"},
		{"tasks ?status=failed (busy)", adminToken, "/v1/stores/" + busy + "/tasks?status=failed"},
		{"tasks ?status=done (busy)", adminToken, "/v1/stores/" + busy + "/tasks?status=done"},
		{"tasks ?after= (busy)", adminToken, "/v1/stores/" + busy + "/tasks?after="},
		{"tasks ?status=failed&after=", tenantToken, "/v1/stores/" + busy + "/tasks?status=failed&after="},
		{"tasks (quiet store, tenant)", tenantToken, "/v1/stores/" + quiet + "/tasks"},
		{"task", adminToken, "/v1/stores/" + busy + "/tasks/" + bt.no},
		{"search order id (admin)", adminToken, "/v1/search?q=" + qt.order},
		{"search task_no (tenant)", tenantToken, "/v1/search?q=" + bt.no},
		{"search in a store", adminToken, "/v1/search?q=" + bt.order + "&store_id=" + busy},
		{"audit (admin)", adminToken, "/v1/audit"},
		{"audit ?tenant_id= (admin)", adminToken, "/v1/audit?tenant_id=" + scaleTenantB},
		{"audit (tenant)", tenantToken, "/v1/audit"},
		{"audit ?store_id= (tenant)", tenantToken, "/v1/audit?store_id=" + quiet},
		{"audit ?store_id= (admin)", adminToken, "/v1/audit?store_id=" + busy},
	}
	const warm, timed = 3, 30 // past pgx's fifth execution, where plans go generic
	fmt.Fprintf(out, "\n%-30s %9s %9s %10s\n", "endpoint (sequential, warm)", "p50 ms", "p99 ms", "bytes")
	for _, e := range endpoints {
		refreshPresence(b, conn)
		var l latencies
		var n int
		for k := 0; k < warm+timed; k++ {
			d, size := get(b, client, e.token, node.base+e.path)
			if k >= warm {
				l = append(l, d)
			}
			n = size
		}
		fmt.Fprintf(out, "%-30s %9s %9s %10d\n", e.name, ms(l.pct(0.5)), ms(l.pct(0.99)), n)
	}

	var summary struct {
		Summary map[string]any `json:"summary"`
	}
	do(b, adminToken, "GET", node.base+"/v1/dashboard?since="+since, nil, &summary)
	fmt.Fprintf(out, "\ndashboard summary (admin): %v\n", summary.Summary)

	fmt.Fprintf(out, "\n%-30s %9s %9s %9s\n", "dashboard, back-to-back", "req/s", "p50 ms", "p99 ms")
	const viewing = 8 * time.Second
	for _, viewers := range []int{1, 4, 8, 20} {
		refreshPresence(b, conn)
		var mu stdsync.Mutex
		var all latencies
		var wg stdsync.WaitGroup
		stop := time.Now().Add(viewing)
		began := time.Now()
		for v := 0; v < viewers; v++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine latencies
				for time.Now().Before(stop) {
					d, _ := get(b, client, adminToken, node.base+"/v1/dashboard?since="+since)
					mine = append(mine, d)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		rate := float64(len(all)) / time.Since(began).Seconds()
		fmt.Fprintf(out, "%-30s %9.1f %9s %9s\n", fmt.Sprintf("%d viewers", viewers), rate, ms(all.pct(0.5)), ms(all.pct(0.99)))
		b.ReportMetric(rate, fmt.Sprintf("dashboard-req/s-%dviewers", viewers))
		b.ReportMetric(float64(all.pct(0.99).Microseconds())/1000, fmt.Sprintf("dashboard-p99-ms-%dviewers", viewers))
	}
	// As the page polls: one request at a time, 2 s apart, each viewer
	// starting at its own moment.
	fmt.Fprintf(out, "\n%-30s %9s %9s %9s\n", "dashboard, polling every 2 s", "req/s", "p50 ms", "p99 ms")
	const polling, every = 20 * time.Second, 2 * time.Second
	for _, viewers := range []int{20, 100} {
		refreshPresence(b, conn)
		var mu stdsync.Mutex
		var all latencies
		var wg stdsync.WaitGroup
		began := time.Now()
		for v := 0; v < viewers; v++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := began.Add(every * time.Duration(v) / time.Duration(viewers))
				var mine latencies
				for next.Before(began.Add(polling)) {
					time.Sleep(time.Until(next))
					d, _ := get(b, client, adminToken, node.base+"/v1/dashboard?since="+since)
					mine = append(mine, d)
					next = next.Add(every)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		rate := float64(len(all)) / time.Since(began).Seconds()
		fmt.Fprintf(out, "%-30s %9.1f %9s %9s\n", fmt.Sprintf("%d viewers", viewers), rate, ms(all.pct(0.5)), ms(all.pct(0.99)))
		b.ReportMetric(float64(all.pct(0.99).Microseconds())/1000, fmt.Sprintf("dashboard-polling-p99-ms-%dviewers", viewers))
	}
	node.close()

	// Ingest: 64 stores' gateways sending small batches in parallel, as a
	// chain does at peak; first into a database with only those stores,
	// then into the full one.
	fmt.Fprintf(out, "\n%-30s %9s\n", "ingest, 64 gateways", "events/s")
	emptyURL := pgtest.NewDatabase(b)
	empty := scaleShape{stores: 65, tasks: 0, now: s.now}
	seedTenants(b, emptyURL)
	fillScale(b, emptyURL, empty)
	for _, db := range []struct {
		name, key string
		url       string
		s         scaleShape
	}{{"empty database", "empty", emptyURL, empty}, {"full database", "full", dbURL, s}} {
		rate := ingestRate(b, db.url, db.s)
		fmt.Fprintf(out, "%-30s %9.0f\n", db.name, rate)
		b.ReportMetric(rate, "ingest-events/s-"+db.key)
	}
	fmt.Fprintln(out)
}

func seedTenants(b *testing.B, dbURL string) {
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `INSERT INTO tenants (tenant_id, name) VALUES ($1, $1), ($2, $2)`, scaleTenantA, scaleTenantB); err != nil {
		b.Fatal(err)
	}
}

// ingestRate sends 64 gateways' events (per task: queued, printing,
// three receipts, done; two tasks a batch) for a while and returns the
// events stored a second. The stores are s's stores 1..64 (not the busy
// one), their gateways' seqs continuing from the fill.
func ingestRate(b *testing.B, dbURL string, s scaleShape) float64 {
	gateways := min(64, s.stores-1)
	const batches = 60 // per gateway
	ctx := context.Background()
	db, err := postgres.Open(ctx, dbURL+"&pool_max_conns=16")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ing := postgres.NewIngestService(db)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	first := make([]uint64, gateways)
	for g := range first {
		i := 1 + g
		if err := conn.QueryRow(ctx, `SELECT seq FROM gateway_cursors WHERE store_id = $1`, s.storeID(i)).Scan(&first[g]); err != nil {
			b.Fatal(err)
		}
	}
	conn.Close(ctx)
	var stored atomic.Int64
	var failed atomic.Value
	var wg stdsync.WaitGroup
	start := time.Now()
	for g := 0; g < gateways; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := 1 + g
			seq := first[g] + 1
			for n := 0; n < batches; n++ {
				var batch []sync.Event
				for k := 0; k < 2; k++ {
					no := fmt.Sprintf("order_ing-%d-%d_station_hot", n, k)
					at := time.Now()
					for v, st := range []storeprint.Status{"queued", "printing", "", "", "", "done"} {
						ev := sync.Event{Seq: seq, TaskNo: no, At: at}
						seq++
						if st == "" {
							data, _ := json.Marshal(sync.ReceiptEvent{TaskNo: no, Attempt: 1, State: [3]storeprint.ReceiptState{storeprint.ReceiptPrepared, storeprint.ReceiptSubmitted, storeprint.ReceiptPrinted}[v-2], PrinterID: "hot-1", At: at})
							ev.Kind, ev.Data = sync.KindReceipt, data
						} else {
							data, _ := json.Marshal(sync.TaskEvent{TaskNo: no, Version: uint64(v + 1), OrderID: "ing", Station: "hot", PrinterID: "hot-1", Status: st, Attempt: 1, Source: "pos", CreatedAt: at, UpdatedAt: at})
							ev.Kind, ev.Data = sync.KindTask, data
						}
						batch = append(batch, ev)
					}
				}
				if _, err := ing.Ingest(ctx, s.gatewayID(i), s.storeID(i), "", batch); err != nil {
					failed.Store(err)
					return
				}
				stored.Add(int64(len(batch)))
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(stored.Load()) / time.Since(start).Seconds()
}
