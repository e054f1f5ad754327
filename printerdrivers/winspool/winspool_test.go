package winspool_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
	"github.com/storeprint/storeprint/printerdrivers/winspool/winspooltest"
)

const queueName = "Kitchen TM-T88"

// yes is trust_spooler = true.
var yes = true

// setup starts a simulated printer behind a queue of a fake spooler and
// returns a driver for the queue. Everything is closed with t.Cleanup,
// which also checks that the driver left no printer handle open.
func setup(t *testing.T, cfg gateway.PrinterConfig, simOpts printersim.Options, qOpts winspooltest.QueueOptions) (*winspool.Printer, *printersim.Printer, *winspooltest.Queue, *winspooltest.Spooler) {
	t.Helper()
	sim, err := printersim.New(simOpts)
	if err != nil {
		t.Fatal(err)
	}
	sp := winspooltest.New()
	q := sp.AddPrinter(queueName, sim, qOpts)
	cfg.Driver, cfg.Address = "spooler", queueName
	p := winspool.NewWithSpooler(sp, cfg, "store-001")
	t.Cleanup(func() {
		if n := sp.OpenHandles(); n != 0 {
			t.Errorf("got %d printer handles open after the test, want 0", n)
		}
		p.Close()
		if err := q.Close(); err != nil {
			t.Errorf("close queue: %v", err)
		}
		if err := sim.Close(); err != nil {
			t.Errorf("close simulator: %v", err)
		}
	})
	return p, sim, q, sp
}

func harness() printertest.Harness {
	return printertest.Harness{
		Open: func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, printertest.Sim) {
			// The queue's driver reports a job printed only once the
			// printer confirmed it, so the spooler's word is trusted.
			cfg.Options = winspool.Options{TrustSpooler: &yes}
			p, sim, _, _ := setup(t, cfg, opts, winspooltest.QueueOptions{Completion: winspooltest.CompleteOnConfirm})
			return p, sim
		},
		Unreachable: func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer {
			cfg.Driver, cfg.Address, cfg.Options = "spooler", "No Such Queue", winspool.Options{TrustSpooler: &yes}
			p := winspool.NewWithSpooler(winspooltest.New(), cfg, "store-001")
			t.Cleanup(func() { p.Close() })
			return p
		},
	}
}

func TestPrinter_Conformance(t *testing.T) {
	t.Parallel()
	printertest.Exercise(t, harness())
}

// recorder builds a print job and records the driver's calls to it.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	jobID    string
	prepared []byte
}

func (r *recorder) job(taskNo string) *gateway.PrintJob {
	return &gateway.PrintJob{
		Ticket:    printertest.Ticket(taskNo),
		ProcessID: "0001",
		Prepare: func(_ context.Context, payload []byte) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.calls = append(r.calls, "prepare")
			r.prepared = append([]byte(nil), payload...)
			return nil
		},
		Submitted: func(_ context.Context, jobID string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.calls = append(r.calls, "submitted")
			r.jobID = jobID
		},
	}
}

func (r *recorder) check(t *testing.T, want string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := strings.Join(r.calls, ","); got != want {
		t.Fatalf("got calls %q, want %q", got, want)
	}
}

// printAsync prints in the background, for tests that move the job along
// by hand.
func printAsync(p *winspool.Printer, job *gateway.PrintJob) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.Print(context.Background(), job) }()
	return done
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-waitCtx(t).Done():
		t.Fatal("Print did not return")
		return nil
	}
}

