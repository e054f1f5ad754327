package epos_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

func harness(eopts printersim.EPOSOptions) printertest.Harness {
	return printertest.Harness{
		Open: func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, printertest.Sim) {
			sim, base := printertest.StartEPOS(t, opts, eopts)
			cfg.Options = epos.Options{JobLog: eopts.JobLog}
			return open(t, cfg, base), sim
		},
		Unreachable: func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer {
			return open(t, cfg, "http://"+printertest.ClosedAddr(t))
		},
		LastLine: lastLine,
	}
}

func open(t *testing.T, cfg gateway.PrinterConfig, base string) *epos.Printer {
	t.Helper()
	cfg.Driver, cfg.Address = "epos", base
	p := epos.New(cfg, "store-001")
	t.Cleanup(func() { p.Close() })
	return p
}

// lastLine reads the last text line of a request as the printer does.
func lastLine(t *testing.T, payload []byte) string {
	t.Helper()
	req, err := epos.ParseRequest(payload)
	if err != nil {
		t.Fatalf("parse the request Prepare was given: %v", err)
	}
	if len(req.Tickets) != 1 {
		t.Fatalf("got %d cut tickets in the request, want 1", len(req.Tickets))
	}
	lines := req.Tickets[0]
	return printertest.LastText(lines)
}

