package gateway_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/internal/clock"
)

// chainPrinter is a printer that is ready, reports a state, or is gone
// from the network, and keeps the tickets it printed.
type chainPrinter struct {
	state   storeprint.PrinterState
	gone    bool
	printed []storeprint.Ticket
}

func (p *chainPrinter) Status(context.Context) (storeprint.PrinterStatus, error) {
	if p.gone {
		return storeprint.PrinterStatus{}, errors.New("connection refused")
	}
	if p.state == "" {
		return storeprint.PrinterStatus{State: storeprint.PrinterReady}, nil
	}
	return storeprint.PrinterStatus{State: p.state}, nil
}

func (p *chainPrinter) Print(ctx context.Context, job *gateway.PrintJob) error {
	switch {
	case p.gone:
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, State: storeprint.PrinterOffline, Err: errors.New("connection refused")}
	case p.state != "" && p.state != storeprint.PrinterReady:
		return &gateway.PrintError{Outcome: gateway.PrintNotReady, State: p.state}
	}
	if err := job.Prepare(ctx, []byte(job.Ticket.TaskNo)); err != nil {
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, Err: err}
	}
	job.Submitted(ctx, "")
	p.printed = append(p.printed, job.Ticket)
	return nil
}

func (p *chainPrinter) Close() error { return nil }

// chain is a gateway on a fake clock whose printers back each other up in
// a chain: hot-1 → pass-1 → expo-1.
type chain struct {
	g        *gateway.Gateway
	clock    *clock.Fake
	printers map[string]*chainPrinter
}

var chainIDs = []string{"hot-1", "pass-1", "expo-1"}