func TestPrinter_Print(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = winspool.Options{TrustSpooler: &yes}
		p, _, q, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{Manual: true})
		r := &recorder{}
		done := printAsync(p, r.job("order_1_station_hot"))
		j, err := q.WaitJob(waitCtx(t), 1)
		if err != nil {
			t.Fatal(err)
		}
		if j.Doc.Datatype != "RAW" || j.Doc.DocName != "storeprint:order_1_station_hot" {
			t.Errorf("got document %+v, want RAW named storeprint:order_1_station_hot", j.Doc)
		}
		if err := q.SetJobStatus(j.ID, winspool.JobStatusPrinting, ""); err != nil {
			t.Fatal(err)
		}
		if err := q.SetJobStatus(j.ID, winspool.JobStatusPrinted|winspool.JobStatusComplete, ""); err != nil {
			t.Fatal(err)
		}
		if err := wait(t, done); err != nil {
			t.Fatalf("Print: got %v, want nil with trust_spooler", err)
		}
		r.check(t, "prepare,submitted")
		if r.jobID != "1" {
			t.Errorf("got job id %q in the submitted receipt, want 1", r.jobID)
		}
		if string(j.Data) != string(r.prepared) {
			t.Errorf("got %d bytes spooled, want exactly the %d bytes Prepare saw", len(j.Data), len(r.prepared))
		}
	})

	t.Run("ErrUntrusted", func(t *testing.T) {
		t.Parallel()
		// The default: the spooler's "complete" is not the printer's word.
		p, sim, _, _ := setup(t, printertest.Config(5*time.Second), printersim.Options{}, winspooltest.QueueOptions{})
		r := &recorder{}
		err := p.Print(waitCtx(t), r.job("order_1_station_hot"))
		printertest.CheckOutcome(t, err, gateway.PrintUncertain, storeprint.PrinterReady)
		if !strings.Contains(err.Error(), "trust_spooler = false") || !strings.Contains(err.Error(), "reached the printer") {
			t.Fatalf("got %v, want it to say the data reached the printer and trust_spooler is off", err)
		}
		r.check(t, "prepare,submitted")
		if got, err := sim.WaitPrinted(waitCtx(t), 1); err != nil || len(got) != 1 {
			t.Fatalf("got paper %+v, %v; want the ticket once", got, err)
		}
	})

	t.Run("TrustedOnDelivery", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = winspool.Options{TrustSpooler: &yes}
		p, _, _, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{})
		if err := p.Print(waitCtx(t), (&recorder{}).job("order_1_station_hot")); err != nil {
			t.Fatalf("got %v, want nil: trust_spooler counts complete as printed", err)
		}
	})

	t.Run("ErrJobGone", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = winspool.Options{TrustSpooler: &yes}
		p, _, _, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{RemoveDone: true})
		err := p.Print(waitCtx(t), (&recorder{}).job("order_1_station_hot"))
		printertest.CheckOutcome(t, err, gateway.PrintUncertain, "")
		if !errors.Is(err, winspool.ErrJobNotFound) || !strings.Contains(err.Error(), "Keep printed documents") {
			t.Fatalf("got %v, want the job gone and the queue setting named", err)
		}
	})

	t.Run("ErrJobStuck", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			status uint32
			state  storeprint.PrinterState
		}{
			{"Error", winspool.JobStatusError | winspool.JobStatusPrinting, storeprint.PrinterOffline},
			{"Offline", winspool.JobStatusOffline, storeprint.PrinterOffline},
			{"PaperOut", winspool.JobStatusPaperOut | winspool.JobStatusPrinting, storeprint.PrinterPaperEnd},
			{"Blocked", winspool.JobStatusBlockedDevQ, storeprint.PrinterOffline},
			{"UserIntervention", winspool.JobStatusUserIntervention, storeprint.PrinterOffline},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				cfg := printertest.Config(5 * time.Second)
				cfg.Options = winspool.Options{TrustSpooler: &yes}
				p, _, q, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{Manual: true})
				done := printAsync(p, (&recorder{}).job("order_1_station_hot"))
				if _, err := q.WaitJob(waitCtx(t), 1); err != nil {
					t.Fatal(err)
				}
				if err := q.SetJobStatus(1, tt.status, "port says no"); err != nil {
					t.Fatal(err)
				}
				err := wait(t, done)
				printertest.CheckOutcome(t, err, gateway.PrintUncertain, tt.state)
				if !strings.Contains(err.Error(), "port says no") || !strings.Contains(err.Error(), "job deleted") {
					t.Fatalf("got %v, want the port monitor's message and the job deleted", err)
				}
				if jobs := q.Jobs(); len(jobs) != 0 {
					t.Fatalf("got jobs %+v in the queue, want the stuck job deleted so it cannot print later", jobs)
				}
			})
		}
	})

	t.Run("ErrJobDeleted", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = winspool.Options{TrustSpooler: &yes}
		p, _, q, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{Manual: true})
		done := printAsync(p, (&recorder{}).job("order_1_station_hot"))
		if _, err := q.WaitJob(waitCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		if err := q.SetJobStatus(1, winspool.JobStatusDeleting, ""); err != nil {
			t.Fatal(err)
		}
		err := wait(t, done)
		printertest.CheckOutcome(t, err, gateway.PrintUncertain, "")
		if !strings.Contains(err.Error(), "deleted in the spooler") {
			t.Fatalf("got %v, want it to say the job was deleted", err)
		}
	})

	t.Run("ErrTimeout", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(100 * time.Millisecond)
		cfg.Options = winspool.Options{TrustSpooler: &yes}
		p, _, q, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{Manual: true})
		r := &recorder{}
		err := p.Print(waitCtx(t), r.job("order_1_station_hot"))
		printertest.CheckOutcome(t, err, gateway.PrintUncertain, "")
		r.check(t, "prepare,submitted")
		// Still on its way, as bytes in a printer's buffer are: left to
		// the spooler.
		if jobs := q.Jobs(); len(jobs) != 1 {
			t.Fatalf("got jobs %+v, want the job left in the queue", jobs)
		}
	})

	t.Run("ErrNotReady", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name       string
			status     uint32
			attributes uint32
			state      storeprint.PrinterState
		}{
			{"Paused", winspool.PrinterStatusPaused, 0, storeprint.PrinterOffline},
			{"Error", winspool.PrinterStatusError, 0, storeprint.PrinterOffline},
			{"PaperJam", winspool.PrinterStatusPaperJam, 0, storeprint.PrinterOffline},
			{"NotAvailable", winspool.PrinterStatusNotAvailable, 0, storeprint.PrinterOffline},
			{"UseOffline", 0, winspool.PrinterAttributeWorkOffline, storeprint.PrinterOffline},
			{"PaperOut", winspool.PrinterStatusPaperOut, 0, storeprint.PrinterPaperEnd},
			{"DoorOpen", winspool.PrinterStatusDoorOpen | winspool.PrinterStatusPaperOut, 0, storeprint.PrinterCoverOpen},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				p, _, q, _ := setup(t, printertest.Config(5*time.Second), printersim.Options{}, winspooltest.QueueOptions{})
				q.SetPrinterStatus(tt.status, tt.attributes)
				r := &recorder{}
				err := p.Print(waitCtx(t), r.job("order_1_station_hot"))
				printertest.CheckOutcome(t, err, gateway.PrintNotReady, tt.state)
				r.check(t, "")
				if jobs := q.Jobs(); len(jobs) != 0 {
					t.Fatalf("got jobs %+v, want none", jobs)
				}
			})
		}
	})

	t.Run("ErrCall", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			call    string
			outcome gateway.PrintOutcome
			state   storeprint.PrinterState
			calls   string
		}{
			{"OpenPrinter", gateway.PrintNotSent, storeprint.PrinterOffline, ""},
			{"GetPrinter", gateway.PrintNotSent, storeprint.PrinterUnknown, ""},
			{"StartDocPrinter", gateway.PrintNotSent, storeprint.PrinterReady, "prepare"},
			{"StartPagePrinter", gateway.PrintNotSent, storeprint.PrinterReady, "prepare"},
			{"WritePrinter", gateway.PrintUncertain, storeprint.PrinterReady, "prepare"},
			{"EndPagePrinter", gateway.PrintUncertain, storeprint.PrinterReady, "prepare"},
			{"EndDocPrinter", gateway.PrintUncertain, storeprint.PrinterReady, "prepare"},
			{"GetJob", gateway.PrintUncertain, "", "prepare,submitted"},
		}
		for _, tt := range tests {
			t.Run(tt.call, func(t *testing.T) {
				t.Parallel()
				cfg := printertest.Config(5 * time.Second)
				cfg.Options = winspool.Options{TrustSpooler: &yes}
				p, sim, q, sp := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{Manual: true})
				boom := errors.New("spooler hiccup")
				sp.Fail(tt.call, boom)
				r := &recorder{}
				err := p.Print(waitCtx(t), r.job("order_1_station_hot"))
				printertest.CheckOutcome(t, err, tt.outcome, tt.state)
				if !errors.Is(err, boom) {
					t.Fatalf("got %v, want the spooler's error in it", err)
				}
				r.check(t, tt.calls)
				// A document that was not sent whole is deleted; one that
				// was is left to the spooler.
				wantJobs := 0
				if tt.call == "GetJob" {
					wantJobs = 1
				}
				if jobs := q.Jobs(); len(jobs) != wantJobs {
					t.Fatalf("got jobs %+v, want %d", jobs, wantJobs)
				}
				if got := sim.Printed(); len(got) != 0 {
					t.Fatalf("got paper %+v, want none", got)
				}
			})
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		t.Parallel()
		p, _, _, _ := setup(t, printertest.Config(5*time.Second), printersim.Options{}, winspooltest.QueueOptions{})
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		printertest.CheckOutcome(t, p.Print(waitCtx(t), (&recorder{}).job("order_1_station_hot")), gateway.PrintNotSent, "")
	})

	t.Run("StoreIDFallback", func(t *testing.T) {
		t.Parallel()
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = winspool.Options{TrustSpooler: &yes}
		p, sim, _, _ := setup(t, cfg, printersim.Options{}, winspooltest.QueueOptions{})
		j := (&recorder{}).job("order_1_station_hot")
		j.Ticket.StoreID = ""
		if err := p.Print(waitCtx(t), j); err != nil {
			t.Fatal(err)
		}
		if got := sim.Printed()[0].Text; !strings.HasPrefix(got, "store-001\n") {
			t.Fatalf("got ticket %q, want it headed by the driver's store id", got)
		}
	})
}

