package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/cups"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/internal/wine"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The Windows build on a real spooler: storeprint-gateway.exe under Wine,
// its spooler printer a CUPS raw queue to a simulated printer, exactly as
// docs/windows.md describes. Wine's winspool.drv is a real spooler API
// (OpenPrinter, StartDocPrinter RAW, WritePrinter, EndDocPrinter, GetJob),
// so this is the Windows code path the fake spooler cannot show.
//
// Where Wine is not Windows, the test holds Wine to what it does, not to
// what Windows would do (the fake spooler in winspooltest keeps the
// outcome logic):
//   - Wine forgets a job once it is handed to CUPS, and GetJobW then fails
//     without an error code: the driver reads that as "the spooler no
//     longer knows the job", and the ticket, on paper, is
//     attention_required even with trust_spooler, as for a job gone from a
//     Windows queue that does not keep printed documents. After two such
//     tickets the printer is in trouble: it does not confirm its prints.
//   - Wine runs its service manager outside session 0, so a Go program it
//     starts does not know it is a service: install, status and uninstall
//     work; start launches the registered command line, which serves, but
//     the service manager's start request times out and the service stays
//     "stopped"; stop finds nothing to stop.
func TestWine(t *testing.T) {
	if testing.Short() {
		t.Skip("the Windows build under Wine with a CUPS raw queue: slow")
	}
	t.Parallel()
	began := time.Now()
	dir := t.TempDir()

	// The cross-build runs while Wine makes its prefix.
	exe := filepath.Join(dir, "storeprint-gateway.exe")
	built := make(chan error, 1)
	buildDone := make(chan struct{})
	go func() {
		defer close(buildDone)
		built <- wine.Build("github.com/storeprint/storeprint/cmd/storeprint-gateway", exe)
	}()
	t.Cleanup(func() { <-buildDone })

	printer := startRecordingSim(t)
	srv := cups.Start(t)
	srv.AddRawQueue(t, "kitchen", "socket://"+printer.Addr)
	prefix := wine.NewPrefix(t, srv.Env()...)
	t.Logf("cupsd and the Wine prefix ready after %s", time.Since(began).Round(time.Millisecond))
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	t.Logf("storeprint-gateway.exe built after %s", time.Since(began).Round(time.Millisecond))
	// cupsd ending during the test is the first thing to know.
	t.Cleanup(func() {
		select {
		case <-srv.Exited:
			t.Errorf("cupsd ended during the test:\n%s", srv.Log())
		default:
		}
	})

	cfg := writeWineConfig(t, dir, "data", "127.0.0.1:0")
	run := func(t *testing.T) *testbin.Gateway {
		t.Helper()
		return testbin.StartGatewayCmd(t, prefix.Command(context.Background(), exe, "run", "--config", cfg))
	}
	g := run(t)
	base := g.Base
	t.Logf("gateway serving under Wine after %s", time.Since(began).Round(time.Millisecond))

	// Two orders: under Wine every ticket ends uncertain, and after
	// suspect_after (2) of them the printer is in trouble and gets no more
	// tickets by itself.
	orders := []struct{ id, name, note string }{
		{"w1", "宫保鸡丁", "少辣"},
		{"w2", "Fried rice", "no egg"},
	}
	for _, o := range orders {
		body := map[string]any{"order_id": o.id, "table": "A3", "items": []map[string]any{{"name": o.name, "qty": 2, "station": "hot", "note": o.note}}}
		if code := gatewaytest.Call(t, "POST", base+"/v1/orders", body, nil); code != http.StatusCreated {
			t.Fatalf("POST order %s: got %d, want 201", o.id, code)
		}
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("g1", "ghost"), nil); code != http.StatusCreated {
		t.Fatalf("POST order g1: got %d, want 201", code)
	}

	t.Run("Print", func(t *testing.T) {
		paper := gatewaytest.WaitPrinted(t, printer.Sim, len(orders), time.Minute)
		jobs := printer.waitJobs(t, len(orders), time.Minute)
		jobIDs := map[string]bool{}
		for _, o := range orders {
			taskNo := "order_" + o.id + "_station_hot"
			task := gatewaytest.WaitStatus(t, base, taskNo, "attention_required", time.Minute)
			if task.Reason != "uncertain" || !strings.Contains(task.LastError, "left the queue") || !strings.Contains(task.LastError, "Keep printed documents") {
				t.Errorf("task %s: got reason %q, last error %q; want uncertain: the job left Wine's queue, turn on Keep printed documents",
					taskNo, task.Reason, task.LastError)
			}

			var receipts []receiptJSON
			if code := gatewaytest.Call(t, "GET", base+"/v1/tasks/"+taskNo+"/receipts", nil, &receipts); code != http.StatusOK || len(receipts) != 1 {
				t.Fatalf("receipts of %s: got %d %+v, want one", taskNo, code, receipts)
			}
			r := receipts[0]
			if r.State != "submitted" || !regexp.MustCompile(`^[0-9]+$`).MatchString(r.JobID) || jobIDs[r.JobID] {
				t.Errorf("receipt of %s: got state %q, job id %q; want submitted with a spooler job id of its own", taskNo, r.State, r.JobID)
			}
			jobIDs[r.JobID] = true
			if n := jobs[r.PayloadSHA256]; n != 1 {
				t.Errorf("receipt of %s: payload sha256 %s reached the printer %d times, want once, byte for byte", taskNo, r.PayloadSHA256, n)
			}

			var ticket *printersim.Ticket
			for i := range paper {
				if paper[i].TaskNo == taskNo {
					ticket = &paper[i]
				}
			}
			if ticket == nil {
				t.Fatalf("no ticket %s on paper: %+v", taskNo, paper)
			}
			if want := "2 x " + o.name; !strings.Contains(ticket.Text, want) || !strings.Contains(ticket.Text, o.note) {
				t.Errorf("ticket %s: got %q, want %q and %q intact", taskNo, ticket.Text, want, o.note)
			}
		}
	})

	t.Run("DoesNotConfirm", func(t *testing.T) {
		p := gatewaytest.WaitPrinter(t, base, "kitchen", time.Minute, func(p gatewaytest.PrinterJSON) bool { return p.InTrouble })
		if p.Word != string(storeprint.WordPrinterNoConfirm) {
			t.Errorf("printer kitchen: got word %q, want %q", p.Word, storeprint.WordPrinterNoConfirm)
		}
	})

	t.Run("UnknownQueue", func(t *testing.T) {
		// "No Such Queue" is not a printer to Wine: OpenPrinterW fails.
		if p := gatewaytest.GetPrinter(t, base, "ghost"); p.Status != "offline" {
			t.Errorf("printer ghost: got status %q, want offline", p.Status)
		}
		if p := gatewaytest.GetPrinter(t, base, "kitchen"); p.Status != "ready" {
			t.Errorf("printer kitchen: got status %q, want ready", p.Status)
		}
		// Not sent, so it waits to be tried again (nothing of it on paper:
		// see CleanStop).
		task := gatewaytest.GetTask(t, base, "order_g1_station_ghost")
		if (task.Status != "queued" && task.Status != "retry_wait") || (task.LastError != "" && !strings.Contains(task.LastError, "Invalid printer name")) {
			t.Errorf("task for the unknown queue: got %q (%s), want it waiting, not sent", task.Status, task.LastError)
		}
	})

	t.Run("CleanStop", func(t *testing.T) {
		// Ctrl-C at the console: Wine turns SIGINT into it.
		if err := g.Interrupt(t, time.Minute); err != nil {
			t.Fatalf("gateway ended with %v, want exit status 0:\n%s", err, g.Log())
		}
		if !strings.Contains(g.Log(), "gateway stopping") {
			t.Errorf("no \"gateway stopping\" in the log:\n%s", g.Log())
		}
		// The store opens again, with every task as it was.
		g2 := run(t)
		for _, o := range orders {
			if task := gatewaytest.GetTask(t, g2.Base, "order_"+o.id+"_station_hot"); task.Status != "attention_required" {
				t.Errorf("after a restart: task of %s is %q, want attention_required", o.id, task.Status)
			}
		}
		if err := g2.Interrupt(t, time.Minute); err != nil {
			t.Fatalf("restarted gateway ended with %v, want exit status 0", err)
		}
		if n := len(printer.Printed()); n != len(orders) {
			t.Errorf("got %d tickets on paper, want %d: nothing for the unknown queue, nothing twice", n, len(orders))
		}
	})
	t.Logf("printed and stopped after %s", time.Since(began).Round(time.Millisecond))

	t.Run("Service", func(t *testing.T) {
		svcAddr := freeAddr(t)
		svcCfg := writeWineConfig(t, dir, "service-data", svcAddr)
		control := func(args ...string) (string, error) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := prefix.Command(ctx, exe, args...).CombinedOutput()
			return string(out), err
		}
		expect := func(want string, wantErr bool, args ...string) {
			t.Helper()
			out, err := control(args...)
			if (err != nil) != wantErr || !strings.Contains(out, want) {
				t.Fatalf("storeprint-gateway.exe %s: got %v, %q; want failed=%v saying %q", strings.Join(args, " "), err, out, wantErr, want)
			}
		}
		expect("installed the service", false, "install", "--config", svcCfg)
		expect("stopped", false, "status")
		// Wine's service manager starts the registered command line, and
		// the gateway serves, but never says to the service manager that
		// it runs: the start request times out.
		type result struct {
			out string
			err error
		}
		started := make(chan result, 1)
		go func() {
			out, err := control("start")
			started <- result{out, err}
		}()
		waitHealthy(t, "http://"+svcAddr, time.Minute)
		if r := <-started; r.err == nil || !strings.Contains(r.out, "Service request timeout") {
			t.Fatalf("storeprint-gateway.exe start: got %v, %q; want the service manager's timeout", r.err, r.out)
		}
		expect("stopped", false, "status")
		expect("Service not active", true, "stop")
		expect("removed the service", false, "uninstall")
		expect("not installed", false, "status")
	})
	t.Logf("done after %s", time.Since(began).Round(time.Millisecond))
}

