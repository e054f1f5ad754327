package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// At start-up, a printer that keeps a job log is asked about the attempts
// an earlier run left open; one that does not answer is asked once, not
// once per ticket, and on_uncertain applies to them all.
func TestGateway_SettleAtBoot(t *testing.T) {
	t.Parallel()
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "ep-1", Driver: "epos", Address: "http://" + printertest.ClosedAddr(t), Options: epos.Options{JobLog: true},
			ConnectTimeout: gateway.Duration{Duration: 200 * time.Millisecond}, ConfirmTimeout: gateway.Duration{Duration: 200 * time.Millisecond}}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "ep-1"}},
	}
	store := openStore(t, cfg)
	ctx := context.Background()
	now := time.Now()
	nos := []string{"order_b1_station_hot", "order_b2_station_hot"}
	// Two tickets an earlier run sent to the printer and never heard of.
	for i, no := range nos {
		tk := &gateway.Task{TaskNo: no, OrderID: "b" + string(rune('1'+i)), Station: "hot", PrinterID: "ep-1",
			Status: storeprint.StatusQueued, Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}},
			CreatedAt: now, UpdatedAt: now}
		if err := store.Update(ctx, func(tx gateway.Tx) error {
			tk.Seq = tx.NextTaskSeq()
			return tx.PutTask(tk)
		}); err != nil {
			t.Fatal(err)
		}
		if err := store.Update(ctx, func(tx gateway.Tx) error {
			tk.Status, tk.Attempt, tk.LeaseToken = storeprint.StatusPrinting, 1, "old"
			if err := tx.PutTask(tk); err != nil {
				return err
			}
			return tx.PutReceipt(&gateway.Receipt{TaskNo: no, Attempt: 1, State: storeprint.ReceiptSubmitted,
				PrinterID: "ep-1", ProcessID: "0001", PreparedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := epos.New(cfg.Printers[0], cfg.StoreID)
	t.Cleanup(func() { p.Close() })
	g, err := gateway.New(cfg, store, map[string]gateway.Printer{"ep-1": p}, gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	for i, no := range nos {
		tk, err := g.Task(ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != storeprint.StatusAttention || tk.Reason != storeprint.ReasonUncertain {
			t.Fatalf("%s: got %s (%s), want attention_required (uncertain)", no, tk.Status, tk.Reason)
		}
		rs, err := g.Receipts(ctx, no)
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: got receipts %+v, %v", no, rs, err)
		}
		want := "could not say"
		if i > 0 {
			want = "did not answer at start-up"
		}
		if !strings.Contains(rs[0].Settled, want) || !strings.Contains(rs[0].Settled, "on_uncertain applies") {
			t.Errorf("%s: got settled %q, want %q in it", no, rs[0].Settled, want)
		}
	}
}
