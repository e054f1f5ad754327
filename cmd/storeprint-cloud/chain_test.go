package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	cloudhttp "github.com/storeprint/storeprint/cloud/http"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/internal/openapitest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/internal/testwatch"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// The whole chain: real gateway processes, real cloud programs, a real
// PostgreSQL, real websockets, simulated printers.

func gatewayBinary(t testing.TB) string {
	return testbin.Build(t, "github.com/storeprint/storeprint/cmd/storeprint-gateway")
}

// apis checks every exchange of these tests against the OpenAPI document
// of the server it goes to: each cloud node and gateway registers its
// address as it starts.
var (
	apis       = openapitest.NewHosts(&nethttp.Transport{MaxIdleConnsPerHost: 32})
	cloudAPI   = openapitest.MustNew("cloud", cloudhttp.OpenAPI)
	gatewayAPI = openapitest.MustNew("gateway", gwhttp.OpenAPI)
	httpc      = &nethttp.Client{Timeout: 30 * time.Second, Transport: apis}
)

// do sends a JSON request and decodes the answer into out.
func do(t testing.TB, tok, method, url string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := nethttp.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, url, data, err)
		}
	}
	return resp.StatusCode
}

// cloudNode is one storeprint-cloud program in this process.
type cloudNode struct {
	m    *Main
	base string
	stop context.CancelFunc
	done chan error
}

