package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/internal/clock"
)

// scripted is a printer that prints and confirms at once, or reports the
// state it is told to.
type scripted struct {
	state    storeprint.PrinterState
	failing  bool               // the connection is refused
	lose     bool               // the ticket prints, its confirmation is lost
	cut      bool               // the connection drops as the ticket goes out: nothing prints
	refuse   bool               // reports ready, but every print fails before a byte leaves
	confirms storeprint.Confirm // how it confirms (PrintJob.Confirms)
	printed  []string
	attempts int
}

func (p *scripted) Status(context.Context) (storeprint.PrinterStatus, error) {
	if p.state == "" {
		return storeprint.PrinterStatus{State: storeprint.PrinterReady}, nil
	}
	return storeprint.PrinterStatus{State: p.state}, nil
}

func (p *scripted) Print(ctx context.Context, job *gateway.PrintJob) error {
	p.attempts++
	switch {
	case p.refuse:
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, Err: errRefused}
	case p.failing:
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, State: storeprint.PrinterOffline, Err: errors.New("connection refused")}
	case p.state != "" && p.state != storeprint.PrinterReady:
		return &gateway.PrintError{Outcome: gateway.PrintNotReady, State: p.state}
	}
	job.Confirms = p.confirms
	if err := job.Prepare(ctx, []byte(job.Ticket.TaskNo)); err != nil {
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, Err: err}
	}
	if p.cut {
		return &gateway.PrintError{Outcome: gateway.PrintUncertain, Err: fmt.Errorf("mid-ticket: %w", syscall.ECONNRESET)}
	}
	job.Submitted(ctx, "")
	p.printed = append(p.printed, job.Ticket.TaskNo)
	if p.lose {
		return &gateway.PrintError{Outcome: gateway.PrintUncertain, Err: fmt.Errorf("no confirmation: %w", context.DeadlineExceeded)}
	}
	return nil
}

// Probe answers a confirmation request alone unless the printer is off
// the network or loses confirmations.
func (p *scripted) Probe(context.Context) error {
	if p.failing || p.refuse || p.lose || (p.state != "" && p.state != storeprint.PrinterReady) {
		return errRefused
	}
	return nil
}

func (p *scripted) Close() error { return nil }

// stepped is a gateway driven by hand on a fake clock.
type stepped struct {
	g       *gateway.Gateway
	clock   *clock.Fake
	printer *scripted
}

func newStepped(t *testing.T) *stepped { return newSteppedPolicy(t, "reprint") }

