package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// setupRetention runs a gateway and its store on a fake clock.
func setupRetention(t testing.TB, fake *clock.Fake, opts badger.Options, cloud bool) (*gateway.Gateway, *printersim.Printer, *badger.DB, string) {
	t.Helper()
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: addr}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	if cloud {
		cfg.Cloud = &gateway.CloudConfig{URL: "ws://127.0.0.1:1/v1/sync", GatewayID: "gw-1", Token: "t", Insecure: true}
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts.MinFreeBytes, opts.Now = 1, fake.Now
	store, err := badger.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], cfg.StoreID)}, gateway.Options{
		Clock: fake, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	runGateway(t, g)
	return g, sim, store, dir
}

func testOrder(id string) *storeprint.Order {
	return &storeprint.Order{OrderID: id, Table: "A1", Items: []storeprint.Item{{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "少辣"}}}
}

// printed stores n orders of one task each as printed at the clock's now,
// as the gateway would have: accepted, an attempt, the printer's
// confirmation.
func printed(t testing.TB, store gateway.Store, now time.Time, from, n int) {
	t.Helper()
	const chunk = 1000
	for i := from; i < from+n; i += chunk {
		err := store.Update(context.Background(), func(tx gateway.Tx) error {
			for j := i; j < min(i+chunk, from+n); j++ {
				o := testOrder(fmt.Sprintf("o%06d", j))
				no := storeprint.TaskNo(o.OrderID, "hot")
				task := &gateway.Task{TaskNo: no, OrderID: o.OrderID, Station: "hot", PrinterID: "hot-1", FirstPrinter: "hot-1",
					Status: storeprint.StatusQueued, Source: storeprint.SourcePOS, Table: o.Table, Items: o.ItemsFor("hot"),
					Seq: tx.NextTaskSeq(), CreatedAt: now, NextAt: now}
				if err := tx.PutTask(task); err != nil {
					return err
				}
				if err := tx.PutOrder(&gateway.OrderRecord{OrderID: o.OrderID, Digest: o.Digest(), TaskNos: []string{no}, Printers: []string{"hot-1"}, Source: storeprint.SourcePOS, CreatedAt: now}); err != nil {
					return err
				}
				at := now
				if err := tx.PutReceipt(&gateway.Receipt{TaskNo: no, Attempt: 1, State: storeprint.ReceiptPrinted, PrinterID: "hot-1", ProcessID: "1234", PreparedAt: now, PrintedAt: &at}); err != nil {
					return err
				}
				task.Status, task.Attempt, task.PrintedAt = storeprint.StatusDone, 1, &at
				if err := tx.PutTask(task); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sweepOnce lets the sweeper's timer fire on the fake clock and waits for
// the sweep.
func sweepOnce(t *testing.T, fake *clock.Fake, swept chan gateway.SweepResult, every time.Duration) gateway.SweepResult {
	t.Helper()
	// A bound, not a timing: a sweep of 190,000 tasks takes minutes when
	// other work keeps the cores busy.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := fake.WaitTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	fake.Advance(every)
	select {
	case r := <-swept:
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		return r
	case <-ctx.Done():
		t.Fatal("no sweep")
	}
	return gateway.SweepResult{}
}

// A store of 200,000 printed tasks, 190,000 of them older than the
// retention: one sweep keeps only the 10,000 recent ones, the data dir
// shrinks, and a replay of a purged order answers 200 with its task number
// and prints nothing.
func TestSweeper_Run(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under testing.Short: it stores 200,000 tasks")
	}
	t.Parallel()
	start := time.Now()
	fake := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	g, sim, store, dir := setupRetention(t, fake, badger.Options{MemtableSize: 64 << 20}, false)
	old, recent := 190000, 10000
	if os.Getenv("SMALL") != "" {
		old, recent = 40000, 2000
	}
	printed(t, store, fake.Now(), 0, old)
	fake.Advance(40 * gateway.Day)
	printed(t, store, fake.Now(), old, recent)
	fake.Advance(gateway.Day)
	built := time.Since(start)
	before := diskUsage(t, dir)

	// The sweeper's timer on a clock of its own (at the same time), so the
	// test knows which timer it lets fire.
	sc := clock.NewFake(fake.Now())
	swept := make(chan gateway.SweepResult, 1)
	const every = time.Hour
	s := g.NewSweeper(gateway.SweeperOptions{Clock: sc, Every: every, Reclaim: store.ReclaimSpace, Swept: func(r gateway.SweepResult) { swept <- r }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	r := sweepOnce(t, sc, swept, every)
	after := diskUsage(t, dir)
	t.Logf("%d tasks stored in %s; one sweep deleted %d tasks, %d outbox events; data dir %d MiB -> %d MiB; %s in all",
		old+recent, built.Round(time.Second), r.Tasks, r.Events, before>>20, after>>20, time.Since(start).Round(time.Second))
	if r.Tasks != old {
		t.Fatalf("deleted %d tasks, want %d", r.Tasks, old)
	}
	counts, err := g.CountByStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[storeprint.StatusDone] != recent {
		t.Fatalf("got %d done tasks, want the %d recent ones", counts[storeprint.StatusDone], recent)
	}
	if _, err := g.Task(ctx, storeprint.TaskNo(fmt.Sprintf("o%06d", old), "hot")); err != nil {
		t.Fatalf("a recent task: %v", err)
	}
	if after >= before/2 {
		t.Fatalf("data dir %d MiB after the sweep, %d MiB before: want it to shrink by half", after>>20, before>>20)
	}

	// The POS sends a purged order again.
	srv := &gwhttp.Server{Config: g.Config(), Tokens: []string{"token-123"}, Now: g.Now, Health: g, Changes: g,
		OrderService: g, TaskService: g, PrinterService: g, AuditService: g, DeviceService: g, BoardService: g, DisplayService: g}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	body, _ := json.Marshal(testOrder("o000042"))
	req, _ := http.NewRequest("POST", "http://"+srv.Addr()+"/v1/orders", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer token-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res gateway.OrderResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	want := gateway.OrderResult{OrderID: "o000042", Tasks: []gateway.TaskResult{{TaskNo: storeprint.TaskNo("o000042", "hot"), Station: "hot", PrinterID: "hot-1", Status: storeprint.StatusQueued}}}
	if resp.StatusCode != 200 || fmt.Sprint(res) != fmt.Sprint(want) {
		t.Fatalf("replay of a purged order: got %d %+v, want 200 %+v", resp.StatusCode, res, want)
	}
	if counts, _ := g.CountByStatus(ctx); counts[storeprint.StatusQueued]+counts[storeprint.StatusPrinting] != 0 || len(sim.Printed()) != 0 {
		t.Fatalf("the replay queued something (%v) or printed %d tickets", counts, len(sim.Printed()))
	}
}

// The rules: nothing before its time, nothing the cloud has not stored,
// order ids remembered for order_ids_retention.
func TestSweeper_Sweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("Linked", func(t *testing.T) {
		t.Parallel()
		fake := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
		g, _, store, _ := setupRetention(t, fake, badger.Options{}, true)
		printed(t, store, fake.Now(), 0, 10)
		fake.Advance(31 * gateway.Day)
		s := g.NewSweeper(gateway.SweeperOptions{Clock: fake})
		if r := s.Sweep(ctx); r.Err != nil || r.Tasks != 0 || r.Audit != 0 {
			t.Fatalf("the cloud has stored nothing: sweep got %+v, want nothing deleted", r)
		}
		last, err := g.SyncState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.OutboxAcked(ctx, last.Last); err != nil {
			t.Fatal(err)
		}
		if r := s.Sweep(ctx); r.Err != nil || r.Tasks != 10 || r.Events != 0 {
			t.Fatalf("once the cloud has them: got %+v, want 10 tasks deleted (and the outbox left to the link)", r)
		}
	})
	t.Run("OrderIDs", func(t *testing.T) {
		t.Parallel()
		fake := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
		g, _, store, _ := setupRetention(t, fake, badger.Options{}, false)
		printed(t, store, fake.Now(), 0, 3)
		s := g.NewSweeper(gateway.SweeperOptions{Clock: fake})
		fake.Advance(29 * gateway.Day)
		if r := s.Sweep(ctx); r.Err != nil || r.Tasks != 0 || r.Events != 9 {
			t.Fatalf("within the retention: got %+v, want only the outbox trimmed", r)
		}
		fake.Advance(2 * gateway.Day)
		if r := s.Sweep(ctx); r.Err != nil || r.Tasks != 3 {
			t.Fatalf("past the retention: got %+v, want 3 tasks deleted", r)
		}
		if _, created, err := g.AcceptOrder(ctx, testOrder("o000001"), storeprint.SourcePOS); err != nil || created {
			t.Fatalf("replay after retention: created %v, %v; want a replay", created, err)
		}
		fake.Advance(400 * gateway.Day)
		if r := s.Sweep(ctx); r.Err != nil || r.Orders != 3 {
			t.Fatalf("past order_ids_retention: got %+v, want 3 order records deleted", r)
		}
		if _, created, err := g.AcceptOrder(ctx, testOrder("o000001"), storeprint.SourcePOS); err != nil || !created {
			t.Fatalf("an order id past order_ids_retention: created %v, %v; want a new order", created, err)
		}
	})
}