func startCloud(t testing.TB, dbURL, addr string, opts ...func(*Main)) *cloudNode {
	t.Helper()
	m, out := newMain(nil)
	if f := os.Getenv("CHAIN_CLOUD_LOG"); f != "" {
		lf, _ := os.OpenFile(f, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		m.Stderr = lf
	}
	if err := m.ParseFlags([]string{"run", "--listen", addr, "--admin-token", adminToken, "--database-url", dbURL}); err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &cloudNode{m: m, stop: cancel, done: make(chan error, 1)}
	go func() { n.done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-n.done:
		t.Fatalf("cloud did not start: %v\n%s", err, out)
	}
	n.base = m.HTTP.URL()
	apis.Add(n.base, cloudAPI)
	t.Cleanup(n.close)
	return n
}

func (n *cloudNode) close() {
	if n.stop == nil {
		return
	}
	n.stop()
	<-n.done
	n.m.Close()
	n.stop = nil
}

// proxy forwards TCP connections and can cut them all at once.
type proxy struct {
	ln     net.Listener
	target string
	mu     stdsync.Mutex
	conns  map[net.Conn]struct{}
	down   bool
}

func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

// Cut drops every open connection.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// SetDown refuses new connections (and cuts the open ones) while down.
func (p *proxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
	if down {
		p.Cut()
	}
}

// store is a tenant, a store and a gateway credential in the cloud.
type store struct {
	id, gatewayID, token string
}

func createStore(t testing.TB, base, tenant, id string) store {
	t.Helper()
	do(t, adminToken, "POST", base+"/v1/admin/tenants", map[string]string{"tenant_id": tenant, "name": tenant}, nil)
	if code := do(t, adminToken, "POST", base+"/v1/admin/stores", map[string]string{"store_id": id, "tenant_id": tenant, "name": id}, nil); code != 201 && code != 200 {
		t.Fatalf("create store: %d", code)
	}
	var gw struct {
		GatewayID string `json:"gateway_id"`
		Token     string `json:"token"`
	}
	if code := do(t, adminToken, "POST", base+"/v1/admin/stores/"+id+"/gateways", map[string]string{"reason": "test"}, &gw); code != 201 {
		t.Fatalf("create gateway: %d", code)
	}
	return store{id: id, gatewayID: gw.GatewayID, token: gw.Token}
}

// gatewayProc is the real gateway program.
type gatewayProc struct {
	*testbin.Gateway
	base  string
	dbURL string // the cloud's database, for failure messages
}

const posToken = "chain-pos-token"

func startGateway(t testing.TB, st store, cloudAddr string, printers map[string]string) *gatewayProc {
	t.Helper()
	return startGatewayIn(t, st, cloudAddr, printers, filepath.Join(t.TempDir(), "data"))
}

// startGatewayIn is startGateway on a data dir of the test's choosing.
func startGatewayIn(t testing.TB, st store, cloudAddr string, printers map[string]string, dataDir string) *gatewayProc {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = %q\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n", st.id, dataDir, posToken)
	fmt.Fprintf(&b, "[cloud]\nurl = \"ws://%s/v1/sync\"\ninsecure = true\ngateway_id = %q\ntoken = %q\n", cloudAddr, st.gatewayID, st.token)
	for id, addr := range printers {
		fmt.Fprintf(&b, "\n[[printers]]\nid = %q\ndriver = \"tcp\"\naddress = %q\nconfirm_timeout = \"3s\"\n", id, addr)
	}
	for id := range printers {
		fmt.Fprintf(&b, "\n[[stations]]\nname = %q\nprinter = %q\n", strings.TrimSuffix(id, "-1"), id)
	}
	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	g := testbin.StartGateway(t, gatewayBinary(t), cfg)
	apis.Add(g.Base, gatewayAPI)
	return &gatewayProc{Gateway: g, base: g.Base}
}

// describeEvents says what the cloud stored, for failure messages.
func describeEvents(t testing.TB, dbURL string) string {
	if dbURL == "" {
		return "?"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err.Error()
	}
	defer conn.Close(ctx)
	var cursor, n, lo, hi int64
	err = conn.QueryRow(ctx, `SELECT c.seq - c.seq_offset, count(e.seq), coalesce(min(e.seq), 0), coalesce(max(e.seq), 0)
		FROM (SELECT * FROM gateway_cursors ORDER BY rank DESC LIMIT 1) c
		LEFT JOIN task_events e ON e.store_id = c.store_id AND e.gateway_id = c.gateway_id AND e.seq > c.seq
		GROUP BY c.seq, c.seq_offset`).Scan(&cursor, &n, &lo, &hi)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("cursor %d, %d events above it (seq %d..%d)", cursor, n, lo, hi)
}

type linkState struct {
	Cloud struct {
		Connected bool   `json:"connected"`
		Cursor    uint64 `json:"cursor"`
		LastSeq   uint64 `json:"last_seq"`
		Pending   uint64 `json:"pending"`
	} `json:"cloud"`
}

// waitSynced waits until the cloud acknowledged every event of the gateway
// and no task is still moving.
func waitSynced(t testing.TB, g *gatewayProc, timeout time.Duration) {
	t.Helper()
	var last linkState
	open := false
	defer func() {
		if t.Failed() {
			t.Logf("not synced: link %+v, open tasks: %t; cloud: %s", last.Cloud, open, describeEvents(t, g.dbURL))
		}
	}()
	waitGateway(t, g, timeout, func() (bool, string) {
		var h linkState
		do(t, posToken, "GET", g.base+"/healthz", nil, &h)
		open = false
		for _, s := range []string{"queued", "printing", "retry_wait"} {
			var ts []struct{}
			do(t, posToken, "GET", g.base+"/v1/tasks?limit=1&status="+s, nil, &ts)
			open = open || len(ts) > 0
		}
		last = h
		if !h.Cloud.Connected || h.Cloud.Pending != 0 || open {
			return false, fmt.Sprintf("not synced: link %+v, open tasks: %t", h.Cloud, open)
		}
		// One more look: nothing was written between the two reads.
		var h2 linkState
		do(t, posToken, "GET", g.base+"/healthz", nil, &h2)
		return h2.Cloud.Pending == 0 && h2.Cloud.LastSeq == h.Cloud.LastSeq, fmt.Sprintf("still writing: link %+v", h2.Cloud)
	})
}

// waitGateway waits for cond to hold, checking it again every time the
// gateway says something changed (its tasks, printers, link or disk).
func waitGateway(t testing.TB, g *gatewayProc, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	testwatch.Until(t, g.base, posToken, timeout, cond)
}

func startSim(t testing.TB) (*printersim.Printer, string) {
	t.Helper()
	return printertest.StartTCP(t, printersim.Options{})
}

func postOrder(t testing.TB, base, id string, stations ...string) int {
	t.Helper()
	var items []map[string]any
	for _, s := range stations {
		items = append(items, map[string]any{"name": "牛肉面", "qty": 1, "station": s})
	}
	return do(t, posToken, "POST", base+"/v1/orders", map[string]any{"order_id": id, "items": items}, nil)
}

type gwTask struct {
	TaskNo string `json:"task_no"`
	Status string `json:"status"`
}

// countRows answers a count(*) query with the args ($1 and on).
func countRows(t testing.TB, dbURL, query string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// tasksOfStore returns the tasks the gateway holds and the status of every
// task the cloud holds of the store, by task number.
func tasksOfStore(t testing.TB, dbURL string, g *gatewayProc, st store) ([]gwTask, map[string]string) {
	t.Helper()
	var tasks []gwTask
	do(t, posToken, "GET", g.base+"/v1/tasks?limit=100000", nil, &tasks)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT task_no, status FROM print_tasks WHERE store_id = $1`, st.id)
	if err != nil {
		t.Fatal(err)
	}
	cloudStatus := map[string]string{}
	for rows.Next() {
		var no, status string
		if err := rows.Scan(&no, &status); err != nil {
			t.Fatal(err)
		}
		cloudStatus[no] = status
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return tasks, cloudStatus
}

// compare checks that the cloud holds every task of the gateway in the
// gateway's final state, once each, with each task's events in order.
func compare(t testing.TB, dbURL string, g *gatewayProc, st store) int {
	t.Helper()
	tasks, cloudStatus := tasksOfStore(t, dbURL, g, st)
	if len(cloudStatus) != len(tasks) {
		t.Errorf("cloud has %d tasks, the gateway %d", len(cloudStatus), len(tasks))
	}
	for _, tk := range tasks {
		if got := cloudStatus[tk.TaskNo]; got != tk.Status {
			t.Errorf("task %s: cloud says %q, gateway %q", tk.TaskNo, got, tk.Status)
		}
	}
	// Each task's events in order: versions grow with seq.
	disorder := countRows(t, dbURL, `
		SELECT count(*) FROM (
		  SELECT (data->>'version')::bigint < lag((data->>'version')::bigint) OVER (PARTITION BY task_no ORDER BY seq) AS back
		  FROM task_events WHERE store_id = $1 AND kind = 'task') e
		WHERE back`, st.id)
	if disorder != 0 {
		t.Errorf("%d task events out of order", disorder)
	}
	gaps := countRows(t, dbURL, `
		SELECT count(*) FROM (SELECT seq - lag(seq) OVER (ORDER BY seq) AS d FROM task_events WHERE store_id = $1) e
		WHERE d <> 1`, st.id)
	if gaps != 0 {
		t.Errorf("%d gaps in the stored event seqs", gaps)
	}
	return len(tasks)
}

// 2,000 orders with the link cut at random moments and the cloud restarted
// once: afterwards the cloud has every task in the gateway's final state, no
// duplicate rows, and each task's events in order.
func TestChain_ReplayThroughCuts(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	cloudAddr := strings.TrimPrefix(node.base, "http://")
	st := createStore(t, node.base, "t1", "s-replay")
	px := startProxy(t, cloudAddr)
	hot, hotAddr := startSim(t)
	cold, coldAddr := startSim(t)
	g := startGateway(t, st, px.addr(), map[string]string{"hot-1": hotAddr, "cold-1": coldAddr})
	g.dbURL = dbURL

	const orders = 2000
	stop := make(chan struct{})
	cutterDone := make(chan struct{})
	go func() {
		defer close(cutterDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(50+(i*37)%250) * time.Millisecond):
				px.Cut()
			}
		}
	}()
	var wg stdsync.WaitGroup
	next := make(chan int)
	begin := time.Now()
	go func() {
		for i := 0; i < orders; i++ {
			if i == orders/2 {
				// Restart the cloud on the same address while orders flow.
				node.close()
				node = startCloud(t, dbURL, cloudAddr)
			}
			next <- i
		}
		close(next)
	}()
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				stations := []string{"hot"}
				if i%2 == 1 {
					stations = []string{"hot", "cold"}
				}
				if code := postOrder(t, g.base, fmt.Sprintf("r%04d", i), stations...); code != 201 {
					t.Errorf("order %d: %d", i, code)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("orders accepted after %s", time.Since(begin).Round(time.Millisecond))
	close(stop)
	<-cutterDone
	// 3,000 tickets on two simulators and 18,000 events through a cut
	// link: minutes when the machine's cores are busy with other work.
	waitSynced(t, g, 6*time.Minute)
	t.Logf("synced after %s", time.Since(begin).Round(time.Millisecond))
	n := compare(t, dbURL, g, st)
	if want := orders + orders/2; n != want {
		t.Errorf("got %d tasks, want %d", n, want)
	}
	if got := len(hot.Printed()) + len(cold.Printed()); got != n {
		t.Errorf("got %d tickets on paper, want %d", got, n)
	}
}

// The cloud down for the whole of 500 orders: all printed in the store;
// when the cloud returns it catches up.
func TestChain_CloudDown(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-down")
	px := startProxy(t, strings.TrimPrefix(node.base, "http://"))
	hot, hotAddr := startSim(t)
	g := startGateway(t, st, px.addr(), map[string]string{"hot-1": hotAddr})
	px.SetDown(true)
	for i := 0; i < 500; i++ {
		if code := postOrder(t, g.base, fmt.Sprintf("d%03d", i), "hot"); code != 201 {
			t.Fatalf("order %d: %d", i, code)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := hot.WaitPrinted(ctx, 500); err != nil {
		t.Fatalf("printed %d of 500 with the cloud down: %v", len(hot.Printed()), err)
	}
	px.SetDown(false)
	waitSynced(t, g, time.Minute)
	if n := compare(t, dbURL, g, st); n != 500 {
		t.Fatalf("got %d tasks, want 500", n)
	}
}

// A cloud-originated order is on paper in the store while online (the
// time is logged; the aim is under 1 s); one posted while the store is cut
// off prints once after it reconnects. Two cloud nodes on one database: an
// order posted on the node the gateway is not connected to still arrives.
func TestChain_CloudOrders(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node1 := startCloud(t, dbURL, "127.0.0.1:0")
	node2 := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node1.base, "t1", "s-cloud")
	px := startProxy(t, strings.TrimPrefix(node1.base, "http://"))
	hot, hotAddr := startSim(t)
	g := startGateway(t, st, px.addr(), map[string]string{"hot-1": hotAddr})
	waitSynced(t, g, 30*time.Second)

	order := func(node *cloudNode, id string) {
		t.Helper()
		body := map[string]any{"order_id": id, "table": "外卖", "items": []map[string]any{{"name": "外卖套餐", "qty": 1, "station": "hot"}}}
		if code := do(t, adminToken, "POST", node.base+"/v1/stores/"+st.id+"/orders", body, nil); code != 201 {
			t.Fatalf("cloud order %s: %d", id, code)
		}
	}
	waitPaper := func(n int, within time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		if _, err := hot.WaitPrinted(ctx, n); err != nil {
			t.Fatalf("%d tickets within %s: got %d", n, within, len(hot.Printed()))
		}
	}
	for i, node := range []*cloudNode{node1, node2} {
		start := time.Now()
		order(node, fmt.Sprintf("online-%d", i))
		waitPaper(i+1, 10*time.Second) // the time is logged; the bound only stops a hung test
		t.Logf("cloud order via node %d on paper after %s", i+1, time.Since(start).Round(time.Millisecond))
	}

	px.SetDown(true)
	order(node2, "offline-1")
	px.SetDown(false)
	waitPaper(3, 30*time.Second)
	waitSynced(t, g, 30*time.Second)
	if n := len(hot.Printed()); n != 3 {
		t.Fatalf("got %d tickets, want 3", n)
	}
	var task struct {
		Status string `json:"status"`
	}
	do(t, adminToken, "GET", node2.base+"/v1/stores/"+st.id+"/tasks/order_offline-1_station_hot", nil, &task)
	if task.Status != "done" {
		t.Fatalf("cloud sees the offline order as %q, want done", task.Status)
	}
}

// A revoked gateway's open link is cut at once and not let back in;
// printing in the store goes on.
func TestChain_Revoke(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-revoke")
	hot, hotAddr := startSim(t)
	g := startGateway(t, st, strings.TrimPrefix(node.base, "http://"), map[string]string{"hot-1": hotAddr})
	waitSynced(t, g, 30*time.Second)
	if code := do(t, adminToken, "DELETE", node.base+"/v1/admin/gateways/"+st.gatewayID, map[string]string{"reason": "stolen"}, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	waitLink(t, g, false)
	postOrder(t, g.base, "after-revoke", "hot")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := hot.WaitPrinted(ctx, 1); err != nil {
		t.Fatal("the store stopped printing after its gateway was revoked")
	}
	// The node lets go of the link once it has written the gateway
	// offline, which may come after the gateway saw the link close.
	waitFor(t, 10*time.Second, "the node lets go of the revoked link", func() bool { return node.m.Sync.Links() == 0 })
}