// newSteppedPolicy is newStepped with the printer's on_uncertain policy.
func newSteppedPolicy(t *testing.T, policy string) *stepped {
	t.Helper()
	c := clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9", OnUncertain: policy}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1", StaleAfter: gateway.Duration{Duration: 30 * time.Minute}}},
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1, Logger: log, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := &scripted{}
	g, err := gateway.New(cfg, store, map[string]gateway.Printer{"hot-1": p}, gateway.Options{Clock: c, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &stepped{g: g, clock: c, printer: p}
}

// run steps the printer's queue until it waits, and returns how long.
func (s *stepped) run(t *testing.T) time.Duration {
	t.Helper()
	for i := 0; i < 100; i++ {
		if d := s.g.Step(context.Background(), "hot-1"); d > 0 {
			return d
		}
	}
	t.Fatal("the queue never waits")
	return 0
}

// within advances the clock in steps of the worker's own waits for up to
// d, and reports whether the task got to want by then.
func (s *stepped) within(t *testing.T, d time.Duration, taskNo string, want storeprint.Status) bool {
	t.Helper()
	for passed := time.Duration(0); ; {
		wait := s.run(t)
		if task, err := s.g.Task(context.Background(), taskNo); err != nil {
			t.Fatal(err)
		} else if task.Status == want {
			return true
		}
		if passed+wait > d {
			return false
		}
		s.clock.Advance(wait)
		passed += wait
	}
}

func (s *stepped) post(t *testing.T, id string) string { return postNoodles(t, s.g, id) }

// postNoodles posts an order of one item for station hot and returns its
// ticket's task_no.
func postNoodles(t *testing.T, g *gateway.Gateway, id string) string {
	t.Helper()
	o := &storeprint.Order{OrderID: id, Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}
	if _, _, err := g.AcceptOrder(context.Background(), o, storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	return storeprint.TaskNo(id, "hot")
}

func TestGateway_WallClockStep(t *testing.T) {
	t.Parallel()
	t.Run("Back10Minutes", func(t *testing.T) {
		t.Parallel()
		s := newStepped(t)
		s.printer.lose = true
		waiting := s.post(t, "w1")
		s.run(t) // no confirmation: reprint after about 5 s
		s.printer.lose = false
		s.clock.StepWall(-10 * time.Minute)
		if !s.within(t, 7*time.Second, waiting, storeprint.StatusDone) {
			t.Fatal("after the wall clock went back 10 minutes, the ticket waiting to reprint did not print within its backoff")
		}
		s.clock.StepWall(-10 * time.Minute)
		fresh := s.post(t, "w2")
		if !s.within(t, time.Second, fresh, storeprint.StatusDone) {
			t.Fatal("after the wall clock went back 10 minutes, a new ticket did not print within 1 s")
		}
	})
	t.Run("Forward31Minutes", func(t *testing.T) {
		t.Parallel()
		s := newStepped(t)
		s.printer.state = storeprint.PrinterPaperEnd
		no := s.post(t, "w3")
		s.run(t)
		s.clock.StepWall(31 * time.Minute)
		if s.within(t, 29*time.Minute, no, storeprint.StatusAttention) {
			t.Fatal("a ticket that waited 29 minutes was flagged stale after the wall clock jumped 31 minutes")
		}
		if !s.within(t, 2*time.Minute, no, storeprint.StatusAttention) {
			t.Fatal("a ticket that waited past stale_after was not flagged")
		}
		if task, _ := s.g.Task(context.Background(), no); task.Reason != storeprint.ReasonStale {
			t.Fatalf("got reason %q, want stale", task.Reason)
		}
	})
}

// A ticket's age counts from its acceptance. On a gateway up 20 s before
// the order, a ticket flagged the moment it was tried shows its own age,
// not the gateway's uptime; and so again after a restart.
func TestGateway_Waited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9", OnUncertain: "hold"}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &scripted{lose: true}
	open := func() (*gateway.Gateway, *badger.DB) {
		t.Helper()
		db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1, Logger: log, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		g, err := gateway.New(cfg, db, map[string]gateway.Printer{"hot-1": p}, gateway.Options{Clock: c, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		return g, db
	}
	g, db := open()
	g.Step(context.Background(), "hot-1")
	c.Advance(20 * time.Second) // the gateway has been up a while
	o := &storeprint.Order{OrderID: "a1", Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}
	if _, _, err := g.AcceptOrder(context.Background(), o, storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	no := storeprint.TaskNo("a1", "hot")
	for i := 0; i < 10 && g.Step(context.Background(), "hot-1") == 0; i++ {
	}
	waited := func(want time.Duration) {
		t.Helper()
		task, err := g.Task(context.Background(), no)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != storeprint.StatusAttention {
			t.Fatalf("got %s, want the ticket flagged", task.Status)
		}
		if got := g.Waited(task); got != want {
			t.Errorf("got waited %s, want %s: its age since acceptance", got, want)
		}
	}
	c.Advance(7 * time.Second)
	waited(7 * time.Second)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Second) // the service manager starts it again
	g, db = open()
	t.Cleanup(func() { db.Close() })
	c.Advance(3 * time.Second)
	waited(12 * time.Second)
}

// A burst leaves every ticket it brought waiting, and the gateway keeps
// each waiting ticket's times in memory: a few bytes a ticket, not the
// hundred that a map keyed by task number took (about 10 MiB resident
// for 100,000 tickets).
func TestTimes_Memory(t *testing.T) {
	const n, most = 100000, 40
	got := gateway.TimesHeld(n)
	t.Logf("%.1f bytes a task", got)
	if got > most {
		t.Fatalf("the times of %d waiting tasks hold %.0f bytes a task, want at most %d", n, got, most)
	}
}
