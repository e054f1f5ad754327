package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// setupDisplay returns a gateway (real Badger, a printer simulator on a
// real socket as the backup, a fake clock, stepped by hand) whose station
// hot shows on display kds-hot.
func setupDisplay(t *testing.T) (*gateway.Gateway, *printersim.Printer, *clock.Fake) {
	t.Helper()
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: addr,
			ConnectTimeout: gateway.Duration{Duration: time.Second}, ConfirmTimeout: gateway.Duration{Duration: 2 * time.Second}}},
		Displays: []gateway.DisplayConfig{{ID: "kds-hot", Backup: "hot-1"}},
		Stations: []gateway.StationConfig{{Name: "hot", Display: "kds-hot"}},
	}
	store := openStore(t, cfg)
	clk := clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], cfg.StoreID)}, gateway.Options{
		Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g, sim, clk
}

func postHot(t *testing.T, g *gateway.Gateway, id string) string {
	t.Helper()
	res, _, err := g.AcceptOrder(context.Background(), &storeprint.Order{OrderID: id, Table: "A1",
		Items: []storeprint.Item{{Name: "宫保鸡丁", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tasks[0].PrinterID; got != "kds-hot" {
		t.Fatalf("got printer_id %q, want the display kds-hot", got)
	}
	return res.Tasks[0].TaskNo
}

func displayState(t *testing.T, g *gateway.Gateway) gateway.DisplayInfo {
	t.Helper()
	ds, err := g.Displays(context.Background())
	if err != nil || len(ds) != 1 {
		t.Fatalf("displays: %v %v", ds, err)
	}
	return ds[0]
}

func TestGateway_Bump(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := gateway.DisplayAction{DisplayID: "kds-hot", Operator: "device:dev-1", Device: "dev-1"}
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		g, sim, _ := setupDisplay(t)
		no := postHot(t, g, "1")
		if err := g.DisplayHeard(ctx, "kds-hot"); err != nil {
			t.Fatal(err)
		}
		if n, err := g.Shown(ctx, "kds-hot", []string{no}); err != nil || n != 1 {
			t.Fatalf("shown: got %d %v, want 1 delivered", n, err)
		}
		rs, _ := g.Receipts(ctx, no)
		if len(rs) != 1 || rs[0].State != storeprint.ReceiptSubmitted || rs[0].PrinterID != "kds-hot" {
			t.Fatalf("after shown: got receipts %+v, want one submitted on kds-hot", rs)
		}
		task, err := g.Bump(ctx, no, at)
		if err != nil || task.Status != storeprint.StatusDone {
			t.Fatalf("bump: got %v %v, want done", task, err)
		}
		rs, _ = g.Receipts(ctx, no)
		if len(rs) != 1 || rs[0].State != storeprint.ReceiptPrinted || rs[0].ConfirmedBy != "bump" {
			t.Fatalf("after bump: got receipts %+v, want printed, confirmed_by bump", rs)
		}
		audit, _ := g.Audit(ctx, 0, 0)
		var bumps int
		for _, a := range audit {
			if a.Action == storeprint.ActionBump && a.TaskNo == no && strings.Contains(a.Reason, "kds-hot") && strings.Contains(a.After, "dev-1") {
				bumps++
			}
		}
		if bumps != 1 {
			t.Fatalf("got %d bump audit entries naming the display and the device, want 1 (%+v)", bumps, audit)
		}
		// Again: nothing changes.
		if _, err := g.Bump(ctx, no, at); err != nil {
			t.Fatal(err)
		}
		// Recall shows it again, audited; a bump puts it away.
		if _, err := g.Recall(ctx, no, at); err != nil {
			t.Fatal(err)
		}
		show, err := g.ShowTickets(ctx, "kds-hot")
		if err != nil || len(show.Recalled) != 1 || show.Recalled[0].TaskNo != no {
			t.Fatalf("after recall: got %+v %v, want %s recalled", show, err, no)
		}
		if _, err := g.Bump(ctx, no, at); err != nil {
			t.Fatal(err)
		}
		if show, _ := g.ShowTickets(ctx, "kds-hot"); len(show.Recalled) != 0 {
			t.Fatalf("after the second bump: got %d recalled, want 0", len(show.Recalled))
		}
		if n := len(sim.Printed()); n != 0 {
			t.Fatalf("got %d tickets on paper, want none", n)
		}
	})
	t.Run("ErrOtherDisplay", func(t *testing.T) {
		t.Parallel()
		g, _, _ := setupDisplay(t)
		no := postHot(t, g, "1")
		if _, err := g.Bump(ctx, no, gateway.DisplayAction{DisplayID: "kds-cold", Operator: "admin"}); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
			t.Fatalf("got %v, want not found", err)
		}
		if _, err := g.Recall(ctx, no, at); storeprint.ErrorCode(err) != storeprint.ECONFLICT {
			t.Fatalf("recall of a ticket not bumped: got %v, want a conflict", err)
		}
	})
}

// A screen silent for offline_after: its waiting and shown tickets print
// on the backup, BACKUP FROM the display, the shown one marked REPRINT;
// once acknowledged and the screen is back, tickets go to it again.
func TestGateway_DisplayOffline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, sim, clk := setupDisplay(t)
	shown, waiting := postHot(t, g, "1"), postHot(t, g, "2")
	if err := g.DisplayHeard(ctx, "kds-hot"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Shown(ctx, "kds-hot", []string{shown}); err != nil {
		t.Fatal(err)
	}
	if d := displayState(t, g); d.State != "online" || d.Open != 2 {
		t.Fatalf("got %+v, want online with 2 open", d)
	}
	hq := func() string {
		ps, err := g.PrinterStatuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.ID == "kds-hot" {
				return fmt.Sprintf("%s %s/%t/%s open %d shown %d", p.Kind, p.Status, p.Failover, strings.Join(p.Stations, ","), p.Open, p.Shown)
			}
		}
		return "not reported"
	}
	if got, want := hq(), "display ready/false/hot open 2 shown 1"; got != want {
		t.Fatalf("HQ is told %s, want %s", got, want)
	}
	clk.Advance(9 * time.Second)
	g.CheckDisplays(ctx)
	if d := displayState(t, g); d.State != "online" || d.Failover != nil {
		t.Fatalf("after 9s: got %+v, want still online", d)
	}
	clk.Advance(time.Second)
	g.CheckDisplays(ctx)
	d := displayState(t, g)
	if d.State != "offline" || d.Failover == nil || !d.Failover.Active || d.Failover.Backup != "hot-1" {
		t.Fatalf("after 10s: got %+v, want offline, failed over to hot-1", d)
	}
	// Its tickets went to the backup: the screen holds none.
	if got, want := hq(), "display offline/true/hot open 0 shown 0"; got != want {
		t.Fatalf("HQ is told %s, want %s", got, want)
	}
	for g.Step(ctx, "hot-1") == 0 {
	}
	for g.Step(ctx, "hot-1") == 0 {
	}
	got := sim.Printed()
	if len(got) != 2 {
		t.Fatalf("got %d tickets on the backup, want 2", len(got))
	}
	for _, p := range got {
		if !strings.Contains(p.Text, "BACKUP FROM kds-hot") {
			t.Errorf("%s: no BACKUP FROM kds-hot line:\n%s", p.TaskNo, p.Text)
		}
		if reprint := strings.Contains(p.Text, "REPRINT"); reprint != (p.TaskNo == shown) {
			t.Errorf("%s: REPRINT %t, want it only on the ticket the screen showed", p.TaskNo, reprint)
		}
	}
	for _, no := range []string{shown, waiting} {
		if task, _ := g.Task(ctx, no); task.Status != storeprint.StatusDone || task.BackupFrom != "kds-hot" {
			t.Errorf("%s: got %s backup_from %q, want done, backup_from kds-hot", no, task.Status, task.BackupFrom)
		}
	}
	// The screen is back: tickets still print until a person acknowledges.
	if err := g.DisplayHeard(ctx, "kds-hot"); err != nil {
		t.Fatal(err)
	}
	res, _, err := g.AcceptOrder(ctx, &storeprint.Order{OrderID: "3", Items: []storeprint.Item{{Name: "x", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS)
	if err != nil || res.Tasks[0].PrinterID != "hot-1" {
		t.Fatalf("before the acknowledgement: got %+v %v, want hot-1", res, err)
	}
	if _, err := g.AckFailover(ctx, "kds-hot", "amy", "seen"); err != nil {
		t.Fatal(err)
	}
	if err := g.DisplayHeard(ctx, "kds-hot"); err != nil {
		t.Fatal(err)
	}
	if no := postHot(t, g, "4"); no == "" {
		t.Fatal("no task")
	}
}

// After a start, a screen not heard from yet is offline at once, and its
// station goes to paper once it stayed silent for offline_after since the
// start.
func TestGateway_DisplayNeverHeard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, sim, clk := setupDisplay(t)
	no := postHot(t, g, "1")
	clk.Advance(9 * time.Second)
	g.CheckDisplays(ctx)
	if d := displayState(t, g); d.State != "offline" || d.Failover != nil {
		t.Fatalf("9 s after the start: got %+v, want offline (not heard yet), not failed over", d)
	}
	clk.Advance(time.Second)
	g.CheckDisplays(ctx)
	if d := displayState(t, g); d.Failover == nil || !d.Failover.Active {
		t.Fatalf("10 s after the start: got %+v, want failed over", d)
	}
	for g.Step(ctx, "hot-1") == 0 {
	}
	for g.Step(ctx, "hot-1") == 0 {
	}
	if got := sim.Printed(); len(got) != 1 || got[0].TaskNo != no || !strings.Contains(got[0].Text, "BACKUP FROM kds-hot") || strings.Contains(got[0].Text, "REPRINT") {
		t.Fatalf("got %+v on the backup, want %s with BACKUP FROM kds-hot, no REPRINT (never shown)", got, no)
	}
}

// A linked gateway shows nothing it carried over from before its start
// until the link says what the cloud knows, as it prints nothing.
func TestGateway_DisplayStartupHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Cloud:    &gateway.CloudConfig{URL: "ws://127.0.0.1:9/v1/sync", Insecure: true, GatewayID: "gw-1", Token: "t"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9"}},
		Displays: []gateway.DisplayConfig{{ID: "kds-hot", Backup: "hot-1"}},
		Stations: []gateway.StationConfig{{Name: "hot", Display: "kds-hot"}},
	}
	store := openStore(t, cfg)
	newGateway := func() *gateway.Gateway {
		g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], cfg.StoreID)}, gateway.Options{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StartupGrace: time.Hour,
		})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	prev, g := newGateway(), newGateway()
	carried := postHot(t, prev, "a")
	fresh := postHot(t, g, "b")
	show, err := g.ShowTickets(ctx, "kds-hot")
	if err != nil || len(show.Open) != 1 || show.Open[0].TaskNo != fresh {
		t.Fatalf("before the cloud spoke: got %+v %v, want %s alone", show, err, fresh)
	}
	if n, err := g.Shown(ctx, "kds-hot", []string{carried, fresh}); err != nil || n != 1 {
		t.Fatalf("shown: got %d %v, want only %s delivered", n, err, fresh)
	}
	g.Learned()
	if show, _ := g.ShowTickets(ctx, "kds-hot"); len(show.Open) != 2 || show.Open[0].TaskNo != carried {
		t.Fatalf("after the cloud spoke: got %+v, want %s first", show.Open, carried)
	}
}

