package printertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// Sim is the simulated printer behind a driver under test: the suite sets
// its faults and reads its paper. *printersim.Printer is one; a transport
// whose simulator is not printersim (a fake Windows spooler) provides its
// own.
type Sim interface {
	SetFault(printersim.Fault)
	Printed() []printersim.Ticket
	WaitPrinted(ctx context.Context, n int) ([]printersim.Ticket, error)
}

// Harness connects one driver to the suite.
type Harness struct {
	// Open starts a fresh simulated printer with opts and returns a
	// driver for it configured with cfg; the harness fills in what its
	// transport needs (Driver, Address, serial settings). The harness
	// closes both with t.Cleanup.
	Open func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, Sim)

	// Unreachable returns a driver configured with cfg for a printer
	// nothing answers for: a closed port, a missing device, an unknown
	// queue.
	Unreachable func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer

	// LastLine returns the last text line of a payload as the driver's
	// Encode made it (what Prepare is given). nil reads ESC/POS.
	LastLine func(t *testing.T, payload []byte) string

	// Models says the driver reaches ESC/POS printers on a byte stream
	// (tcp, serial): the suite runs once per simulated model
	// (printersim.Models) with the model's confirmation method as the
	// printer's confirm, and checks that confirm = "auto" finds it.
	Models bool

	// Script, for a driver on a byte stream, returns a driver configured
	// with cfg for a device that serve scripts at the other end of the
	// stream (a socket, a serial line); the harness closes both with
	// t.Cleanup. With it the suite also checks how the driver reads a
	// printer's answers, and that a ticket without a store id is headed
	// by the driver's, which must be store-001 (Open's too).
	Script func(t *testing.T, cfg gateway.PrinterConfig, serve Serve) gateway.Printer
}

// Timeouts the suite gives drivers. Short ones are for the cases that must
// end in a timeout; no case asserts how long anything took.
const (
	waitTimeout    = 10 * time.Second // bounds every wait; reached only when broken
	confirmTimeout = 5 * time.Second  // for prints that are confirmed or fail fast
	shortTimeout   = 100 * time.Millisecond
)

// Config returns the printer configuration the suite uses, with the given
// confirm timeout. Harnesses may use it to build drivers of their own.
func Config(confirm time.Duration) gateway.PrinterConfig {
	return gateway.PrinterConfig{
		ID:             "sim-1",
		Encoding:       escpos.GB18030,
		Width:          storeprint.DefaultWidth,
		OnUncertain:    "hold",
		ConnectTimeout: gateway.Duration{Duration: 2 * time.Second},
		ConfirmTimeout: gateway.Duration{Duration: confirm},
	}
}

// StartTCP serves a fresh simulated printer on a loopback port and
// returns it and its address; it is closed with t.Cleanup.
func StartTCP(t testing.TB, opts printersim.Options) (*printersim.Printer, string) {
	t.Helper()
	return start(t, opts, (*printersim.Printer).Serve)
}

// start serves a fresh simulated printer on a loopback port with serve
// and returns it and its address; it is closed with t.Cleanup.
func start(t testing.TB, opts printersim.Options, serve func(*printersim.Printer, net.Listener) error) (*printersim.Printer, string) {
	t.Helper()
	sim, err := printersim.New(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- serve(sim, l) }()
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("close simulator: %v", err)
		}
		// ErrClosed: Close came before Serve got going.
		if err := <-served; err != nil && !errors.Is(err, printersim.ErrClosed) {
			t.Errorf("simulator: %v", err)
		}
	})
	return sim, l.Addr().String()
}

// ClosedAddr returns a loopback address nothing listens on.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// Exercise runs the conformance suite against the driver h opens.
func Exercise(t *testing.T, h Harness) {
	if h.Script != nil {
		t.Run("Stream", func(t *testing.T) {
			t.Parallel()
			testStream(t, h)
		})
	}
	if !h.Models {
		exercise(t, h)
		return
	}
	for _, m := range printersim.Models {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			exercise(t, withModel(h, m, m.Confirms()))
		})
		t.Run(string(m)+"/Auto", func(t *testing.T) {
			t.Parallel()
			testAuto(t, withModel(h, m, printerdrivers.ConfirmAuto), m)
		})
	}
}

