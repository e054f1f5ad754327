package printersim_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// receiptioDir holds the pinned receiptio (package.json and its lock file)
// and the receipt the tests print with it.
const receiptioDir = "../../testdata/printersim/receiptio"

// TestPrinter_Receiptio runs a real ESC/POS client, the receiptio command
// from npm at the version pinned in testdata, against the simulator. It
// asks for the printer's status (DLE EOT), then to print: it waits for the
// printer's maker and model (GS I), enables automatic status back (GS a)
// and waits for it, sends the receipt and waits for its GS r answer.
func TestPrinter_Receiptio(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node and receiptio from npm")
	}
	t.Parallel()
	cli := installReceiptio(t)

	t.Run("Status", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			fault printersim.Fault
			want  string
		}{
			{printersim.FaultNone, "online"},
			{printersim.FaultSlow, "online"},
			{printersim.FaultLostAck, "online"},
			{printersim.FaultPaperEnd, "paperempty"},
			{printersim.FaultCoverOpen, "coveropen"},
		} {
			t.Run(string(tc.fault), func(t *testing.T) {
				t.Parallel()
				_, host := setupReceiptio(t, printersim.Options{Fault: tc.fault})
				if got := runReceiptio(t, cli, host, "-q"); got != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			})
		}
	})

	t.Run("Print", func(t *testing.T) {
		t.Parallel()
		out := &testlog.Buffer{}
		p, host := setupReceiptio(t, printersim.Options{Out: out})
		if got := runReceiptio(t, cli, host, "-l", "zh-hans", filepath.Join(receiptioDir, "ticket.receipt")); got != "success" {
			t.Fatalf("got %q, want success", got)
		}
		var line printersim.Ticket
		if err := json.Unmarshal([]byte(out.String()), &line); err != nil || strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("got out %q (%v), want one JSON line", out.String(), err)
		}
		var lines []string
		for _, l := range strings.Split(line.Text, "\n") {
			lines = append(lines, strings.TrimSpace(l))
		}
		if got, want := strings.Join(lines, "|"), "桌 A3|宫保鸡丁 x 2|少辣||A-0001"; got != want {
			t.Errorf("got text %q, want %q", got, want)
		}
		if line.TaskNo != "A-0001" {
			t.Errorf("got task_no %q, want A-0001", line.TaskNo)
		}
		if got := p.Printed(); len(got) != 1 {
			t.Errorf("got %d tickets printed, want 1", len(got))
		}
	})

	t.Run("PaperEnd", func(t *testing.T) {
		t.Parallel()
		p, host := setupReceiptio(t, printersim.Options{Fault: printersim.FaultPaperEnd})
		if got := runReceiptio(t, cli, host, "-l", "zh-hans", filepath.Join(receiptioDir, "ticket.receipt")); got != "paperempty" {
			t.Fatalf("got %q, want paperempty", got)
		}
		if got := p.Printed(); len(got) != 0 {
			t.Fatalf("got %d tickets printed, want none", len(got))
		}
	})

	t.Run("PaperEndWhilePrinting", func(t *testing.T) {
		t.Parallel()
		// The paper runs out once the receipt is in the printer: only the
		// automatic status back can tell receiptio.
		received := make(chan struct{}, 1)
		p, host := setupReceiptio(t, printersim.Options{
			Fault: printersim.FaultSlow, SlowDelay: time.Hour,
			Logger: slog.New(&signalHandler{msg: "received", ch: received}),
		})
		done := make(chan string, 1)
		go func() {
			done <- runReceiptio(t, cli, host, "-l", "zh-hans", filepath.Join(receiptioDir, "ticket.receipt"))
		}()
		select {
		case <-received:
		case got := <-done:
			t.Fatalf("got %q before the receipt reached the printer", got)
		}
		p.SetFault(printersim.FaultPaperEnd)
		if got := <-done; got != "paperempty" {
			t.Fatalf("got %q, want paperempty", got)
		}
		if got := p.Printed(); len(got) != 0 {
			t.Fatalf("got %d tickets printed, want none", len(got))
		}
	})
}

// installReceiptio installs the pinned receiptio once per lock file into
// the user's cache directory and returns the path of its command.
func installReceiptio(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" (receiptio runs on it)", err, "apt-get install -y nodejs npm")
		}
	}
	pkg, err := os.ReadFile(filepath.Join(receiptioDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(receiptioDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(pkg, lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "storeprint")
	dir := filepath.Join(root, "receiptio-"+hex.EncodeToString(sum[:6]))
	cli := filepath.Join(dir, "node_modules", "receiptio", "bin", "cli.js")
	if _, err := os.Stat(cli); err == nil {
		return cli
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// Install beside it and rename into place, so that a test binary
	// running at the same time never sees half an install.
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci (receiptio, pinned in %s): %v\n%s", receiptioDir, err, b)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(cli); serr != nil {
			t.Fatalf("install receiptio: %v", err)
		}
		// Another test binary installed it first.
	}
	return cli
}

// setupReceiptio starts a simulated printer where receiptio looks for a
// network printer: port 9100, on an address of its own in 127.0.0.0/8 so
// that tests running at the same time do not collide.
func setupReceiptio(t *testing.T, opts printersim.Options) (*printersim.Printer, string) {
	t.Helper()
	p, err := printersim.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var l net.Listener
	for range 50 {
		host := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
		if l, err = net.Listen("tcp", net.JoinHostPort(host, "9100")); err == nil {
			break
		}
	}
	if l == nil {
		t.Fatalf("listen on port 9100 of a loopback address (receiptio only dials port 9100): %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, printersim.ErrClosed) {
			t.Errorf("Serve: got %v after Close, want nil", err)
		}
	})
	host, _, _ := net.SplitHostPort(l.Addr().String())
	return p, host
}

// runReceiptio runs receiptio against the printer at host and returns the
// result it reports (online, success, paperempty...), checked against its
// exit status.
func runReceiptio(t *testing.T, cli, host string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// -t: receiptio's own print timeout, well within the context's.
	cmd := exec.CommandContext(ctx, "node", append([]string{cli, "-d", host, "-t", "30"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	got := strings.TrimSpace(stderr.String())
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Errorf("run receiptio: %v", err)
		return got
	}
	codes := map[string]int{"success": 0, "online": 100, "coveropen": 101, "paperempty": 102, "error": 103, "offline": 104, "disconnect": 105, "timeout": 106}
	if want, ok := codes[got]; !ok || code != want {
		t.Errorf("receiptio said %q with exit status %d", got, code)
	}
	return got
}

// signalHandler is a slog.Handler that signals on ch each record with
// message msg, and drops every record.
type signalHandler struct {
	msg string
	ch  chan struct{}
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *signalHandler) WithGroup(string) slog.Handler      { return h }