// A restart keeps what the screen showed: a recalled ticket is on the
// screen again, a shown one counts as delivered (it is not delivered a
// second time), a waiting one waits; bumped again, the recalled one stays
// away after the next restart.
func TestGateway_DisplayRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, addr := printertest.StartTCP(t, printersim.Options{})
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: addr}},
		Displays: []gateway.DisplayConfig{{ID: "kds-hot", Backup: "hot-1"}},
		Stations: []gateway.StationConfig{{Name: "hot", Display: "kds-hot"}},
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	clk := clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	var db *badger.DB
	start := func() *gateway.Gateway {
		t.Helper()
		var err error
		if db, err = badger.Open(dir, badger.Options{MinFreeBytes: 1}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		g, err := gateway.New(cfg, db, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], cfg.StoreID)}, gateway.Options{
			Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Boot(ctx); err != nil {
			t.Fatal(err)
		}
		return g
	}
	restart := func() *gateway.Gateway {
		t.Helper()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Second)
		return start()
	}
	screen := func(g *gateway.Gateway) string {
		t.Helper()
		show, err := g.ShowTickets(ctx, "kds-hot")
		if err != nil {
			t.Fatal(err)
		}
		var open, recalled []string
		for _, task := range show.Open {
			open = append(open, task.TaskNo+":"+string(task.Status))
		}
		for _, task := range show.Recalled {
			recalled = append(recalled, task.TaskNo)
		}
		return fmt.Sprintf("open %v shown %d recalled %v", open, show.Display.Shown, recalled)
	}
	at := gateway.DisplayAction{DisplayID: "kds-hot", Operator: "device:dev-1", Device: "dev-1"}

	g := start()
	recalled, shown, waiting := postHot(t, g, "1"), postHot(t, g, "2"), postHot(t, g, "3")
	if n, err := g.Shown(ctx, "kds-hot", []string{recalled, shown}); err != nil || n != 2 {
		t.Fatalf("shown: got %d %v, want 2 delivered", n, err)
	}
	if _, err := g.Bump(ctx, recalled, at); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Recall(ctx, recalled, at); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("open [%s:printing %s:queued] shown 1 recalled [%s]", shown, waiting, recalled)
	if got := screen(g); got != want {
		t.Fatalf("before the restart: got %s, want %s", got, want)
	}

	g = restart()
	if got := screen(g); got != want {
		t.Fatalf("after a restart: got %s, want %s", got, want)
	}
	if n, err := g.Shown(ctx, "kds-hot", []string{shown, waiting}); err != nil || n != 1 {
		t.Fatalf("shown after the restart: got %d %v, want only %s delivered", n, err, waiting)
	}
	if rs, _ := g.Receipts(ctx, shown); len(rs) != 1 || rs[0].State != storeprint.ReceiptSubmitted {
		t.Fatalf("got receipts %+v of %s, want its one attempt, delivered", rs, shown)
	}
	if _, err := g.Bump(ctx, recalled, at); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("open [%s:printing %s:printing] shown 2 recalled []", shown, waiting)
	if got := screen(g); got != want {
		t.Fatalf("bumped again: got %s, want %s", got, want)
	}
	g = restart()
	if got := screen(g); got != want {
		t.Fatalf("after the second restart: got %s, want %s", got, want)
	}
	if task, _ := g.Task(ctx, recalled); task.Status != storeprint.StatusDone || task.RecalledAt != nil {
		t.Fatalf("got %s recalled_at %v, want done and not recalled", task.Status, task.RecalledAt)
	}
}