func TestPrinter_Status(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p, _, q, _ := setup(t, printertest.Config(5*time.Second), printersim.Options{}, winspooltest.QueueOptions{})
		q.SetPrinterStatus(winspool.PrinterStatusPaperOut, 0)
		st, err := p.Status(waitCtx(t))
		if err != nil || st != (storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}) {
			t.Fatalf("got %+v, %v; want paper end", st, err)
		}
	})

	t.Run("ErrGetPrinter", func(t *testing.T) {
		t.Parallel()
		p, _, _, sp := setup(t, printertest.Config(5*time.Second), printersim.Options{}, winspooltest.QueueOptions{})
		sp.Fail("GetPrinter", errors.New("access denied"))
		st, err := p.Status(waitCtx(t))
		if err == nil || st.State != storeprint.PrinterUnknown {
			t.Fatalf("got %+v, %v; want unknown and an error", st, err)
		}
	})
}

func TestPrinterState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		info winspool.PrinterInfo
		want storeprint.PrinterStatus
	}{
		{winspool.PrinterInfo{}, storeprint.PrinterStatus{State: storeprint.PrinterReady}},
		{winspool.PrinterInfo{Status: winspool.PrinterStatusOffline}, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
		{winspool.PrinterInfo{Status: winspool.PrinterStatusPaperOut | winspool.PrinterStatusOffline}, storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}},
		{winspool.PrinterInfo{Status: winspool.PrinterStatusDoorOpen | winspool.PrinterStatusPaperOut}, storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen}},
		{winspool.PrinterInfo{Attributes: winspool.PrinterAttributeWorkOffline}, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
		{winspool.PrinterInfo{Status: 0x200 | 0x400}, storeprint.PrinterStatus{State: storeprint.PrinterReady}}, // busy, printing
	}
	for _, tt := range tests {
		if got := winspool.PrinterState(tt.info); got != tt.want {
			t.Errorf("PrinterState(%+v): got %+v, want %+v", tt.info, got, tt.want)
		}
	}
}