func TestPrinter_Conformance(t *testing.T) {
	t.Parallel()
	t.Run("NoJobLog", func(t *testing.T) {
		t.Parallel()
		printertest.Exercise(t, harness(printersim.EPOSOptions{}))
	})
	t.Run("JobLog", func(t *testing.T) {
		t.Parallel()
		printertest.Exercise(t, harness(printersim.EPOSOptions{JobLog: true}))
	})
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// printUncertain prints one ticket on a printer under fault and returns
// the receipt the gateway would hold for the attempt.
func printUncertain(t *testing.T, fault printersim.Fault, jobLog bool) (*epos.Printer, *printersim.Printer, *gateway.Receipt) {
	t.Helper()
	sim, base := printertest.StartEPOS(t, printersim.Options{Fault: fault}, printersim.EPOSOptions{JobLog: jobLog})
	cfg := printertest.Config(5 * time.Second)
	cfg.Options = epos.Options{JobLog: jobLog}
	p := open(t, cfg, base)
	r := &gateway.Receipt{TaskNo: "order_7_station_hot", Attempt: 3, ProcessID: "0421"}
	job := &gateway.PrintJob{Ticket: printertest.Ticket(r.TaskNo), Attempt: r.Attempt, ProcessID: r.ProcessID,
		Submitted: func(_ context.Context, jobID string) { r.JobID = jobID }}
	err := p.Print(waitCtx(t), job)
	if gateway.Outcome(err) != gateway.PrintUncertain {
		t.Fatalf("Print: got %v, want an uncertain outcome", err)
	}
	return p, sim, r
}

func TestPrinter_Settle(t *testing.T) {
	t.Parallel()

	t.Run("Printed", func(t *testing.T) {
		t.Parallel()
		// The ticket printed and the connection was cut before the answer.
		p, sim, r := printUncertain(t, printersim.FaultLostAck, true)
		if r.JobID != epos.JobID(r.TaskNo, r.Attempt, r.ProcessID) {
			t.Fatalf("got job id %q in the submitted receipt, want the attempt's", r.JobID)
		}
		v, err := p.Settle(waitCtx(t), r)
		if err != nil || v.Outcome != gateway.SettledPrinted {
			t.Fatalf("got %+v, %v; want settled printed", v, err)
		}
		if !strings.Contains(v.How, r.JobID) {
			t.Errorf("got how %q, want the job id in it", v.How)
		}
		if n := len(sim.Printed()); n != 1 {
			t.Fatalf("got %d tickets, want 1", n)
		}
	})

	t.Run("NotPrinted", func(t *testing.T) {
		t.Parallel()
		// The connection was cut as the ticket arrived: nothing printed.
		p, sim, r := printUncertain(t, printersim.FaultDrop, true)
		r.JobID = "" // a crash before the submitted receipt: the id comes from the attempt
		v, err := p.Settle(waitCtx(t), r)
		if err != nil || v.Outcome != gateway.SettledNotPrinted {
			t.Fatalf("got %+v, %v; want settled not printed", v, err)
		}
		if n := len(sim.Printed()); n != 0 {
			t.Fatalf("got %d tickets, want none", n)
		}
	})

	t.Run("StillPrinting", func(t *testing.T) {
		t.Parallel()
		// Slow: the print request times out while the printer prints on;
		// the job log says printing until it is done.
		sim, base := printertest.StartEPOS(t, printersim.Options{Fault: printersim.FaultSlow, SlowDelay: time.Hour},
			printersim.EPOSOptions{JobLog: true})
		cfg := printertest.Config(100 * time.Millisecond)
		cfg.Options = epos.Options{JobLog: true}
		p := open(t, cfg, base)
		r := &gateway.Receipt{TaskNo: "order_8_station_hot", Attempt: 1, ProcessID: "0001"}
		err := p.Print(waitCtx(t), &gateway.PrintJob{Ticket: printertest.Ticket(r.TaskNo), Attempt: 1, ProcessID: "0001"})
		if gateway.Outcome(err) != gateway.PrintUncertain {
			t.Fatalf("Print: got %v, want uncertain", err)
		}
		done := make(chan gateway.Settlement, 1)
		go func() {
			v, _ := p.Settle(waitCtx(t), r)
			done <- v
		}()
		sim.SetFault(printersim.FaultNone) // the slow ticket finishes
		if v := <-done; v.Outcome != gateway.SettledPrinted {
			t.Fatalf("got %+v, want settled printed once the ticket is out", v)
		}
	})

	t.Run("NoJobLog", func(t *testing.T) {
		t.Parallel()
		p, _, r := printUncertain(t, printersim.FaultLostAck, false)
		v, err := p.Settle(waitCtx(t), r)
		if err != nil || v.Outcome != gateway.SettledUnknown {
			t.Fatalf("got %+v, %v; want unknown: the printer keeps no log", v, err)
		}
	})

	t.Run("ErrUnreachable", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(time.Second)
		cfg.Options = epos.Options{JobLog: true}
		p := open(t, cfg, "http://"+printertest.ClosedAddr(t))
		v, err := p.Settle(waitCtx(t), &gateway.Receipt{TaskNo: "t", Attempt: 1, ProcessID: "0001"})
		if err == nil || v.Outcome != gateway.SettledUnknown {
			t.Fatalf("got %+v, %v; want unknown and an error", v, err)
		}
	})
}