// withModel returns h opening simulators of model m, with the printer's
// confirm set to confirm: its Options are a printerdrivers.Stream, which
// the drivers on a byte stream take as their own.
func withModel[C ~string](h Harness, m printersim.Model, confirm C) Harness {
	open, unreachable := h.Open, h.Unreachable
	h.Open = func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, Sim) {
		cfg.Options, opts.Model = printerdrivers.Stream{Confirm: string(confirm)}, m
		return open(t, cfg, opts)
	}
	h.Unreachable = func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer {
		cfg.Options = printerdrivers.Stream{Confirm: string(confirm)}
		return unreachable(t, cfg)
	}
	return h
}

// testAuto checks that confirm = "auto" finds the strongest confirmation
// model m answers, prints with it and never goes below it: once found, a
// lost answer leaves the ticket uncertain, and a connection cut mid-ticket
// too.
func testAuto(t *testing.T, h Harness, m printersim.Model) {
	want := m.Confirms()
	t.Run("Status", func(t *testing.T) {
		t.Parallel()
		p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
		if st, err := p.Status(WaitCtx(t)); err != nil || st.State != storeprint.PrinterReady {
			t.Fatalf("Status: got %+v, %v; want ready", st, err)
		}
		if got := confirmsOf(p); got != want {
			t.Fatalf("got confirms %q after a status read, want %q", got, want)
		}
		if n := len(sim.Printed()); n != 0 {
			t.Fatalf("finding out how it confirms printed %d tickets, want none", n)
		}
	})
	t.Run("Print", func(t *testing.T) {
		t.Parallel()
		p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
		r := &recorder{}
		j := r.job(Ticket("order_1_station_hot"), "0001")
		if err := p.Print(WaitCtx(t), j); err != nil {
			t.Fatalf("Print: got %v, want nil", err)
		}
		if j.Confirms != want {
			t.Errorf("got the job confirmed by %q, want %q", j.Confirms, want)
		}
		if got := confirmsOf(p); got != want {
			t.Errorf("got confirms %q, want %q", got, want)
		}
		if got := TaskNos(sim.Printed()); len(got) != 1 {
			t.Fatalf("got on paper %q, want the ticket once", got)
		}
	})
	t.Run("ErrLostAck", func(t *testing.T) {
		t.Parallel()
		// Long enough for a status-confirmed ticket to print, short
		// enough for the lost answer's wait.
		p, sim := h.Open(t, Config(2*time.Second), printersim.Options{})
		if err := p.Print(WaitCtx(t), (&recorder{}).job(Ticket("order_1_station_hot"), "0001")); err != nil {
			t.Fatalf("first Print: %v", err)
		}
		// Its answers are lost from now on: a weaker method is not
		// taken for it, the ticket is uncertain.
		sim.SetFault(printersim.FaultLostAck)
		r := &recorder{}
		j := r.job(Ticket("order_2_station_hot"), "0002")
		err := p.Print(WaitCtx(t), j)
		CheckOutcome(t, err, gateway.PrintUncertain, "")
		if j.Confirms != want {
			t.Errorf("got the job to be confirmed by %q, want %q", j.Confirms, want)
		}
		r.check(t, "prepare,submitted")
		if printed := WaitPrinted(t, sim, 2); len(printed) != 2 {
			t.Fatalf("got %d tickets, want 2", len(printed))
		}
	})
	t.Run("ErrLostAckFromStart", func(t *testing.T) {
		t.Parallel()
		// Its answers are lost from the first connection on: it is not
		// taken for a printer that answers only its status.
		p, sim := h.Open(t, Config(2*time.Second), printersim.Options{Fault: printersim.FaultLostAck})
		r := &recorder{}
		j := r.job(Ticket("order_1_station_hot"), "0001")
		err := p.Print(WaitCtx(t), j)
		CheckOutcome(t, err, gateway.PrintUncertain, "")
		if j.Confirms != want {
			t.Errorf("got the job to be confirmed by %q, want %q", j.Confirms, want)
		}
		WaitPrinted(t, sim, 1)
	})
	t.Run("ErrDrop", func(t *testing.T) {
		t.Parallel()
		p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{Fault: printersim.FaultDrop})
		r := &recorder{}
		err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
		CheckOutcome(t, err, gateway.PrintUncertain, "")
		sim.SetFault(printersim.FaultNone)
		nothingPending(t, p, sim)
	})
}