func newChain(t *testing.T) *chain {
	t.Helper()
	c := clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{
			{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9", Backup: "pass-1"},
			{ID: "pass-1", Driver: "tcp", Address: "127.0.0.1:9", Backup: "expo-1"},
			{ID: "expo-1", Driver: "tcp", Address: "127.0.0.1:9"},
		},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}},
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
	ch := &chain{clock: c, printers: map[string]*chainPrinter{}}
	drivers := map[string]gateway.Printer{}
	for _, id := range chainIDs {
		ch.printers[id] = &chainPrinter{}
		drivers[id] = ch.printers[id]
	}
	if ch.g, err = gateway.New(cfg, store, drivers, gateway.Options{Clock: c, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if err := ch.g.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Every printer has been read once, as the workers do at start.
	ch.step(t)
	return ch
}

// step runs every printer's queue until each waits, and returns the
// shortest wait.
func (ch *chain) step(t *testing.T) time.Duration {
	t.Helper()
	for i := 0; i < 100; i++ {
		shortest, busy := time.Duration(1<<62), false
		for _, id := range chainIDs {
			d := ch.g.Step(context.Background(), id)
			if d == 0 {
				busy = true
			}
			shortest = min(shortest, d)
		}
		if !busy {
			return shortest
		}
	}
	t.Fatal("the queues never wait")
	return 0
}

// until advances the clock by the workers' own waits for up to d and
// returns how long passed when done first returned true.
func (ch *chain) until(t *testing.T, d time.Duration, done func() bool) (time.Duration, bool) {
	t.Helper()
	for passed := time.Duration(0); ; {
		wait := ch.step(t)
		if done() {
			return passed, true
		}
		if passed+wait > d {
			return passed, false
		}
		ch.clock.Advance(wait)
		passed += wait
	}
}

func (ch *chain) post(t *testing.T, id string) string { return postNoodles(t, ch.g, id) }

func (ch *chain) printer(t *testing.T, id string) gateway.PrinterInfo {
	t.Helper()
	ps, err := ch.g.Printers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no printer %s", id)
	return gateway.PrinterInfo{}
}

// printedOn returns the ticket of taskNo printer id printed, if any.
func (ch *chain) printedOn(id, taskNo string) (storeprint.Ticket, bool) {
	for _, tk := range ch.printers[id].printed {
		if tk.TaskNo == taskNo {
			return tk, true
		}
	}
	return storeprint.Ticket{}, false
}

func TestGateway_Failover(t *testing.T) {
	t.Parallel()

	// A printer that goes offline with a ticket waiting hands it to its
	// backup within failover_after (10 s by default) of going offline,
	// the paper saying where it came from; not before a few seconds.
	t.Run("OfflineWithinFailoverAfter", func(t *testing.T) {
		t.Parallel()
		ch := newChain(t)
		ch.printers["hot-1"].state = storeprint.PrinterOffline
		no := ch.post(t, "o1")
		if passed, _ := ch.until(t, 5*time.Second, func() bool { _, ok := ch.printedOn("pass-1", no); return ok }); passed < 5*time.Second {
			t.Fatalf("moved to the backup after %s offline, want it to wait a few seconds first", passed)
		}
		passed, ok := ch.until(t, 10*time.Second, func() bool { _, ok := ch.printedOn("pass-1", no); return ok })
		if !ok {
			t.Fatalf("not on the backup %s after going offline, want within failover_after (10s)", 5*time.Second+passed)
		}
		tk, _ := ch.printedOn("pass-1", no)
		if tk.BackupFrom != "hot-1" {
			t.Errorf("got backup_from %q on paper, want hot-1", tk.BackupFrom)
		}
		if f := ch.printer(t, "hot-1").Failover; f == nil || !f.Active || f.Backup != "pass-1" {
			t.Errorf("got failover %+v, want active onto pass-1", f)
		}
	})

	// Gone from the network, with its backup out of paper: the ticket
	// goes on to the backup's backup, never to the printer out of paper.
	t.Run("GoneBackupOutOfPaper", func(t *testing.T) {
		t.Parallel()
		ch := newChain(t)
		ch.printers["hot-1"].gone = true
		ch.printers["pass-1"].state = storeprint.PrinterPaperEnd
		no := ch.post(t, "o1")
		if _, ok := ch.until(t, 10*time.Second, func() bool { _, ok := ch.printedOn("expo-1", no); return ok }); !ok {
			t.Fatalf("not on expo-1 within 10s; hot-1 %+v, pass-1 %+v", ch.printer(t, "hot-1"), ch.printer(t, "pass-1"))
		}
		if tk, _ := ch.printedOn("expo-1", no); tk.BackupFrom != "hot-1" {
			t.Errorf("got backup_from %q on paper, want hot-1", tk.BackupFrom)
		}
		if f := ch.printer(t, "hot-1").Failover; f == nil || f.Backup != "expo-1" {
			t.Errorf("got failover %+v, want onto expo-1", f)
		}
		if f := ch.printer(t, "pass-1").Failover; f != nil {
			t.Errorf("pass-1 (out of paper, nothing of its own waiting) got failover %+v, want none", f)
		}
	})

	// No printer along the chain is ready: the ticket waits where it is,
	// the printer says so, and it moves once a backup is ready again.
	t.Run("NoneReady", func(t *testing.T) {
		t.Parallel()
		ch := newChain(t)
		ch.printers["hot-1"].gone = true
		ch.printers["pass-1"].state = storeprint.PrinterPaperEnd
		ch.printers["expo-1"].state = storeprint.PrinterCoverOpen
		no := ch.post(t, "o1")
		if _, moved := ch.until(t, 30*time.Second, func() bool {
			task, err := ch.g.Task(context.Background(), no)
			return err != nil || task.PrinterID != "hot-1"
		}); moved {
			t.Fatal("the ticket moved although no printer of the chain is ready")
		}
		p := ch.printer(t, "hot-1")
		if !p.NoBackupReady || p.Failover != nil {
			t.Fatalf("got hot-1 %+v, want no_backup_ready and no failover", p)
		}
		ch.printers["expo-1"].state = ""
		if _, ok := ch.until(t, 2*time.Second, func() bool { _, ok := ch.printedOn("expo-1", no); return ok }); !ok {
			t.Fatal("not on expo-1 within 2s of it being ready again")
		}
		if p := ch.printer(t, "hot-1"); p.NoBackupReady {
			t.Errorf("hot-1 still says no backup is ready after failing over: %+v", p)
		}
		if len(ch.printers["pass-1"].printed) != 0 {
			t.Errorf("pass-1 is out of paper and printed %d tickets", len(ch.printers["pass-1"].printed))
		}
	})
}

// Once no ticket waits any more (voided), the printer no longer says that
// no backup can take its tickets.
func TestGateway_NoBackupReadyEnds(t *testing.T) {
	t.Parallel()
	ch := newChain(t)
	ch.printers["hot-1"].gone = true
	ch.printers["pass-1"].state = storeprint.PrinterPaperEnd
	ch.printers["expo-1"].state = storeprint.PrinterCoverOpen
	ch.post(t, "o1")
	if _, ok := ch.until(t, 15*time.Second, func() bool { return ch.printer(t, "hot-1").NoBackupReady }); !ok {
		t.Fatal("hot-1 does not say that no backup is ready")
	}
	if _, err := ch.g.Void(context.Background(), "o1", gateway.Actor{Operator: "amy", Reason: "guest left"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ch.until(t, 2*time.Second, func() bool { return !ch.printer(t, "hot-1").NoBackupReady }); !ok {
		t.Fatal("hot-1 still says no backup can take its tickets, with none waiting")
	}
}
