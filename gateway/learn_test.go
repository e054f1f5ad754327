package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
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
	"github.com/storeprint/storeprint/sync"
)

// linked is a gateway with a [cloud] section (no cloud answers: the tests
// play the link's part) on a real store and a simulated printer.
type linked struct {
	g     *gateway.Gateway
	prev  *gateway.Gateway // the process before g, on the same store
	sim   *printersim.Printer
	store *badger.DB
	dir   string
	run   func() // starts the dispatcher
}

func setupLinked(t *testing.T, grace time.Duration) *linked {
	t.Helper()
	return setupLinkedClock(t, grace, clock.Real{})
}

// setupLinkedClock is setupLinked on the clock clk.
func setupLinkedClock(t *testing.T, grace time.Duration, clk clock.Clock) *linked {
	t.Helper()
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Cloud: &gateway.CloudConfig{URL: "ws://127.0.0.1:9/v1/sync", Insecure: true, GatewayID: "gw-1", Token: "t"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: addr,
			ConnectTimeout: gateway.Duration{Duration: time.Second}, ConfirmTimeout: gateway.Duration{Duration: time.Second}}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	newGateway := func() *gateway.Gateway {
		g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], cfg.StoreID)}, gateway.Options{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StartupGrace: grace, Clock: clk,
		})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// The gateway process before this one, on the same data dir: what it
	// accepted, this one carried over (see carry).
	prev := newGateway()
	l := &linked{g: newGateway(), prev: prev, sim: sim, store: store, dir: dir}
	g := l.g
	l.run = func() {
		runGateway(t, g)
	}
	return l
}

// order accepts an order of one hot ticket in this gateway process.
func (l *linked) order(t *testing.T, id string) string {
	t.Helper()
	return accept(t, l.g, id)
}

// carry accepts an order of one hot ticket in the process before this
// one: a ticket this gateway carried over from before its start, which
// the start-up hold holds (a ticket this process accepted prints at once).
func (l *linked) carry(t *testing.T, id string) string {
	t.Helper()
	return accept(t, l.prev, id)
}