// confirmsOf returns how p says it confirms, or "" when it does not say.
func confirmsOf(p gateway.Printer) storeprint.Confirm {
	if r, ok := p.(gateway.ConfirmsReporter); ok {
		return r.Confirms()
	}
	return ""
}

func exercise(t *testing.T, h Harness) {
	t.Run("Status", func(t *testing.T) {
		t.Parallel()
		testStatus(t, h)
	})
	t.Run("Print", func(t *testing.T) {
		t.Parallel()
		testPrint(t, h)
	})
}

func testStatus(t *testing.T, h Harness) {
	for _, f := range []printersim.Fault{printersim.FaultNone, printersim.FaultOffline, printersim.FaultPaperEnd,
		printersim.FaultCoverOpen, printersim.FaultSlow, printersim.FaultLostAck} {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			p, _ := h.Open(t, Config(confirmTimeout), printersim.Options{Fault: f})
			got, err := p.Status(WaitCtx(t))
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if want := f.Status(); got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		p, _ := h.Open(t, Config(confirmTimeout), printersim.Options{Fault: printersim.FaultDown})
		got, err := p.Status(WaitCtx(t))
		if err != nil || got.State != storeprint.PrinterOffline {
			t.Fatalf("got %+v, %v; want offline and no error", got, err)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		p := h.Unreachable(t, Config(confirmTimeout))
		got, err := p.Status(WaitCtx(t))
		if err != nil || got.State != storeprint.PrinterOffline {
			t.Fatalf("got %+v, %v; want offline and no error", got, err)
		}
	})
	t.Run("ErrCanceled", func(t *testing.T) {
		t.Parallel()
		p, _ := h.Open(t, Config(confirmTimeout), printersim.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got, err := p.Status(ctx)
		if !errors.Is(err, context.Canceled) || got.State != storeprint.PrinterUnknown {
			t.Fatalf("got %+v, %v; want unknown and context.Canceled", got, err)
		}
	})
}

func testPrint(t *testing.T, h Harness) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"OK", printOK},
		{"Marks", printMarks},
		{"Sequence", printSequence},
		{"ErrNotReady", printErrNotReady},
		{"ErrLostAck", printErrLostAck},
		{"ErrDrop", printErrDrop},
		{"ErrTimeout", printErrTimeout},
		{"ErrDown", printErrDown},
		{"ErrUnreachable", printErrUnreachable},
		{"ErrPrepare", printErrPrepare},
		{"ErrCanceled", printErrCanceled},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// printOK: the ticket printed once, with its lines; Prepare saw exactly what went out.
func printOK(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
	r := &recorder{}
	tk := Ticket("order_1001_station_hot")
	if err := p.Print(WaitCtx(t), r.job(tk, "0001")); err != nil {
		t.Fatalf("Print: got %v, want nil", err)
	}
	printed := sim.Printed()
	if len(printed) != 1 || printed[0].TaskNo != tk.TaskNo {
		t.Fatalf("got on paper %+v, want exactly %s", printed, tk.TaskNo)
	}
	for _, want := range []string{"2 x 宫保鸡丁", "  - 不要花生", "Table: A3", "hot"} {
		if !strings.Contains(printed[0].Text, want) {
			t.Errorf("got ticket text %q, want %q in it", printed[0].Text, want)
		}
	}
	if strings.Contains(printed[0].Text, "REPRINT") {
		t.Errorf("got REPRINT on a first print")
	}
	r.check(t, "prepare,submitted")
	// What Prepare saw is what was printed.
	last := h.LastLine
	if last == nil {
		last = lastLine
	}
	if got := last(t, r.payload()); got != tk.TaskNo {
		t.Errorf("Prepare's payload ends with line %q, want the task_no", got)
	}
}