// writeWineConfig writes a gateway configuration in dir with the spooler
// printers kitchen (the CUPS queue, trusted) and ghost (a queue Wine does
// not have), and returns its Windows path.
func writeWineConfig(t *testing.T, dir, dataDir, listen string) string {
	t.Helper()
	cfg := fmt.Sprintf(`store_id   = "store-wine"
data_dir   = '%s'
listen     = %q
api_tokens = [%q]

[[printers]]
id            = "kitchen"
driver        = "spooler"
address       = "kitchen"
trust_spooler = true

[[printers]]
id            = "ghost"
driver        = "spooler"
address       = "No Such Queue"
trust_spooler = true

[[stations]]
name    = "hot"
printer = "kitchen"

[[stations]]
name    = "ghost"
printer = "ghost"
`, wine.Path(filepath.Join(dir, dataDir)), listen, gatewaytest.Token)
	path := filepath.Join(dir, dataDir+".toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return wine.Path(path)
}

// waitHealthy waits for a gateway to answer /healthz with 200.
func waitHealthy(t *testing.T, base string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%s/healthz: no 200 within %s", base, timeout)
		}
	}
}

// recordingSim is a simulated printer that also keeps the bytes of every
// connection it served. CUPS's socket backend opens one connection per
// job, so each connection holds one job as it reached the printer.
type recordingSim struct {
	*gatewaytest.Sim
	mu      sync.Mutex
	seen    map[string]int // sha256 of a connection's bytes: connections
	n       int            // connections that brought bytes
	changed chan struct{}  // closed and replaced when one more did
}

