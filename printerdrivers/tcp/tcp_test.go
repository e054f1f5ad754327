package tcp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

func harness() printertest.Harness {
	return printertest.Harness{
		Models: true,
		Open: func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, printertest.Sim) {
			sim, addr := printertest.StartTCP(t, opts)
			return open(t, cfg, addr), sim
		},
		Unreachable: func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer {
			return open(t, cfg, printertest.ClosedAddr(t))
		},
		Script: func(t *testing.T, cfg gateway.PrinterConfig, serve printertest.Serve) gateway.Printer {
			return open(t, cfg, script(t, serve))
		},
	}
}

func open(t *testing.T, cfg gateway.PrinterConfig, addr string) *tcp.Printer {
	t.Helper()
	cfg.Driver, cfg.Address = "tcp", addr
	if cfg.Options == nil {
		// These tests script a TM printer (GS ( H); the conformance
		// suite covers every confirmation method.
		cfg.Options = printerdrivers.Stream{Confirm: "process_id"}
	}
	p := tcp.New(cfg, "store-001")
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPrinter_Conformance(t *testing.T) {
	t.Parallel()
	printertest.Exercise(t, harness())
}

// script is a device at a TCP address that does what the test says, for
// the behaviours the simulator has no fault for.
func script(t *testing.T, serve printertest.Serve) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c, bufio.NewReader(c))
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}

// Probe proves the print path without paper: a printer that prints and
// confirms answers it, and so does one that cuts off as ticket text
// arrives (there is none); one that loses its confirmations, or cannot be
// reached, does not; nothing comes out of any of them.
func TestPrinter_Probe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault printersim.Fault
		ok    bool
	}{
		{printersim.FaultNone, true},
		{printersim.FaultDrop, true},
		{printersim.FaultLostAck, false},
		{printersim.FaultDown, false},
		{printersim.FaultPaperEnd, false},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			t.Parallel()
			sim, addr := printertest.StartTCP(t, printersim.Options{Fault: tc.fault})
			p := open(t, printertest.Config(300*time.Millisecond), addr)
			err := p.Probe(context.Background())
			if (err == nil) != tc.ok {
				t.Fatalf("got %v, want ok %v", err, tc.ok)
			}
			if n := len(sim.Printed()); n != 0 {
				t.Fatalf("a probe printed %d tickets", n)
			}
		})
	}
}

// A printer confirmed by its status only (confirm = "status", a printer
// that answers DLE EOT alone): done once the printer stayed ready for the
// time the ticket takes to print, on the pipeline's clock; a cover opened
// meanwhile leaves the ticket uncertain.
func TestPrinter_ConfirmStatus(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*tcp.Printer, *printersim.Printer, *clock.Fake) {
		sim, addr := printertest.StartTCP(t, printersim.Options{Model: printersim.ModelDumb})
		cfg := printertest.Config(time.Minute)
		cfg.Options = printerdrivers.Stream{Confirm: "status"}
		p := open(t, cfg, addr)
		fake := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
		p.SetClock(fake)
		return p, sim, fake
	}
	start := func(p *tcp.Printer) (chan error, *gateway.PrintJob) {
		job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001"}
		done := make(chan error, 1)
		go func() { done <- p.Print(context.Background(), job) }()
		return done, job
	}
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p, sim, fake := setup(t)
		done, job := start(p)
		waitTimer(t, fake)
		select {
		case err := <-done:
			t.Fatalf("got %v before the ticket's printing time passed, want a wait", err)
		default:
		}
		for {
			fake.Advance(time.Second)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Print: %v", err)
				}
				if job.Confirms != storeprint.ConfirmStatus {
					t.Errorf("got confirmed by %q, want status", job.Confirms)
				}
				// The simulator records the ticket as it takes it in, on
				// its own goroutine: the status said ready, not that.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if got, err := sim.WaitPrinted(ctx, 1); err != nil || len(got) != 1 {
					t.Errorf("got %d tickets (%v), want 1", len(got), err)
				}
				return
			case <-timerSet(fake):
			}
		}
	})
	t.Run("ErrCoverOpen", func(t *testing.T) {
		t.Parallel()
		p, sim, fake := setup(t)
		done, _ := start(p)
		waitTimer(t, fake) // the first reading after the ticket was ready
		sim.SetFault(printersim.FaultCoverOpen)
		fake.Advance(time.Second)
		printertest.CheckOutcome(t, <-done, gateway.PrintUncertain, storeprint.PrinterCoverOpen)
	})
}