// printMarks: the REPRINT, BACKUP FROM and COPY OF lines.
func printMarks(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
	tk := Ticket("order_1001_station_hot_copy_1")
	tk.Reprint, tk.BackupFrom, tk.CopyOf = true, "hot-1", "order_1001_station_hot"
	if err := p.Print(WaitCtx(t), (&recorder{}).job(tk, "0002")); err != nil {
		t.Fatalf("Print: %v", err)
	}
	text := sim.Printed()[0].Text
	for _, want := range []string{"REPRINT", "BACKUP FROM hot-1", "COPY OF order_1001_station_hot"} {
		if !strings.Contains(text, want) {
			t.Errorf("got ticket text %q, want %q in it", text, want)
		}
	}
}

// printSequence: tickets printed one after another come out in order.
func printSequence(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
	want := []string{"order_1_station_hot", "order_2_station_hot", "order_3_station_hot"}
	for i, taskNo := range want {
		if err := p.Print(WaitCtx(t), (&recorder{}).job(Ticket(taskNo), "000"+string(rune('1'+i)))); err != nil {
			t.Fatalf("Print %s: %v", taskNo, err)
		}
	}
	if got := TaskNos(sim.Printed()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got on paper %q, want %q", got, want)
	}
}

// printErrNotReady: a printer that says it cannot print gets nothing.
func printErrNotReady(t *testing.T, h Harness) {
	t.Parallel()
	for _, f := range []printersim.Fault{printersim.FaultPaperEnd, printersim.FaultCoverOpen, printersim.FaultOffline} {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{Fault: f})
			r := &recorder{}
			err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
			CheckOutcome(t, err, gateway.PrintNotReady, f.Status().State)
			r.check(t, "")
			sim.SetFault(printersim.FaultNone)
			nothingPending(t, p, sim)
		})
	}
}

// printErrLostAck: no confirmation after the bytes went out: uncertain, and the paper came out once.
func printErrLostAck(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(shortTimeout), printersim.Options{Fault: printersim.FaultLostAck})
	r := &recorder{}
	err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
	CheckOutcome(t, err, gateway.PrintUncertain, "")
	r.check(t, "prepare,submitted")
	// Paper came out all the same: exactly once.
	printed := WaitPrinted(t, sim, 1)
	if len(printed) != 1 || printed[0].TaskNo != "order_1_station_hot" {
		t.Fatalf("got on paper %+v, want the ticket once", printed)
	}
}

// printErrDrop: the connection drops mid-ticket: uncertain.
func printErrDrop(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{Fault: printersim.FaultDrop})
	r := &recorder{}
	err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
	CheckOutcome(t, err, gateway.PrintUncertain, "")
	if n := r.count("prepare"); n != 1 {
		t.Fatalf("got %d Prepare calls, want 1", n)
	}
	sim.SetFault(printersim.FaultNone)
	nothingPending(t, p, sim)
}

// printErrTimeout: the confirmation comes after the timeout: uncertain.
func printErrTimeout(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(shortTimeout), printersim.Options{Fault: printersim.FaultSlow, SlowDelay: time.Hour})
	r := &recorder{}
	err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
	CheckOutcome(t, err, gateway.PrintUncertain, "")
	r.check(t, "prepare,submitted")
	if got := sim.Printed(); len(got) != 0 {
		t.Fatalf("got %d tickets within the slow delay, want none yet", len(got))
	}
	// The printer finishes later: the paper the outcome was uncertain about.
	sim.SetFault(printersim.FaultNone)
	if printed := WaitPrinted(t, sim, 1); len(printed) != 1 {
		t.Fatalf("got %d tickets, want 1", len(printed))
	}
}

// printErrDown: a printer that is down: not sent.
func printErrDown(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{Fault: printersim.FaultDown})
	r := &recorder{}
	err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
	CheckOutcome(t, err, gateway.PrintNotSent, storeprint.PrinterOffline)
	r.check(t, "")
	sim.SetFault(printersim.FaultNone)
	nothingPending(t, p, sim)
}