func startRecordingSim(t *testing.T) *recordingSim {
	t.Helper()
	p, err := printersim.New(printersim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingSim{Sim: &gatewaytest.Sim{Printer: p, Addr: ln.Addr().String()}, seen: map[string]int{}, changed: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.ServeConn(&recordingConn{Conn: c, done: r.add})
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.Close()
	})
	return r
}

func (r *recordingSim) add(b []byte) {
	if len(b) == 0 {
		return
	}
	sum := sha256.Sum256(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[hex.EncodeToString(sum[:])]++
	r.n++
	close(r.changed)
	r.changed = make(chan struct{})
}

// waitJobs waits until n connections brought bytes and returns the sha256
// of each connection's bytes with how many connections brought them.
func (r *recordingSim) waitJobs(t *testing.T, n int, timeout time.Duration) map[string]int {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		got, changed := r.n, r.changed
		seen := map[string]int{}
		for k, v := range r.seen {
			seen[k] = v
		}
		r.mu.Unlock()
		if got >= n {
			if got > n {
				t.Errorf("got %d jobs at the printer, want %d: one per ticket", got, n)
			}
			return seen
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("got %d jobs at the printer within %s, want %d", got, timeout, n)
		}
	}
}

// recordingConn keeps what is read from it and hands it to done on Close.
type recordingConn struct {
	net.Conn
	done func([]byte)
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
}

func (c *recordingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.buf.Write(b[:n])
	c.mu.Unlock()
	return n, err
}

func (c *recordingConn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.done(c.buf.Bytes())
	})
	return c.Conn.Close()
}
