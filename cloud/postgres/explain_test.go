package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// recorder keeps every statement the adapter sends, with its arguments.
type recorder struct {
	mu    stdsync.Mutex
	stmts []recorded
}

type recorded struct {
	sql      string
	args     []any
	uncached bool // sent with pgx.QueryExecModeExec: never a cached, generic plan
}

func (r *recorder) add(sql string, args []any) {
	rec := recorded{sql: sql, args: args}
	if len(args) > 0 {
		if mode, ok := args[0].(pgx.QueryExecMode); ok {
			rec.uncached, rec.args = mode == pgx.QueryExecModeExec, args[1:]
		}
	}
	r.mu.Lock()
	r.stmts = append(r.stmts, rec)
	r.mu.Unlock()
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(d.SQL, d.Args)
	return ctx
}
func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *recorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, q := range d.Batch.QueuedQueries {
		r.add(q.SQL, q.Arguments)
	}
	return ctx
}
func (r *recorder) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *recorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// explainFill writes a chain's history through COPY: 100 stores of two
// tenants, 2,000 tasks each over 30 days (0.7 % with an open alert), an
// event per task, a receipt event for every other printed one (and a
// snapshot's receipt row for one in 50), an audit event for every other,
// and three printers a store.
func explainFill(t *testing.T, url string, now time.Time) {
	t.Helper()
	const stores, tasks = 100, 2000
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO tenants (tenant_id, name) VALUES ('acme', 'Acme'), ('globex', 'Globex')`); err != nil {
		t.Fatal(err)
	}
	store := func(i int) string { return fmt.Sprintf("st-%03d", i) }
	tenant := func(i int) string { return [2]string{"acme", "globex"}[i%2] }
	copyN := func(table string, cols []string, n int, row func(k int) []any) {
		t.Helper()
		k := 0
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
			for k < n {
				k++
				if r := row(k - 1); r != nil {
					return r, nil
				}
			}
			return nil, nil
		})); err != nil {
			t.Fatalf("copy %s: %v", table, err)
		}
	}
	copyN("stores", []string{"store_id", "tenant_id", "name"}, stores, func(i int) []any {
		return []any{store(i), tenant(i), "Store " + store(i)}
	})
	copyN("gateways", []string{"store_id", "gateway_id", "token_hash", "online", "link_id", "last_seen"}, stores, func(i int) []any {
		return []any{store(i), "gw-" + store(i), []byte{0}, i%10 != 3, "l", now}
	})
	copyN("printers", []string{"store_id", "printer_id", "status", "failover"}, 3*stores, func(k int) []any {
		status := "ready"
		if k%50 == 1 {
			status = "paper_end"
		}
		return []any{store(k / 3), [3]string{"hot-1", "pass-1", "bar-1"}[k%3], status, k%70 == 2}
	})
	step := 30 * 24 * time.Hour / tasks
	task := func(k int) (i, n int, no, status string, created time.Time, printed *time.Time) {
		i, n = k/tasks, k%tasks
		no = fmt.Sprintf("order_%s-%05d_station_hot", store(i), n)
		created = now.Add(-30*24*time.Hour + time.Duration(n)*step)
		switch r := (n*7919 + i*31) % 1000; {
		case r < 5:
			status = "attention_required"
		case r < 7:
			status = "failed"
		default:
			status = "done"
			p := created.Add(time.Duration(1000+r) * time.Millisecond)
			printed = &p
		}
		return
	}
	copyN("print_tasks", []string{"store_id", "task_no", "order_id", "station", "printer_id", "status", "version", "created_at",
		"printed_at", "updated_at"}, stores*tasks, func(k int) []any {
		i, n, no, status, created, printed := task(k)
		return []any{store(i), no, fmt.Sprintf("%s-%05d", store(i), n), "hot", "hot-1", status, int64(3), created, printed, created}
	})
	copyN("task_events", []string{"store_id", "gateway_id", "seq", "kind", "task_no", "at", "data"}, stores*tasks, func(k int) []any {
		i, n, no, _, created, _ := task(k)
		return []any{store(i), "gw-" + store(i), int64(n + 1), "task", no, created, `{}`}
	})
	// A gateway's receipts are its receipt events; the receipts table
	// holds a snapshot's, a few.
	copyN("task_events", []string{"store_id", "gateway_id", "seq", "kind", "task_no", "at", "data"}, stores*tasks, func(k int) []any {
		i, n, no, _, _, printed := task(k)
		if printed == nil || n%2 == 1 {
			return nil
		}
		data := fmt.Sprintf(`{"task_no":%q,"attempt":1,"state":"printed","printer_id":"hot-1","at":%q}`, no, printed.Format(time.RFC3339Nano))
		return []any{store(i), "gw-" + store(i), int64(tasks + n + 1), "receipt", no, *printed, data}
	})
	copyN("receipts", []string{"store_id", "task_no", "attempt", "state", "at", "gateway_id", "seq"}, stores*tasks, func(k int) []any {
		i, n, no, _, created, printed := task(k)
		if printed == nil || n%50 != 0 {
			return nil
		}
		return []any{store(i), no, int32(1), "printed", created, "gw-" + store(i), int64(0)}
	})
	copyN("alerts", []string{"store_id", "alert_id", "kind", "task_no", "message", "raised_at"}, stores*tasks, func(k int) []any {
		i, _, no, status, created, printed := task(k)
		if printed != nil {
			return nil
		}
		return []any{store(i), no + ":" + status + ":1", status, no, "task " + no, created}
	})
	copyN("audit_events", []string{"tenant_id", "audit_id", "store_id", "source", "actor", "action", "resource", "at"}, stores*tasks, func(k int) []any {
		i, n, no, _, created, _ := task(k)
		if n%2 == 1 {
			return nil
		}
		return []any{tenant(i), fmt.Sprintf("a-%d", k), store(i), "gateway", "gateway:gw", storeprint.ActionDuplicatePrevented, "task/" + no, created}
	})
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		t.Fatal(err)
	}
}

// scans lists the scans of a JSON plan.
func scans(plan any, out *[]string) {
	switch p := plan.(type) {
	case map[string]any:
		if typ, _ := p["Node Type"].(string); strings.Contains(typ, "Scan") {
			rel, _ := p["Relation Name"].(string)
			*out = append(*out, typ+" on "+rel)
		}
		for _, v := range p {
			scans(v, out)
		}
	case []any:
		for _, v := range p {
			scans(v, out)
		}
	}
}

// watched are the tables that grow with the chain's history: no HQ query
// may read one of them whole.
var watched = map[string]bool{"print_tasks": true, "task_events": true, "audit_events": true}

// Every query behind the HQ endpoints, run against a database with a
// chain's history, is planned without a sequential scan of print_tasks,
// task_events or audit_events: with the values it ran with, and, for the
// statements pgx caches, as the generic plan PostgreSQL switches to after
// five runs.
func TestHQQueries_Explain(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	now := time.Now()
	start := time.Now()
	explainFill(t, url, now)
	t.Logf("filled in %s", time.Since(start).Round(time.Millisecond))
	ctx := context.Background()
	rec := &recorder{}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	db := &DB{pool: pool}
	stores, tasks, audits, dash := NewStoreService(db), NewTaskService(db), NewAuditService(db), NewDashboardService(db)
	since := now.Add(-12 * time.Hour)
	empty := ""
	for _, actx := range []context.Context{adminCtx, tenantCtx("acme")} {
		calls := []func() error{
			func() error { _, err := dash.Dashboard(actx, cloud.DashboardFilter{Since: since}); return err },
			func() error { _, _, err := stores.FindStores(actx, cloud.StoreFilter{}); return err },
			func() error {
				_, _, err := stores.FindStores(actx, cloud.StoreFilter{After: "st-050", Limit: 10})
				return err
			},
			func() error { _, err := stores.FindAlerts(actx, "st-002", cloud.AlertFilter{}); return err },
			func() error {
				_, err := stores.FindAlerts(actx, "st-002", cloud.AlertFilter{History: true})
				return err
			},
			func() error { _, err := tasks.FindTask(actx, "st-002", "order_st-002-00007_station_hot"); return err },
			func() error { _, err := tasks.FindTasks(actx, "st-002", cloud.TaskFilter{}); return err },
			func() error {
				_, err := tasks.FindTasks(actx, "st-002", cloud.TaskFilter{Status: "failed"})
				return err
			},
			func() error { _, err := tasks.FindTasks(actx, "st-002", cloud.TaskFilter{Status: "done"}); return err },
			func() error { _, err := tasks.FindTasks(actx, "st-002", cloud.TaskFilter{After: &empty}); return err },
			func() error {
				_, err := tasks.FindTasks(actx, "st-002", cloud.TaskFilter{Status: "failed", After: &empty})
				return err
			},
			func() error { _, err := dash.SearchTasks(actx, cloud.TaskSearch{Query: "st-002-00007"}); return err },
			func() error {
				_, err := dash.SearchTasks(actx, cloud.TaskSearch{Query: "order_st-002-00007_station_hot"})
				return err
			},
			func() error {
				_, err := dash.SearchTasks(actx, cloud.TaskSearch{Query: "st-002-00007", StoreID: "st-002"})
				return err
			},
			func() error { _, err := audits.FindAuditEvents(actx, cloud.AuditFilter{}); return err },
			func() error { _, err := audits.FindAuditEvents(actx, cloud.AuditFilter{TenantID: "acme"}); return err },
			func() error { _, err := audits.FindAuditEvents(actx, cloud.AuditFilter{StoreID: "st-002"}); return err },
			func() error { _, err := NewFleetService(db).Fleet(actx); return err }, // every node's scrapes
		}
		for i, call := range calls {
			if err := call(); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	explain := func(sql string, args []any) []string {
		t.Helper()
		var raw []byte
		if err := conn.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var plan any
		if err := json.Unmarshal(raw, &plan); err != nil {
			t.Fatal(err)
		}
		var out []string
		scans(plan, &out)
		return out
	}
	seen := map[string]bool{}
	checked := 0
	for k, st := range rec.stmts {
		key := st.sql + fmt.Sprint(st.args)
		sql := strings.TrimSpace(st.sql)
		verb, _, _ := strings.Cut(sql, " ")
		switch {
		case seen[key], strings.HasPrefix(sql, "SELECT pg_"), strings.HasPrefix(sql, "SELECT set_config"):
			continue
		case verb != "SELECT" && verb != "WITH" && verb != "INSERT" && verb != "UPDATE" && verb != "DELETE":
			continue // begin, commit
		}
		seen[key] = true
		plans := map[string][]string{"custom": explain("EXPLAIN (FORMAT JSON) "+st.sql, st.args)}
		if !st.uncached {
			name := fmt.Sprintf("hq_%d", k)
			if _, err := conn.Prepare(ctx, name, st.sql); err != nil {
				t.Fatalf("prepare %s: %v", st.sql, err)
			}
			params := make([]string, len(st.args))
			for i, a := range st.args {
				params[i] = literal(t, a)
			}
			if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
				t.Fatal(err)
			}
			execute := "EXECUTE " + name
			if len(params) > 0 {
				execute += "(" + strings.Join(params, ", ") + ")"
			}
			plans["generic"] = explain("EXPLAIN (FORMAT JSON) "+execute, nil)
			if _, err := conn.Exec(ctx, `RESET plan_cache_mode`); err != nil {
				t.Fatal(err)
			}
		}
		for kind, got := range plans {
			for _, s := range got {
				typ, rel, _ := strings.Cut(s, " on ")
				if typ == "Seq Scan" && watched[rel] {
					t.Errorf("the %s plan scans %s whole:\n%s\nargs %v\nscans %v", kind, rel, st.sql, st.args, got)
				}
			}
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("checked %d statements, want the 40 or more the HQ endpoints send", checked)
	}
	t.Logf("checked %d statements", checked)
}

// literal is an argument as an SQL literal, for EXECUTE (which takes no
// parameters of its own).
func literal(t *testing.T, v any) string {
	t.Helper()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch a := v.(type) {
	case nil:
		return "NULL"
	case string:
		return quote(a)
	case *string:
		if a == nil {
			return "NULL"
		}
		return quote(*a)
	case int, int32, int64, bool:
		return fmt.Sprint(a)
	case float64:
		return strconv.FormatFloat(a, 'g', -1, 64)
	case time.Time:
		return quote(a.Format(time.RFC3339Nano))
	case time.Duration:
		return quote(fmt.Sprintf("%d microseconds", a.Microseconds()))
	case []byte:
		return quote(`\x` + hex.EncodeToString(a))
	case []string:
		elems := make([]string, len(a))
		for i, e := range a {
			elems[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e) + `"`
		}
		return quote("{" + strings.Join(elems, ",") + "}")
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return quote(rv.String()) // the shared words: storeprint.Status, AuditAction...
	}
	t.Fatalf("no literal for %T", v)
	return ""
}

// setupURL is a new database with the schema.
func setupURL(t *testing.T) string {
	t.Helper()
	return setup(t).url
}

// No statement filters with "$n IS NULL OR col = $n": pgx caches every
// statement, and the generic plan of such a catch-all reads the table
// whatever the value. A filter that may be left out is written into the
// SQL only when present (see stmt).
func TestHQQueries_NoCatchAllFilters(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	catchAll := regexp.MustCompile(`(?i)\$\d+(::\w+)?\s*\)?\s+IS\s+NULL\s+OR\b`)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if catchAll.MatchString(line) {
				t.Errorf("%s:%d: a catch-all filter: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}