// printErrUnreachable: a printer that cannot be reached: not sent.
func printErrUnreachable(t *testing.T, h Harness) {
	t.Parallel()
	p := h.Unreachable(t, Config(confirmTimeout))
	r := &recorder{}
	err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
	CheckOutcome(t, err, gateway.PrintNotSent, storeprint.PrinterOffline)
	r.check(t, "")
}

// printErrPrepare: Prepare fails: nothing sent.
func printErrPrepare(t *testing.T, h Harness) {
	t.Parallel()
	p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
	boom := errors.New("receipt store full")
	r := &recorder{prepareErr: boom}
	err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001"))
	CheckOutcome(t, err, gateway.PrintNotSent, "")
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want it to wrap the Prepare error", err)
	}
	r.check(t, "prepare")
	nothingPending(t, p, sim)
}

// printErrCanceled: cancelled before, in Prepare or while waiting for the confirmation.
func printErrCanceled(t *testing.T, h Harness) {
	t.Parallel()
	t.Run("Before", func(t *testing.T) {
		t.Parallel()
		p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := &recorder{}
		err := p.Print(ctx, r.job(Ticket("order_1_station_hot"), "0001"))
		CheckOutcome(t, err, gateway.PrintNotSent, "")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want it to wrap context.Canceled", err)
		}
		r.check(t, "")
		nothingPending(t, p, sim)
	})
	t.Run("InPrepare", func(t *testing.T) {
		t.Parallel()
		p, sim := h.Open(t, Config(confirmTimeout), printersim.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &recorder{onPrepare: cancel}
		err := p.Print(ctx, r.job(Ticket("order_1_station_hot"), "0001"))
		CheckOutcome(t, err, gateway.PrintNotSent, "")
		r.check(t, "prepare")
		nothingPending(t, p, sim)
	})
	t.Run("Waiting", func(t *testing.T) {
		t.Parallel()
		// No confirmation ever comes and the timeout is far off:
		// only the cancellation can end the wait.
		p, sim := h.Open(t, Config(time.Minute), printersim.Options{Fault: printersim.FaultLostAck})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &recorder{onSubmitted: cancel}
		err := p.Print(ctx, r.job(Ticket("order_1_station_hot"), "0001"))
		CheckOutcome(t, err, gateway.PrintUncertain, "")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want it to wrap context.Canceled", err)
		}
		r.check(t, "prepare,submitted")
		WaitPrinted(t, sim, 1)
	})
}

// Ticket returns the ticket the suite prints, with the given task_no.
func Ticket(taskNo string) storeprint.Ticket {
	return storeprint.Ticket{
		StoreID: "store-001",
		Station: "hot",
		OrderID: "1001",
		Table:   "A3",
		Items: []storeprint.Item{
			{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "不要花生"},
			{Name: "Fried rice", Qty: 1, Station: "hot"},
		},
		AcceptedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		TaskNo:     taskNo,
	}
}

// CheckOutcome checks that err is a *gateway.PrintError with outcome want
// and, when wantState is not empty, that state.
func CheckOutcome(t testing.TB, err error, want gateway.PrintOutcome, wantState storeprint.PrinterState) {
	t.Helper()
	var pe *gateway.PrintError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v (%T), want a *gateway.PrintError %s", err, err, want)
	}
	if pe.Outcome != want {
		t.Fatalf("got outcome %s (%v), want %s", pe.Outcome, err, want)
	}
	if wantState != "" && pe.State != wantState {
		t.Fatalf("got state %q (%v), want %q", pe.State, err, wantState)
	}
}

// nothingPending checks that the printer holds no ticket from before: one
// more print, which must succeed, is the only one on paper.
func nothingPending(t *testing.T, p gateway.Printer, sim Sim) {
	t.Helper()
	if err := p.Print(WaitCtx(t), (&recorder{}).job(Ticket("order_2_station_hot"), "0002")); err != nil {
		t.Fatalf("Print after the fault cleared: %v", err)
	}
	if got := TaskNos(sim.Printed()); len(got) != 1 || got[0] != "order_2_station_hot" {
		t.Fatalf("got on paper %q, want only the ticket printed after the fault", got)
	}
}

