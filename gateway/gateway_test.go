package gateway_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/sync"
)

// pausing is a driver whose first Print stops before doing anything until
// released, like a worker paused by the OS or a stuck driver, then goes on
// ignoring its deadline.
type pausing struct {
	gateway.Printer
	entered  chan *gateway.PrintJob
	release  chan struct{}
	returned chan error
	calls    int
}

func (p *pausing) Print(ctx context.Context, job *gateway.PrintJob) error {
	p.calls++
	if p.calls > 1 {
		return p.Printer.Print(ctx, job)
	}
	p.entered <- job
	<-p.release
	err := p.Printer.Print(context.Background(), job)
	p.returned <- err
	return err
}

// openStore completes and checks cfg as the gateway's start does, and
// opens a real Badger store for it in the test's temporary directory.
func openStore(t *testing.T, cfg *gateway.Config) *badger.DB {
	t.Helper()
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	store, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func setup(t *testing.T, printer func(gateway.Printer) gateway.Printer) (*gateway.Gateway, *printersim.Printer, gateway.Store) {
	t.Helper()
	sim, addr := printertest.StartTCP(t, printersim.Options{})

	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: addr,
			ConnectTimeout: gateway.Duration{Duration: time.Second}, ConfirmTimeout: gateway.Duration{Duration: time.Second}}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	store := openStore(t, cfg)
	p := printer(tcp.New(cfg.Printers[0], cfg.StoreID))
	g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": p}, gateway.Options{
		LeaseMargin: 400 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	store.OnQuietSync(g.Notify)
	runGateway(t, g)
	return g, sim, store
}

// A stale worker (paused past its lease, then resumed) can neither
// overwrite the newer attempt nor print.
func TestGateway_StaleWorker(t *testing.T) {
	t.Parallel()
	pp := &pausing{entered: make(chan *gateway.PrintJob, 1), release: make(chan struct{}), returned: make(chan error, 1)}
	g, sim, _ := setup(t, func(p gateway.Printer) gateway.Printer { pp.Printer = p; return pp })
	ctx := context.Background()
	if _, _, err := g.AcceptOrder(ctx, &storeprint.Order{OrderID: "o1", Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	no := storeprint.TaskNo("o1", "hot")
	leased, stopLeased := g.Subscribe()
	defer stopLeased()
	<-pp.entered
	// The lease rides on the next sync: the store syncs it when quiet.
	first, err := g.Task(ctx, no)
	for err == nil && first.Status == storeprint.StatusQueued {
		<-leased
		first, err = g.Task(ctx, no)
	}
	if err != nil {
		t.Fatal(err)
	}
	if first.Attempt != 1 || first.Status != storeprint.StatusPrinting {
		t.Fatalf("got attempt %d %s, want attempt 1 printing", first.Attempt, first.Status)
	}
	oldToken := first.LeaseToken

	// The lease runs out; the gateway settles the attempt (nothing was
	// prepared, so nothing was sent) and a new attempt prints.
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got, err := sim.WaitPrinted(tctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	changes, stop := g.Subscribe()
	defer stop()
	var done *gateway.Task
	for {
		if done, err = g.Task(ctx, no); err != nil {
			t.Fatal(err)
		}
		if done.Status == storeprint.StatusDone {
			break
		}
		select {
		case <-changes:
		case <-tctx.Done():
			t.Fatalf("task not done: %+v", done)
		}
	}
	if done.Attempt != 2 || got[0].TaskNo != no {
		t.Fatalf("got attempt %d and paper %v, want attempt 2 on paper", done.Attempt, got)
	}

	// The stale worker resumes: its final fence refuses to print.
	close(pp.release)
	perr := <-pp.returned
	if gateway.Outcome(perr) != gateway.PrintNotSent {
		t.Fatalf("stale worker's print: got %v, want not sent (fenced)", perr)
	}
	if n := len(sim.Printed()); n != 1 {
		t.Fatalf("got %d tickets, want 1", n)
	}
	// Nor can it overwrite the newer attempt's outcome.
	if err := g.StaleComplete(ctx, no, 1, oldToken); err == nil {
		t.Fatal("stale completion accepted")
	}
	if err := g.StaleRelease(ctx, no, 1, oldToken); err == nil {
		t.Fatal("stale release accepted")
	}
	after, _ := g.Task(ctx, no)
	if after.Status != storeprint.StatusDone || after.Attempt != 2 || after.Version != done.Version {
		t.Fatalf("got %s attempt %d version %d, want the newer attempt's state unchanged (version %d)", after.Status, after.Attempt, after.Version, done.Version)
	}
	rs, err := g.Receipts(ctx, no)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Attempt != 2 || rs[0].State != storeprint.ReceiptPrinted {
		t.Fatalf("got receipts %+v, want only attempt 2 printed", rs)
	}
	if errors.Is(perr, context.Canceled) {
		t.Fatal("want a fence refusal, not a cancellation")
	}
}

// A command from HQ is applied once, durably, with the HQ operator's name
// (cut to 64 characters, never mid-character); a replay does nothing.
func TestGateway_ApplyDown(t *testing.T) {
	t.Parallel()
	g, sim, _ := setup(t, func(p gateway.Printer) gateway.Printer { return p })
	ctx := context.Background()
	if _, _, err := g.AcceptOrder(ctx, &storeprint.Order{OrderID: "o1", Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	no := storeprint.TaskNo("o1", "hot")
	operator := strings.Repeat("张", 70)
	cmds := []sync.Command{{Seq: 1, ID: "c1", Kind: storeprint.CommandReprint, TaskNo: no, Operator: operator, Reason: "dropped"}}
	for i := 0; i < 2; i++ {
		cur, err := g.ApplyDown(ctx, cmds, 0)
		if err != nil || cur != 1 {
			t.Fatalf("apply %d: got cursor %d, %v; want 1", i, cur, err)
		}
	}
	if _, err := g.Task(ctx, no+"_copy_1"); err != nil {
		t.Fatalf("the copy was not made: %v", err)
	}
	if _, err := g.Task(ctx, no+"_copy_2"); err == nil {
		t.Fatal("a replayed command made a second copy")
	}
	audit, err := g.Audit(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || !utf8.ValidString(audit[0].Operator) || utf8.RuneCountInString(audit[0].Operator) != 64 {
		t.Fatalf("got audit %+v, want one entry with a 64-character operator", audit)
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := sim.WaitPrinted(tctx, 2); err != nil {
		t.Fatal(err)
	}
}

// runGateway runs g until the test ends.
func runGateway(t testing.TB, g *gateway.Gateway) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
