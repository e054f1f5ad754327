package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/internal/openapitest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

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

func writeConfig(t testing.TB, dataDir string, printers []printerConf, stations []stationConf) string {
	t.Helper()
	return writeConfigTop(t, dataDir, "", printers, stations)
}

// writeConfigTop is writeConfig with more top-level keys (TOML lines).
func writeConfigTop(t testing.TB, dataDir, top string, printers []printerConf, stations []stationConf) string {
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
	path := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runGateway runs the real program in this process until the test ends;
// each opt may change the program before it starts.
func runGateway(t testing.TB, cfgPath string, opts ...func(*Main)) (*Main, string) {
	t.Helper()
	m, stop := startGateway(t, cfgPath, opts...)
	t.Cleanup(stop)
	return m, m.HTTP.URL()
}

// startGateway starts the real program in this process and returns it
// with the function that stops it, for a test that restarts it.
func startGateway(t testing.TB, cfgPath string, opts ...func(*Main)) (*Main, func()) {
	t.Helper()
	m := NewMain()
	m.Stderr = io.Discard
	if testing.Verbose() {
		m.Stderr = os.Stderr
	}
	for _, o := range opts {
		o(m)
	}
	if err := m.ParseFlags([]string{"run", "--config", cfgPath}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("gateway did not start: %v", err)
	}
	return m, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway run: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("gateway close: %v", err)
		}
	}
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
	case []byte:
		r = bytes.NewReader(b)
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

func countPaper(tickets []printersim.Ticket, taskNo string) int {
	n := 0
	for _, tk := range tickets {
		if tk.TaskNo == taskNo {
			n++
		}
	}
	return n
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

// movingClock is the wall clock moved forward by hand: time passes as
// usual for the dispatcher, and a test can jump past a pairing code's
// ten minutes without waiting for them.
type movingClock struct {
	clock.Real
	ahead atomic.Int64
}

func (c *movingClock) Now() time.Time      { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *movingClock) Add(d time.Duration) { c.ahead.Add(int64(d)) }

// lockedBuffer collects a program's log from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
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

type printerJSON struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	Stations  []string `json:"stations"`
	Backup    string   `json:"backup"`
	Queue     int      `json:"queue"`
	InTrouble bool     `json:"in_trouble"`
	NoBackup  bool     `json:"no_backup_ready"`
	Word      string   `json:"word"`
	Failover  *struct {
		Active       bool   `json:"active"`
		Backup       string `json:"backup"`
		Acknowledged bool   `json:"acknowledged"`
	} `json:"failover"`
}

func getPrinter(t testing.TB, base, id string) printerJSON {
	t.Helper()
	var ps []printerJSON
	if code := call(t, "GET", base+"/v1/printers", nil, &ps); code != 200 {
		t.Fatalf("GET /v1/printers: %d", code)
	}
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("printer %s not listed", id)
	return printerJSON{}
}

func waitPrinter(t testing.TB, base, id string, timeout time.Duration, ok func(printerJSON) bool) printerJSON {
	t.Helper()
	var p printerJSON
	waitUntil(t, base, timeout, func() (bool, string) {
		p = getPrinter(t, base, id)
		return ok(p), fmt.Sprintf("printer %s is %+v, not as wanted", id, p)
	})
	return p
}

var staff = map[string]string{"operator": "amy", "reason": "checked at the pass"}

// within runs browser actions, failing the test after d.
func within(t *testing.T, ctx context.Context, d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s (within %s): %v", what, d, err)
	}
}