func TestJobState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  uint32
		want    winspool.JobProgress
		trouble storeprint.PrinterState
	}{
		{0, winspool.JobPending, ""},
		{winspool.JobStatusSpooling, winspool.JobPending, ""},
		{winspool.JobStatusPrinting, winspool.JobPending, ""},
		{winspool.JobStatusPrinted, winspool.JobComplete, ""},
		{winspool.JobStatusComplete, winspool.JobComplete, ""},
		{winspool.JobStatusPaperOut | winspool.JobStatusPrinting, winspool.JobFailed, storeprint.PrinterPaperEnd},
		{winspool.JobStatusError | winspool.JobStatusComplete, winspool.JobFailed, storeprint.PrinterOffline},
		{winspool.JobStatusDeleting | winspool.JobStatusError, winspool.JobDeleted, ""},
		{winspool.JobStatusDeleted, winspool.JobDeleted, ""},
	}
	for _, tt := range tests {
		got, trouble := winspool.JobState(winspool.JobInfo{Status: tt.status})
		if got != tt.want || trouble != tt.trouble {
			t.Errorf("JobState(%#x): got %d/%q, want %d/%q", tt.status, got, trouble, tt.want, tt.trouble)
		}
	}
}

// FuzzPrinterState checks that every status maps to one state, ready
// exactly when no bit that stops printing is set, and that the condition a
// person must fix first wins.
func FuzzPrinterState(f *testing.F) {
	f.Add(uint32(0), uint32(0))
	f.Add(uint32(winspool.PrinterStatusDoorOpen|winspool.PrinterStatusPaperOut), uint32(0))
	f.Add(uint32(0), uint32(winspool.PrinterAttributeWorkOffline))
	f.Add(^uint32(0), ^uint32(0))
	const stops = winspool.PrinterStatusPaused | winspool.PrinterStatusError | winspool.PrinterStatusPendingDeletion |
		winspool.PrinterStatusPaperJam | winspool.PrinterStatusPaperOut | winspool.PrinterStatusPaperProblem |
		winspool.PrinterStatusOffline | winspool.PrinterStatusNotAvailable | winspool.PrinterStatusUserIntervention |
		winspool.PrinterStatusDoorOpen | winspool.PrinterStatusServerUnknown
	f.Fuzz(func(t *testing.T, status, attributes uint32) {
		info := winspool.PrinterInfo{Status: status, Attributes: attributes}
		got := winspool.PrinterState(info)
		stopped := status&stops != 0 || attributes&winspool.PrinterAttributeWorkOffline != 0
		if (got.State == storeprint.PrinterReady) == stopped {
			t.Fatalf("PrinterState(%#x, %#x) = %+v, stopped %v", status, attributes, got, stopped)
		}
		switch {
		case status&winspool.PrinterStatusDoorOpen != 0 && got.State != storeprint.PrinterCoverOpen,
			status&winspool.PrinterStatusDoorOpen == 0 && status&winspool.PrinterStatusPaperOut != 0 && got.State != storeprint.PrinterPaperEnd,
			got.State == storeprint.PrinterPaperEnd && !got.PaperNearEnd,
			got.State == storeprint.PrinterUnknown:
			t.Fatalf("PrinterState(%#x, %#x) = %+v", status, attributes, got)
		}
		if s := winspool.PrinterStatusText(info); s == "" {
			t.Fatalf("PrinterStatusText(%#x) is empty", status)
		}
	})
}