func waitTimer(t *testing.T, fake *clock.Fake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fake.WaitTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// timerSet returns a channel closed once a timer waits on fake.
func timerSet(fake *clock.Fake) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = fake.WaitTimers(ctx, 1) // a timeout shows as the test's own
		close(ch)
	}()
	return ch
}

// Probe asks the printer's own confirmation request alone: a printer
// confirmed by GS r answers GS r 1 (and not GS ( H), one confirmed by its
// status answers its status; one whose GS r answers are lost does not
// answer.
func TestPrinter_ProbeModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model   printersim.Model
		confirm string
		fault   printersim.Fault
		ok      bool
	}{
		{printersim.ModelBasic, "transmit_status", printersim.FaultNone, true},
		{printersim.ModelBasic, "process_id", printersim.FaultNone, false},
		{printersim.ModelBasic, "transmit_status", printersim.FaultLostAck, false},
		{printersim.ModelDumb, "status", printersim.FaultNone, true},
		{printersim.ModelDumb, "transmit_status", printersim.FaultNone, false},
		{printersim.ModelBasic, "auto", printersim.FaultNone, true},
	} {
		t.Run(string(tc.model)+"/"+tc.confirm+"/"+string(tc.fault), func(t *testing.T) {
			t.Parallel()
			sim, addr := printertest.StartTCP(t, printersim.Options{Model: tc.model, Fault: tc.fault})
			cfg := printertest.Config(300 * time.Millisecond)
			cfg.Options = printerdrivers.Stream{Confirm: tc.confirm}
			p := open(t, cfg, addr)
			err := p.Probe(context.Background())
			if (err == nil) != tc.ok {
				t.Fatalf("got %v, want ok %v", err, tc.ok)
			}
			if n := len(sim.Printed()); n != 0 {
				t.Fatalf("a probe printed %d tickets", n)
			}
		})
	}
}

// An Epson TM printer whose confirmations are lost from its first
// connection on answers neither GS ( H nor GS r, as a status-only printer
// would; it says it is an Epson (GS I 66), so confirm = "auto" keeps
// process_id and its ticket is uncertain, not done on its status.
func TestPrinter_AutoEpsonLostAck(t *testing.T) {
	t.Parallel()
	sim, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultLostAck})
	cfg := printertest.Config(300 * time.Millisecond)
	cfg.Options = printerdrivers.Stream{Confirm: "auto"}
	p := open(t, cfg, addr)
	job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001"}
	err := p.Print(context.Background(), job)
	printertest.CheckOutcome(t, err, gateway.PrintUncertain, "")
	if job.Confirms != storeprint.ConfirmProcessID || p.Confirms() != storeprint.ConfirmProcessID {
		t.Fatalf("got the job to be confirmed by %q, the printer by %q; want process_id", job.Confirms, p.Confirms())
	}
	if _, err := sim.WaitPrinted(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPrinter_PrintAuto prints one ticket per op on each simulated
// model under confirm = "auto": what finding out at each connection and
// each method's confirmation cost per ticket.
func BenchmarkPrinter_PrintAuto(b *testing.B) {
	for _, m := range printersim.Models {
		b.Run(string(m), func(b *testing.B) {
			_, addr := printertest.StartTCP(b, printersim.Options{Model: m})
			cfg := printertest.Config(5 * time.Second)
			cfg.Driver, cfg.Address, cfg.Options = "tcp", addr, printerdrivers.Stream{Confirm: "auto"}
			p := tcp.New(cfg, "store-001")
			defer p.Close()
			for i := 0; b.Loop(); i++ {
				job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: fmt.Sprintf("%04d", i%10000)}
				if err := p.Print(context.Background(), job); err != nil {
					b.Fatal(err)
				}
				if job.Confirms != m.Confirms() {
					b.Fatalf("got confirmed by %q, want %q", job.Confirms, m.Confirms())
				}
			}
		})
	}
}
