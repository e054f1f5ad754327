package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/internal/openapitest"
	"github.com/storeprint/storeprint/internal/testwatch"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// The tests of this package serve a real gateway on a real Badger store,
// with printers on the printer simulator over real sockets.

const token = "test-token-123"

// sim is a simulated printer on a real loopback socket.
type sim struct {
	*printersim.Printer
	addr string
}

func startSim(t testing.TB, fault printersim.Fault) *sim {
	t.Helper()
	p, addr := printertest.StartTCP(t, printersim.Options{Fault: fault})
	return &sim{Printer: p, addr: addr}
}

// printerConf is one [[printers]] entry of a test configuration.
type printerConf struct {
	id, addr, onUncertain, backup, extra string
}

type stationConf struct {
	name, printer, staleAfter string
}

// config is a test configuration (TOML) with its data in dataDir.
func config(t testing.TB, dataDir string, printers []printerConf, stations []stationConf) string {
	t.Helper()
	return configTop(t, dataDir, "", printers, stations)
}

// configTop is config with more top-level keys (TOML lines).
func configTop(t testing.TB, dataDir, top string, printers []printerConf, stations []stationConf) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = \"store-test\"\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n%s", dataDir, token, top)
	for _, p := range printers {
		fmt.Fprintf(&b, "\n[[printers]]\nid = %q\ndriver = \"tcp\"\naddress = %q\nconnect_timeout = \"1s\"\nconfirm_timeout = \"2s\"\n", p.id, p.addr)
		if p.onUncertain != "" {
			fmt.Fprintf(&b, "on_uncertain = %q\n", p.onUncertain)
		}
		if p.backup != "" {
			fmt.Fprintf(&b, "backup = %q\n", p.backup)
		}
		b.WriteString(p.extra)
	}
	for _, s := range stations {
		fmt.Fprintf(&b, "\n[[stations]]\nname = %q\nprinter = %q\n", s.name, s.printer)
		if s.staleAfter != "" {
			fmt.Fprintf(&b, "stale_after = %q\n", s.staleAfter)
		}
	}
	return b.String()
}

// gatewayConfig is a test configuration (TOML) with the given
// [[printers]] bodies (every key but the timeouts) and [[stations]]
// bodies, and more top-level keys in extra.
func gatewayConfig(t testing.TB, dataDir string, printers []string, stations []string, extra string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = \"store-test\"\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n%s", dataDir, token, extra)
	for _, p := range printers {
		fmt.Fprintf(&b, "\n[[printers]]\n%s\nconnect_timeout = \"1s\"\nconfirm_timeout = \"2s\"\n", strings.TrimSpace(p))
	}
	for _, s := range stations {
		fmt.Fprintf(&b, "\n[[stations]]\n%s\n", strings.TrimSpace(s))
	}
	return b.String()
}

// gw is a gateway served over HTTP: set Clock or Stderr before it starts.
type gw struct {
	Clock  clock.Clock // the system's when nil
	Stderr io.Writer   // the log, as text; discarded when nil
	HTTP   *gwhttp.Server
}

// runGateway serves a gateway with the configuration cfg (TOML) on
// 127.0.0.1 until the test ends; each opt may change it before it starts.
// It returns the gateway and its base URL.
func runGateway(t testing.TB, cfg string, opts ...func(*gw)) (*gw, string) {
	t.Helper()
	m := &gw{}
	for _, o := range opts {
		o(m)
	}
	c, err := toml.Parse(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logTo := m.Stderr
	if logTo == nil {
		logTo = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logTo, nil))
	store, err := badger.Open(c.DataDir, badger.Options{Logger: log, MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	printers := map[string]gateway.Printer{}
	for _, pc := range c.Printers {
		printers[pc.ID] = tcp.New(pc, c.StoreID)
	}
	g, err := gateway.New(c, store, printers, gateway.Options{Logger: log, Clock: m.Clock})
	if err != nil {
		t.Fatal(err)
	}
	store.OnHealthChange(g.Notify)
	store.OnQuietSync(g.Notify)
	m.HTTP = &gwhttp.Server{
		Config: c, Tokens: c.APITokens, Logger: log, Now: g.Now,
		Health: g, Changes: g, OrderService: g, TaskService: g, PrinterService: g, AuditService: g,
		DeviceService: g, BoardService: g, DisplayService: g,
		Storage: storage{store, c.StoreID}, Backup: storage{store, c.StoreID},
		// No CloudPRNT printer: every poll is answered as wrong credentials.
		CloudPRNT: cloudprnt.NewServer(cloudprnt.ServerOptions{Logger: log, Now: g.Now}),
	}
	if err := m.HTTP.Listen(c.Listen); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gdone, hdone := make(chan error, 1), make(chan error, 1)
	go func() { gdone <- g.Run(ctx) }()
	go func() { hdone <- m.HTTP.Serve() }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if err := m.HTTP.Shutdown(sctx); err != nil {
			t.Errorf("shut down: %v", err)
		}
		cancel()
		for _, done := range []chan error{hdone, gdone} {
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
		for id, p := range printers {
			if err := p.Close(); err != nil {
				t.Errorf("close printer %s: %v", id, err)
			}
		}
		if err := store.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return m, m.HTTP.URL()
}

// storage is the Badger store as the program shows it and backs it up.
type storage struct {
	db      *badger.DB
	storeID string
}

func (s storage) StorageState() gwhttp.StorageState {
	return gwhttp.StorageState{Disk: (*gwhttp.DiskState)(s.db.Disk()), Recovery: (*gwhttp.Recovery)(s.db.Recovery())}
}

func (s storage) WriteBackup(w io.Writer) error {
	_, err := s.db.Backup(w, s.storeID)
	return err
}

// api checks every exchange of these tests against the POS API's OpenAPI
// document.
var api = openapitest.MustNew("gateway", gwhttp.OpenAPI)

// client keeps connections alive like a POS terminal does; every request
// and answer must match the OpenAPI document.
var client = &http.Client{Timeout: 30 * time.Second, Transport: api.Transport(&http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute})}

// call sends a request with the test token and decodes a JSON answer.
func call(t testing.TB, method, url string, body any, out any) int {
	t.Helper()
	return callToken(t, token, method, url, body, out)
}

func callToken(t testing.TB, tok, method, url string, body any, out any) int {
	t.Helper()
	return callWith(t, client, tok, method, url, body, out)
}

// callWith is callToken through another client.
func callWith(t testing.TB, c *http.Client, tok, method, url string, body any, out any) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, url, data, err)
		}
	}
	return resp.StatusCode
}