// FuzzJobState checks that every job status reads as one progress, that a
// job in trouble is never complete, and that only a failed job names a
// trouble.
func FuzzJobState(f *testing.F) {
	f.Add(uint32(0), "")
	f.Add(uint32(winspool.JobStatusPrinted|winspool.JobStatusComplete), "")
	f.Add(uint32(winspool.JobStatusError|winspool.JobStatusComplete), "port write failed")
	f.Add(^uint32(0), "\x00\xff")
	const trouble = winspool.JobStatusError | winspool.JobStatusOffline | winspool.JobStatusPaperOut |
		winspool.JobStatusBlockedDevQ | winspool.JobStatusUserIntervention
	f.Fuzz(func(t *testing.T, status uint32, text string) {
		info := winspool.JobInfo{Status: status, StatusText: text}
		got, state := winspool.JobState(info)
		deleted := status&(winspool.JobStatusDeleted|winspool.JobStatusDeleting) != 0
		switch {
		case deleted && got != winspool.JobDeleted,
			!deleted && status&trouble != 0 && got != winspool.JobFailed,
			got == winspool.JobComplete && status&(winspool.JobStatusPrinted|winspool.JobStatusComplete) == 0,
			(got == winspool.JobFailed) != (state != ""),
			got == winspool.JobFailed && state != storeprint.PrinterPaperEnd && state != storeprint.PrinterOffline:
			t.Fatalf("JobState(%#x) = %d, %q", status, got, state)
		}
		if s := winspool.JobStatusText(info); s == "" {
			t.Fatalf("JobStatusText(%#x) is empty", status)
		}
	})
}