func accept(t *testing.T, g *gateway.Gateway, id string) string {
	t.Helper()
	if _, _, err := g.AcceptOrder(context.Background(), &storeprint.Order{OrderID: id, Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	return storeprint.TaskNo(id, "hot")
}

func (l *linked) status(t *testing.T, taskNo string) *gateway.Task {
	t.Helper()
	task, err := l.g.Task(context.Background(), taskNo)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func waitPaper(t *testing.T, sim *printersim.Printer, n int) []printersim.Ticket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := sim.WaitPrinted(ctx, n)
	if err != nil {
		t.Fatalf("%d tickets on paper: got %d", n, len(got))
	}
	return got
}

func cloudState(taskNo string, status storeprint.Status, attempt int) sync.TaskEvent {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return sync.TaskEvent{TaskNo: taskNo, Version: 9, OrderID: "x", Station: "hot", PrinterID: "hot-1",
		Status: status, Attempt: attempt, CreatedAt: at, UpdatedAt: at, PrintedAt: &at}
}

// A linked gateway prints nothing it carried over from before the start
// until the link says what the cloud knows: a ticket the cloud has as
// done does not print again, and printing goes on after.
func TestGateway_StartupHold(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	l := setupLinkedClock(t, time.Hour, clk)
	carried := l.carry(t, "a")
	l.run()
	// The grace's timer and the worker's next look at its queue: the
	// worker has been through the queue once, and the carried ticket is
	// still waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := clk.WaitTimers(ctx, 2); err != nil {
		t.Fatalf("the worker never came to wait: %v (%d timers)", err, clk.Timers())
	}
	if task := l.status(t, carried); task.Status != storeprint.StatusQueued || len(l.sim.Printed()) != 0 {
		t.Fatalf("got %s with %d on paper, want the carried ticket held until the cloud has spoken", task.Status, len(l.sim.Printed()))
	}
	rest, err := l.g.ApplyStates(context.Background(), []sync.TaskEvent{cloudState(carried, storeprint.StatusDone, 1)})
	if err != nil || len(rest) != 0 {
		t.Fatalf("got %v %v", rest, err)
	}
	l.g.Learned()
	next := l.order(t, "b")
	got := waitPaper(t, l.sim, 1)
	if got[0].TaskNo != next {
		t.Fatalf("got %s on paper, want %s (the carried ticket printed in the cloud already)", got[0].TaskNo, next)
	}
	if task := l.status(t, carried); task.Status != storeprint.StatusDone || task.Attempt != 1 || task.PrintedAt == nil {
		t.Fatalf("got %+v, want done at attempt 1 as the cloud knew it", task)
	}
	if n := len(l.sim.Printed()); n != 1 {
		t.Fatalf("got %d tickets, want 1", n)
	}
}

// Without word from the cloud, the hold ends after the grace: a store
// whose internet is down still prints.
func TestGateway_StartupGrace(t *testing.T) {
	t.Parallel()
	l := setupLinked(t, 50*time.Millisecond)
	no := l.carry(t, "a")
	l.run()
	if got := waitPaper(t, l.sim, 1); got[0].TaskNo != no {
		t.Fatalf("got %v", got)
	}
}

// The cloud's newer states: done and cancelled apply, printing or needing
// a person holds the ticket for a person (reason recovered), waiting in
// both takes the cloud's attempt number; unknown tasks come back.
func TestGateway_ApplyStates(t *testing.T) {
	t.Parallel()
	l := setupLinked(t, time.Hour)
	nos := map[string]string{}
	for _, id := range []string{"done", "cancelled", "attention", "printing", "retry", "failed"} {
		nos[id] = l.order(t, id)
	}
	rest, err := l.g.ApplyStates(context.Background(), []sync.TaskEvent{
		cloudState(nos["done"], storeprint.StatusDone, 1),
		cloudState(nos["cancelled"], storeprint.StatusCancelled, 0),
		cloudState(nos["attention"], storeprint.StatusAttention, 2),
		cloudState(nos["printing"], storeprint.StatusPrinting, 1),
		cloudState(nos["retry"], storeprint.StatusRetryWait, 3),
		cloudState(nos["failed"], storeprint.StatusFailed, 4),
		cloudState("order_gone_station_hot", storeprint.StatusDone, 1),
		{TaskNo: "bad/task", Version: 1, Status: "lost"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].TaskNo != "order_gone_station_hot" {
		t.Fatalf("got rest %+v, want the task this store does not hold", rest)
	}
	for id, want := range map[string]struct {
		status  storeprint.Status
		reason  storeprint.Reason
		attempt int
	}{
		"done":      {storeprint.StatusDone, "", 1},
		"cancelled": {storeprint.StatusCancelled, "", 0},
		"attention": {storeprint.StatusAttention, storeprint.ReasonRecovered, 2},
		"printing":  {storeprint.StatusAttention, storeprint.ReasonRecovered, 1},
		"retry":     {storeprint.StatusQueued, "", 3},
		"failed":    {storeprint.StatusQueued, "", 4},
	} {
		task := l.status(t, nos[id])
		if task.Status != want.status || task.Reason != want.reason || task.Attempt != want.attempt {
			t.Errorf("%s: got %s (%s) attempt %d, want %s (%s) attempt %d", id, task.Status, task.Reason, task.Attempt, want.status, want.reason, want.attempt)
		}
	}
	audit, err := l.g.Audit(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range audit {
		actions = append(actions, string(a.Action))
	}
	if got := strings.Join(actions, ","); got != "learned_from_cloud,hold_recovered" {
		t.Fatalf("got audit %s, want one entry for what was learned and one for the hold", got)
	}
}

// HoldRecovered holds every waiting task (or the named ones), audited as
// one entry.
func TestGateway_HoldRecovered(t *testing.T) {
	t.Parallel()
	l := setupLinked(t, time.Hour)
	a, b := l.order(t, "a"), l.order(t, "b")
	ctx := context.Background()
	if n, err := l.g.HoldRecovered(ctx, []string{b, "order_none_station_hot"}, "restored"); err != nil || n != 1 {
		t.Fatalf("got %d %v, want 1", n, err)
	}
	if n, err := l.g.HoldRecovered(ctx, nil, "restored"); err != nil || n != 1 {
		t.Fatalf("got %d %v, want the one still waiting", n, err)
	}
	if n, _ := l.g.HoldRecovered(ctx, nil, "again"); n != 0 {
		t.Fatalf("got %d, want none left waiting", n)
	}
	for _, no := range []string{a, b} {
		if task := l.status(t, no); task.Status != storeprint.StatusAttention || task.Reason != storeprint.ReasonRecovered || task.LastError != "restored" {
			t.Fatalf("got %+v, want held as recovered", task)
		}
	}
	audit, _ := l.g.Audit(ctx, 0, 10)
	if len(audit) != 2 || audit[1].Action != storeprint.ActionHoldRecovered {
		t.Fatalf("got %+v, want two hold entries", audit)
	}
	var after struct {
		TaskNos []string `json:"task_nos"`
	}
	if err := json.Unmarshal([]byte(audit[1].After), &after); err != nil || len(after.TaskNos) != 1 || after.TaskNos[0] != a {
		t.Fatalf("got %s %v, want the held task named", audit[1].After, err)
	}
	// A make-up print of a recovered ticket says REPRINT: it may have printed.
	l.run()
	l.g.Learned()
	if _, err := l.g.Retry(ctx, a, gateway.Actor{Operator: "amy", Reason: "not on the pass"}); err != nil {
		t.Fatal(err)
	}
	if got := waitPaper(t, l.sim, 1); !strings.Contains(got[0].Text, "REPRINT") {
		t.Fatalf("got %q, want a REPRINT line", got[0].Text)
	}
}

// A new data dir gets an incarnation, kept when it is opened again; the
// hello says it with the outbox's seqs; the snapshot pages every task
// with its receipts.
func TestGateway_Hello(t *testing.T) {
	t.Parallel()
	l := setupLinked(t, time.Hour)
	ctx := context.Background()
	h, err := l.g.Hello(ctx)
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(h.Incarnation) || h.LastSeq != 0 {
		t.Fatalf("got %+v %v, want a fresh incarnation", h, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		l.order(t, id)
	}
	tasks, receipts, err := l.g.Snapshot(ctx, "", 2)
	if err != nil || len(tasks) != 2 || len(receipts) != 0 || tasks[0].TaskNo != "order_a_station_hot" {
		t.Fatalf("got %+v %+v %v", tasks, receipts, err)
	}
	if tasks, _, _ = l.g.Snapshot(ctx, tasks[1].TaskNo, 2); len(tasks) != 1 {
		t.Fatalf("got %+v, want the last task", tasks)
	}
	l.store.Close()
	again, err := badger.Open(l.dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var inc, last uint64
	if err := again.View(ctx, func(tx gateway.ReadTx) error {
		inc, _ = tx.Meta(gateway.MetaIncarnation)
		last, err = tx.LastEventSeq()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if gateway.Incarnation(inc) != h.Incarnation || last != 3 {
		t.Fatalf("got incarnation %s and last seq %d, want %s and 3", gateway.Incarnation(inc), last, h.Incarnation)
	}
}