func TestPrinter_Print(t *testing.T) {
	t.Parallel()

	t.Run("DeviceNotFound", func(t *testing.T) {
		t.Parallel()
		// The printer's service has no such device: offline, nothing sent.
		sim, base := printertest.StartEPOS(t, printersim.Options{}, printersim.EPOSOptions{DevID: "kitchen"})
		p := open(t, printertest.Config(5*time.Second), base)
		err := p.Print(waitCtx(t), &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001"})
		printertest.CheckOutcome(t, err, gateway.PrintNotSent, storeprint.PrinterOffline)
		if !strings.Contains(err.Error(), "DeviceNotFound") {
			t.Errorf("got %v, want DeviceNotFound named", err)
		}
		if n := len(sim.Printed()); n != 0 {
			t.Fatalf("got %d tickets, want none", n)
		}
	})

	t.Run("OfflineAtPrint", func(t *testing.T) {
		t.Parallel()
		// Offline between the status and the print: the printer waits the
		// request's timeout and answers EX_TIMEOUT without printing.
		sim, base := printertest.StartEPOS(t, printersim.Options{}, printersim.EPOSOptions{})
		p := open(t, printertest.Config(time.Second), base)
		job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001",
			Prepare: func(context.Context, []byte) error { sim.SetFault(printersim.FaultOffline); return nil }}
		err := p.Print(waitCtx(t), job)
		printertest.CheckOutcome(t, err, gateway.PrintNotSent, storeprint.PrinterOffline)
		var pe *gateway.PrintError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), epos.CodeTimeout) {
			t.Errorf("got %v, want EX_TIMEOUT named", err)
		}
		sim.SetFault(printersim.FaultNone)
		if n := len(sim.Printed()); n != 0 {
			t.Fatalf("got %d tickets, want none", n)
		}
	})

	t.Run("PaperEndAtPrint", func(t *testing.T) {
		t.Parallel()
		// Paper ran out between the status and the print: the printer
		// answers EPTR_REC_EMPTY; part of a ticket may be out.
		sim, base := printertest.StartEPOS(t, printersim.Options{}, printersim.EPOSOptions{})
		p := open(t, printertest.Config(5*time.Second), base)
		job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001",
			Prepare: func(context.Context, []byte) error { sim.SetFault(printersim.FaultPaperEnd); return nil }}
		err := p.Print(waitCtx(t), job)
		printertest.CheckOutcome(t, err, gateway.PrintUncertain, storeprint.PrinterPaperEnd)
	})
}

// A printer configured with job_log = true that keeps no job log answers
// the empty request for any job id with success: the check at each
// connection finds out, the printer runs without the log, and a ticket
// whose answer was lost stays uncertain, never settled as printed.
func TestPrinter_NoJobLogConfigured(t *testing.T) {
	t.Parallel()
	t.Run("Confirms", func(t *testing.T) {
		t.Parallel()
		sim, base := printertest.StartEPOS(t, printersim.Options{}, printersim.EPOSOptions{})
		p := open(t, gateway.PrinterConfig{Options: epos.Options{JobLog: true}}, base)
		if st, err := p.Status(waitCtx(t)); err != nil || st.State != storeprint.PrinterReady {
			t.Fatalf("Status: got %+v, %v; want ready", st, err)
		}
		if got := p.Confirms(); got != storeprint.ConfirmEPOS {
			t.Fatalf("got confirms %q, want epos: the printer keeps no job log", got)
		}
		job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), Attempt: 1, ProcessID: "0001"}
		if err := p.Print(waitCtx(t), job); err != nil {
			t.Fatalf("Print: %v", err)
		}
		if job.Confirms != storeprint.ConfirmEPOS {
			t.Errorf("got the job confirmed by %q, want epos", job.Confirms)
		}
		if n := len(sim.Printed()); n != 1 {
			t.Fatalf("got %d tickets, want 1", n)
		}
	})
	t.Run("ErrLostAnswer", func(t *testing.T) {
		t.Parallel()
		sim, base := printertest.StartEPOS(t, printersim.Options{Fault: printersim.FaultDrop}, printersim.EPOSOptions{})
		p := open(t, gateway.PrinterConfig{Options: epos.Options{JobLog: true}, ConfirmTimeout: gateway.Duration{Duration: 2 * time.Second}}, base)
		var jobID string
		job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), Attempt: 1, ProcessID: "0001",
			Submitted: func(_ context.Context, id string) { jobID = id }}
		err := p.Print(waitCtx(t), job)
		if gateway.Outcome(err) != gateway.PrintUncertain {
			t.Fatalf("got %v, want uncertain", err)
		}
		r := &gateway.Receipt{TaskNo: "order_1_station_hot", Attempt: 1, ProcessID: "0001", JobID: jobID}
		v, err := p.Settle(waitCtx(t), r)
		if err != nil || v.Outcome != gateway.SettledUnknown {
			t.Fatalf("Settle: got %+v, %v; want unknown: a printer without a job log cannot say", v, err)
		}
		if n := len(sim.Printed()); n != 0 {
			t.Fatalf("got %d tickets on paper, want none (the connection closed before it printed)", n)
		}
	})
}