// A ticket on a screen that nobody bumped within its station's
// stale_after is stale, as a printer's ticket that could not print: the
// LAN page and HQ are told, at the moment it goes stale. It stays on the
// screen and a bump still puts it away.
func TestGateway_DisplayStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, _, clk := setupDisplay(t)
	no := postHot(t, g, "1")
	if _, err := g.Shown(ctx, "kds-hot", []string{no}); err != nil {
		t.Fatal(err)
	}
	// look lets time pass with the screen speaking, and runs the watcher.
	look := func(by time.Duration) gateway.DisplayInfo {
		t.Helper()
		for step := time.Duration(0); step < by; step += 5 * time.Second {
			clk.Advance(5 * time.Second)
			if err := g.DisplayHeard(ctx, "kds-hot"); err != nil {
				t.Fatal(err)
			}
		}
		g.CheckDisplays(ctx)
		return displayState(t, g)
	}
	hq := func() int {
		ps, err := g.PrinterStatuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.ID == "kds-hot" {
				return p.Stale
			}
		}
		return -1
	}
	if d := look(29 * time.Minute); d.Stale != 0 || d.State != "online" {
		t.Fatalf("after 29 min: got %+v, want online, nothing stale", d)
	}
	gen := g.Generation()
	d := look(2 * time.Minute)
	if d.Stale != 1 || len(d.StaleTasks) != 1 || d.StaleTasks[0] != no || d.Shown != 1 {
		t.Fatalf("after 31 min: got %+v, want %s stale, still shown", d, no)
	}
	if g.Generation() == gen {
		t.Fatal("the ticket went stale and nothing was told of it")
	}
	if got := hq(); got != 1 {
		t.Fatalf("HQ is told %d stale, want 1", got)
	}
	if task, _ := g.Task(ctx, no); task.Status != storeprint.StatusPrinting {
		t.Fatalf("got %s, want it still on the screen (printing)", task.Status)
	}
	if _, err := g.Bump(ctx, no, gateway.DisplayAction{DisplayID: "kds-hot", Operator: "admin"}); err != nil {
		t.Fatal(err)
	}
	if d := look(0); d.Stale != 0 || d.Open != 0 {
		t.Fatalf("after the bump: got %+v, want nothing stale or open", d)
	}
	if got := hq(); got != 0 {
		t.Fatalf("HQ is told %d stale after the bump, want 0", got)
	}
}
