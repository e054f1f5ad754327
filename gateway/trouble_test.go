package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A printer that cuts every ticket off for 10 s while 10 orders a second
// come in is one problem, not a ticket each: at most 2 tickets are
// flagged, and every other ticket prints once after the printer recovers.
func TestGateway_TroubleCutsEveryTicket(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"hold", "reprint"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			cutsEveryTicket(t, newSteppedPolicy(t, policy))
		})
	}
}

func cutsEveryTicket(t *testing.T, s *stepped) {
	s.printer.cut = true
	var nos []string
	for i := 0; i < 100; i++ {
		nos = append(nos, s.post(t, fmt.Sprintf("c%d", i)))
		s.run(t)
		s.clock.Advance(100 * time.Millisecond)
	}
	s.printer.cut = false
	cutAttempts := s.printer.attempts
	for passed := time.Duration(0); passed < 2*time.Minute; {
		d := s.run(t)
		s.clock.Advance(d)
		passed += d
	}
	flagged, paper := 0, map[string]int{}
	for _, no := range s.printer.printed {
		paper[no]++
	}
	for _, no := range nos {
		task, err := s.g.Task(context.Background(), no)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case task.Status == storeprint.StatusAttention:
			flagged++
		case task.Status != storeprint.StatusDone:
			t.Errorf("%s: got %s (%s), want done or flagged", no, task.Status, task.LastError)
		case paper[no] != 1:
			t.Errorf("%s: printed %d times after the printer recovered, want once", no, paper[no])
		}
	}
	if flagged > 2 {
		t.Fatalf("got %d tickets flagged for a person, want at most 2", flagged)
	}
	if cutAttempts > 10 {
		t.Errorf("got %d attempts on a printer that cut every ticket for 10 s: it should be held, not hammered", cutAttempts)
	}
}

// A printer that reports offline for 5 minutes costs nothing while it
// waits: its ticket's attempt count does not move and nothing durable is
// written for it.
func TestGateway_OfflineCostsNothing(t *testing.T) {
	t.Parallel()
	s := newStepped(t)
	s.printer.state = storeprint.PrinterOffline
	no := s.post(t, "off-1")
	s.run(t)
	before, err := s.g.SyncState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for passed := time.Duration(0); passed < 5*time.Minute; {
		d := s.run(t)
		s.clock.Advance(d)
		passed += d
	}
	after, _ := s.g.SyncState(context.Background())
	task, _ := s.g.Task(context.Background(), no)
	if task.Attempt != 0 || task.Status != storeprint.StatusQueued {
		t.Fatalf("after 5 minutes offline: got %s attempt %d, want queued attempt 0", task.Status, task.Attempt)
	}
	if n := after.Last - before.Last; n > 2 {
		t.Fatalf("got %d outbox events during the outage, want at most 2", n)
	}
	s.printer.state = storeprint.PrinterReady
	if !s.within(t, 2*time.Second, no, storeprint.StatusDone) {
		t.Fatal("the ticket did not print within 2 s of the printer coming back")
	}
}

// A printer that answers ready but fails every ticket before a byte leaves
// (a flapping link): the ticket waits out the backoff and fails once its
// retries are used up.
func TestGateway_RetriesUsedUp(t *testing.T) {
	t.Parallel()
	s := newStepped(t)
	s.printer.refuse = true
	no := s.post(t, "ru-1")
	if !s.within(t, time.Hour, no, storeprint.StatusFailed) {
		t.Fatal("the ticket did not fail")
	}
	task, _ := s.g.Task(context.Background(), no)
	if task.Attempt != 6 || task.Reason != storeprint.ReasonRetries {
		t.Fatalf("got attempt %d reason %q, want failed after 6 attempts (5 retries)", task.Attempt, task.Reason)
	}
	if len(s.printer.printed) != 0 {
		t.Fatal("a ticket came out of a printer that refused every byte")
	}
}

var errRefused = errors.New("connection refused")

var _ gateway.Printer = (*scripted)(nil)

// statusCounting is a driver that counts the status reads asked of it and
// signals each one.
type statusCounting struct {
	gateway.Printer
	n    atomic.Int64
	read chan struct{}
}

func (p *statusCounting) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	p.n.Add(1)
	select {
	case p.read <- struct{}{}:
	default:
	}
	return p.Printer.Status(ctx)
}

// A busy counter posting to a printer out of paper does not have the
// gateway ask the printer for its status once an order: it is read at the
// trouble rate (once a second), and the tickets print once it is ready.
func TestGateway_TroubleNotPolledPerOrder(t *testing.T) {
	t.Parallel()
	sp := &statusCounting{read: make(chan struct{}, 1)}
	g, sim, _ := setup(t, func(p gateway.Printer) gateway.Printer { sp.Printer = p; return sp })
	ctx := context.Background()
	sim.SetFault(printersim.FaultPaperEnd)
	post := func(id string) {
		t.Helper()
		if _, _, err := g.AcceptOrder(ctx, &storeprint.Order{OrderID: id, Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS); err != nil {
			t.Fatal(err)
		}
	}
	post("first")
	deadline := time.After(20 * time.Second)
	for g.PrinterState("hot-1") != storeprint.PrinterPaperEnd {
		select {
		case <-sp.read:
		case <-deadline:
			t.Fatalf("the gateway never read paper end: %s", g.PrinterState("hot-1"))
		}
	}
	const orders = 40
	before, start := sp.n.Load(), time.Now()
	for i := range orders {
		post(fmt.Sprintf("busy-%d", i))
	}
	// One read a second at most, and one that may have been under way.
	polls, allowed := sp.n.Load()-before, 2+int64(time.Since(start)/time.Second)
	if polls > allowed {
		t.Fatalf("%d orders to a printer out of paper: the gateway read its status %d times, want at most %d", orders, polls, allowed)
	}
	sim.SetFault(printersim.FaultNone)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := sim.WaitPrinted(wctx, orders+1); err != nil {
		t.Fatalf("once the paper is back: %v", err)
	}
}

// Uncertain outcomes count towards trouble per confirmation method: one
// under process_id and one under status (a printer confirm = "auto" now
// finds answering only its status) are not two in a row; two under status
// are. A confirmed print's receipt names its method.
func TestGateway_TroublePerMethod(t *testing.T) {
	t.Parallel()
	s := newSteppedPolicy(t, "hold")
	inTrouble := func() bool {
		ps, err := s.g.Printers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return ps[0].InTrouble
	}
	s.printer.lose, s.printer.confirms = true, storeprint.ConfirmProcessID
	s.post(t, "m1")
	s.run(t)
	s.printer.confirms = storeprint.ConfirmStatus
	s.clock.Advance(time.Minute)
	s.post(t, "m2")
	s.run(t)
	if inTrouble() {
		t.Fatal("in trouble after one uncertain ticket under each of two methods, want not yet")
	}
	s.clock.Advance(time.Minute)
	s.post(t, "m3")
	s.run(t)
	if !inTrouble() {
		t.Fatal("not in trouble after two uncertain tickets in a row under status, want in trouble")
	}

	s.printer.lose = false
	s.clock.Advance(time.Minute)
	no := s.post(t, "m4")
	if !s.within(t, 10*time.Minute, no, storeprint.StatusDone) {
		t.Fatalf("%s not done", no)
	}
	rs, err := s.g.Receipts(context.Background(), no)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.State == storeprint.ReceiptPrinted && r.ConfirmedBy != storeprint.ConfirmStatus {
			t.Errorf("got a printed receipt confirmed_by %q, want status", r.ConfirmedBy)
		}
	}
}