func newJSONRequest(method, url string, body any) (*http.Request, error) {
	j, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(j))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

type taskJSON struct {
	TaskNo     string `json:"task_no"`
	Status     string `json:"status"`
	PrinterID  string `json:"printer_id"`
	Attempt    int    `json:"attempt"`
	LastError  string `json:"last_error"`
	Reason     string `json:"reason"`
	BackupFrom string `json:"backup_from"`
}

type orderJSON struct {
	OrderID string `json:"order_id"`
	Tasks   []struct {
		TaskNo    string `json:"task_no"`
		Station   string `json:"station"`
		PrinterID string `json:"printer_id"`
		Status    string `json:"status"`
	} `json:"tasks"`
}

func order(id string, stations ...string) map[string]any {
	var items []map[string]any
	for i, s := range stations {
		items = append(items, map[string]any{"name": fmt.Sprintf("宫保鸡丁 %d", i), "qty": i + 1, "station": s, "note": "少辣"})
	}
	return map[string]any{"order_id": id, "table": "A1", "items": items}
}

func getTask(t testing.TB, base, taskNo string) taskJSON {
	t.Helper()
	var tj taskJSON
	if code := call(t, "GET", base+"/v1/tasks/"+taskNo, nil, &tj); code != 200 {
		t.Fatalf("GET task %s: status %d", taskNo, code)
	}
	return tj
}

// waitUntil waits for cond on the gateway's changes, failing after
// timeout with cond's last word.
func waitUntil(t testing.TB, base string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	testwatch.Until(t, base, token, timeout, cond)
}

// waitStatus waits until the task reaches status, failing after timeout.
func waitStatus(t testing.TB, base, taskNo, status string, timeout time.Duration) taskJSON {
	t.Helper()
	var tj taskJSON
	waitUntil(t, base, timeout, func() (bool, string) {
		tj = getTask(t, base, taskNo)
		return tj.Status == status, fmt.Sprintf("task %s is %s (last error %q), want %s", taskNo, tj.Status, tj.LastError, status)
	})
	return tj
}

// settle waits until no task is queued, printing or waiting to retry.
func settle(t testing.TB, base string, timeout time.Duration) []taskJSON {
	t.Helper()
	var all []taskJSON
	waitUntil(t, base, timeout, func() (bool, string) {
		all = nil
		call(t, "GET", base+"/v1/tasks?limit=100000", nil, &all)
		open := 0
		for _, tj := range all {
			switch tj.Status {
			case "queued", "printing", "retry_wait":
				open++
			}
		}
		return open == 0, fmt.Sprintf("%d tasks still open", open)
	})
	return all
}

func countPaper(tickets []printersim.Ticket, taskNo string) int {
	n := 0
	for _, tk := range tickets {
		if tk.TaskNo == taskNo {
			n++
		}
	}
	return n
}

// waitPrinted waits for n tickets on the simulator's paper.
func waitPrinted(t testing.TB, s *sim, n int, timeout time.Duration) []printersim.Ticket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	got, err := s.WaitPrinted(ctx, n)
	if err != nil {
		t.Fatalf("waiting for %d tickets: got %d: %v", n, len(s.Printed()), err)
	}
	return got
}

// movingClock is the wall clock moved forward by hand: time passes as
// usual for the dispatcher, and a test can jump past a pairing code's
// ten minutes without waiting for them.
type movingClock struct {
	clock.Real
	ahead atomic.Int64
}

func (c *movingClock) Now() time.Time      { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *movingClock) Add(d time.Duration) { c.ahead.Add(int64(d)) }

// lockedBuffer collects a log from many goroutines.
type lockedBuffer struct {
	mu stdsync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