// WaitCtx returns a context that ends when t does, or once the suite's
// bound on every wait has passed: reached only when something is broken.
func WaitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// WaitPrinted waits until sim has printed n tickets and returns them.
func WaitPrinted(t testing.TB, sim Sim, n int) []printersim.Ticket {
	t.Helper()
	got, err := sim.WaitPrinted(WaitCtx(t), n)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TaskNos returns the task numbers of printed tickets, in order.
func TaskNos(ts []printersim.Ticket) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.TaskNo)
	}
	return out
}

// LastText returns the last of lines that is not blank, trimmed, or "".
func LastText(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}

// lastLine decodes an ESC/POS payload and returns its last non-empty line.
func lastLine(t *testing.T, payload []byte) string {
	t.Helper()
	d, err := escpos.NewDecoder(escpos.GB18030)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, ev := range d.Decode(payload) {
		if ev.Kind == escpos.EventLine && strings.TrimSpace(ev.Text) != "" {
			last = strings.TrimSpace(ev.Text)
		}
	}
	return last
}

// recorder builds print jobs and records the driver's calls to them.
type recorder struct {
	prepareErr  error
	onPrepare   func()
	onSubmitted func()

	mu       sync.Mutex
	calls    []string
	prepared []byte
}

func (r *recorder) job(t storeprint.Ticket, processID string) *gateway.PrintJob {
	return &gateway.PrintJob{
		Ticket:    t,
		ProcessID: processID,
		Prepare: func(ctx context.Context, payload []byte) error {
			r.mu.Lock()
			r.calls = append(r.calls, "prepare")
			r.prepared = append([]byte(nil), payload...)
			r.mu.Unlock()
			if r.onPrepare != nil {
				r.onPrepare()
			}
			return r.prepareErr
		},
		Submitted: func(ctx context.Context, jobID string) {
			r.mu.Lock()
			r.calls = append(r.calls, "submitted")
			r.mu.Unlock()
			if r.onSubmitted != nil {
				r.onSubmitted()
			}
		},
	}
}

// check checks the calls made, in order, comma-separated.
func (r *recorder) check(t *testing.T, want string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := strings.Join(r.calls, ","); got != want {
		t.Fatalf("got calls %q, want %q", got, want)
	}
}

func (r *recorder) count(call string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c == call {
			n++
		}
	}
	return n
}

func (r *recorder) payload() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prepared
}

// StartEPOS serves a fresh simulated printer's ePOS-Print service on a
// loopback port and returns it and its base URL (http://127.0.0.1:N); it
// is closed with t.Cleanup.
func StartEPOS(t testing.TB, opts printersim.Options, eopts printersim.EPOSOptions) (*printersim.Printer, string) {
	t.Helper()
	sim, addr := start(t, opts, func(sim *printersim.Printer, l net.Listener) error { return sim.ServeEPOS(l, eopts) })
	return sim, "http://" + addr
}

// StartCloudPRNT starts a fresh simulated printer polling the CloudPRNT
// endpoint at url as copts says, and returns it once the endpoint has its
// first poll (at once when opts.Fault is down). Its SetFault returns once
// the endpoint has the new status. It is stopped with t.Cleanup.
func StartCloudPRNT(t testing.TB, url string, opts printersim.Options, copts printersim.CloudPRNTOptions) *printersim.CloudPRNT {
	t.Helper()
	sim, err := printersim.New(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	copts.URL = url
	c, err := sim.NewCloudPRNT(copts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simulator: %v", err)
		}
		if err := sim.Close(); err != nil {
			t.Errorf("close simulator: %v", err)
		}
	})
	if opts.Fault != printersim.FaultDown {
		c.SetFault(opts.Fault) // the first poll, with the fault it starts in
	}
	return c
}

// ServeHTTP serves h on a loopback port until t ends and returns its
// base URL (http://127.0.0.1:N).
func ServeHTTP(t testing.TB, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + l.Addr().String()
}
