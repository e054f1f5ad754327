package gateway_test

import (
	"context"
	"io"
	"log/slog"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// syncCounter counts the store's syncs that updates waited for.
type syncCounter struct {
	mu      stdsync.Mutex
	waited  int
	durable int // updates those syncs made durable
}

func (c *syncCounter) Synced(_ time.Duration, updates int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if updates > 0 {
		c.waited++
		c.durable += updates
	}
}

func (c *syncCounter) Updated(time.Duration) {}

func (c *syncCounter) read() (waited, durable int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waited, c.durable
}

// A printed ticket costs the store the syncs the promise needs and no
// more: one for its order (before the 201), one for its prepared receipt
// (before the first byte) and one for its confirmation. The lease and
// the receipt's "submitted" ride on the next of these, and the cloud's
// acknowledgement on whichever sync comes after it.
func TestGateway_SyncsPerTicket(t *testing.T) {
	t.Parallel()
	_, addr := printertest.StartTCP(t, printersim.Options{})
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: addr,
			ConnectTimeout: gateway.Duration{Duration: 5 * time.Second}, ConfirmTimeout: gateway.Duration{Duration: 5 * time.Second}}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	count := &syncCounter{}
	store, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1, Observer: count})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], cfg.StoreID)}, gateway.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	store.OnQuietSync(g.Notify)
	runGateway(t, g)
	ctx := context.Background()

	changes, stop := g.Subscribe()
	defer stop()
	printed := func(orderID string) {
		t.Helper()
		if _, _, err := g.AcceptOrder(ctx, &storeprint.Order{OrderID: orderID, Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS); err != nil {
			t.Fatal(err)
		}
		no := storeprint.TaskNo(orderID, "hot")
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for {
			task, err := g.Task(ctx, no)
			if err != nil {
				t.Fatal(err)
			}
			if task.Status == storeprint.StatusDone {
				return
			}
			select {
			case <-changes:
			case <-tctx.Done():
				t.Fatalf("%s not printed: %s", no, task.Status)
			}
		}
	}
	printed("warm") // the printer connected, its way of confirming learned

	w0, d0 := count.read()
	printed("o1")
	if w, d := count.read(); w-w0 != 3 || d-d0 != 3 {
		t.Errorf("one ticket from order to confirmation: %d syncs making %d updates durable, want 3 and 3 (order, prepared receipt, confirmation)", w-w0, d-d0)
	}

	// The cloud acknowledges everything: no sync of its own.
	state, err := g.SyncState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w0, _ = count.read()
	if err := g.OutboxAcked(ctx, state.Last); err != nil {
		t.Fatal(err)
	}
	if w, _ := count.read(); w != w0 {
		t.Errorf("the acknowledgement: %d syncs waited for, want none", w-w0)
	}
	// It is durable with the next sync: the next ticket's.
	printed("o2")
	if got, err := g.SyncState(ctx); err != nil || got.Acked != state.Last {
		t.Errorf("after the next ticket: acked %d (%v), want %d", got.Acked, err, state.Last)
	}
}
