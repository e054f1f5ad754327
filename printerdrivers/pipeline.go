package printerdrivers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Transport is how a driver reaches its printer: the part of a driver that
// differs from one kind of printer to the next. Pipeline runs the
// confirmed-print steps on it; a transport never decides an outcome.
type Transport interface {
	// Encode renders job's ticket (its StoreID filled in) in the
	// printer's language: the exact bytes Prepare is given. An error
	// means the job cannot be printed on this printer at all.
	Encode(job *gateway.PrintJob, t gateway.Ticket) ([]byte, error)

	// Open starts one call: connects, opens the device or a handle,
	// within the printer's connect timeout. An error means the printer
	// cannot be reached now. Open sends nothing of a ticket.
	Open(ctx context.Context) (Conn, error)

	// Describe names the printer and where it is, for error messages:
	// "printer hot-1 at 192.168.1.20:9100".
	Describe() string

	// Close makes every later Open fail and lets go of what the
	// transport holds between calls.
	Close() error
}

// Conn is one call's hold on a printer, from Open to Close. The pipeline
// calls Status, then at most once Send and Confirm, then Close. Each call
// ends when its ctx does; ctx's cause says why (a *TimeoutError when a
// bound of the pipeline passed).
type Conn interface {
	// Status reads the printer's status. An error wrapped with
	// WithState(storeprint.PrinterOffline, ...) means nothing answers
	// there (the peer closed, the device went away); any other error
	// means the answer could not be read or made no sense.
	Status(ctx context.Context) (gateway.PrinterStatus, error)

	// Send hands payload (as Encode made it) to the printer, with
	// whatever makes the printer confirm it (a process ID request, a
	// job id). It calls firstByte right before the first byte of the
	// job leaves for the printer, and not at all if it fails before
	// that; once firstByte has been called nobody knows whether paper
	// comes out. It returns once every byte is out, with the job id the
	// printer or spooler gave the job, if any.
	Send(ctx context.Context, job *gateway.PrintJob, payload []byte, firstByte func()) (jobID string, err error)

	// Confirm waits for the printer's own answer that the job printed
	// and returns nil only on that answer. When the printer answers that
	// it did not print the job, the error wraps a *NotPrintedError; any
	// other error leaves the outcome open.
	Confirm(ctx context.Context, job *gateway.PrintJob, jobID string) error

	Close() error
}

// Pipeline is a confirmed-print printer on a transport: it implements
// gateway.Printer, and every driver is a Pipeline on its own transport.
// It is the one place where the rules of a print attempt live:
//
//  1. Encode the ticket; failure is PrintNotSent.
//  2. Open, within the connect timeout; failure is PrintNotSent and
//     offline.
//  3. Status, within the connect timeout; no answer is PrintNotSent
//     (unknown, or offline when nothing answers), a printer not ready
//     PrintNotReady with its state. No byte of the ticket has gone.
//  4. job.Prepare with the exact bytes; its error is PrintNotSent.
//  5. Send, within the connect and confirm timeouts together (a printer
//     that fetches its tickets takes a poll to come for it). A failure
//     before the first byte is PrintNotSent (PrintNotReady when the
//     printer said meanwhile that it is out of paper or its cover is
//     open); from the first byte on, every failure is PrintUncertain.
//  6. job.Submitted with the job id, then Confirm, within the confirm
//     timeout. Only the printer's answer that the job printed is nil;
//     its answer that it did not print it is PrintNotSent; anything
//     else (a timeout, a lost connection, a garbled answer) is
//     PrintUncertain.
//
// Cancelling ctx stops any step; before the first byte it is
// PrintNotSent, after it PrintUncertain.
type Pipeline struct {
	t       Transport
	cfg     gateway.PrinterConfig
	storeID string
}

var _ gateway.Printer = (*Pipeline)(nil)

// New returns a printer that runs t. cfg supplies the timeouts (zero
// values take the gateway's defaults); storeID heads the tickets that do
// not name their store.
func New(t Transport, cfg gateway.PrinterConfig, storeID string) *Pipeline {
	cfg.SetDefaults()
	return &Pipeline{t: t, cfg: cfg, storeID: storeID}
}

// Config returns the printer's configuration with its defaults filled in.
func (p *Pipeline) Config() gateway.PrinterConfig { return p.cfg }

// Status reads the printer's status. A printer that cannot be reached,
// or where nothing answers, is PrinterOffline with a nil error; one whose
// answer cannot be read within the connect timeout is PrinterUnknown with
// an error.
func (p *Pipeline) Status(ctx context.Context) (gateway.PrinterStatus, error) {
	unknown := gateway.PrinterStatus{State: storeprint.PrinterUnknown}
	if ctx.Err() != nil {
		return unknown, p.errorf("status: %w", context.Cause(ctx))
	}
	c, err := p.t.Open(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return unknown, p.errorf("status: %w", context.Cause(ctx))
		}
		return gateway.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	defer closeConn(c)
	sctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration, "status answer")
	defer cancel()
	st, err := c.Status(sctx)
	switch {
	case err == nil:
		return st, nil
	case ctx.Err() != nil:
		return unknown, p.errorf("status: %w", context.Cause(ctx))
	case StateOf(err) == storeprint.PrinterOffline:
		return gateway.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	return unknown, p.errorf("status: %w", err)
}

// Print sends one ticket and waits for the printer's own confirmation;
// see Pipeline for the steps and how each failure is classified.
func (p *Pipeline) Print(ctx context.Context, job *gateway.PrintJob) error {
	t := job.Ticket
	if t.StoreID == "" {
		t.StoreID = p.storeID
	}
	payload, err := p.t.Encode(job, t)
	if err != nil {
		return p.fail(gateway.PrintNotSent, "", fmt.Errorf("render ticket: %w", err))
	}
	if ctx.Err() != nil {
		return p.fail(gateway.PrintNotSent, "", context.Cause(ctx))
	}

	c, err := p.t.Open(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return p.fail(gateway.PrintNotSent, "", context.Cause(ctx))
		}
		return p.fail(gateway.PrintNotSent, storeprint.PrinterOffline, err)
	}
	defer closeConn(c)

	sctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration, "status answer")
	st, err := c.Status(sctx)
	cancel()
	switch {
	case ctx.Err() != nil:
		return p.fail(gateway.PrintNotSent, "", context.Cause(ctx))
	case err != nil && StateOf(err) == storeprint.PrinterOffline:
		return p.fail(gateway.PrintNotSent, storeprint.PrinterOffline, fmt.Errorf("status: %w", err))
	case err != nil:
		return p.fail(gateway.PrintNotSent, storeprint.PrinterUnknown, fmt.Errorf("status: %w", err))
	case st.State != storeprint.PrinterReady:
		return p.fail(gateway.PrintNotReady, st.State, fmt.Errorf("printer reports %s", st.State))
	}

	// The final fence: nothing of the ticket leaves before Prepare has
	// durably recorded it.
	if job.Prepare != nil {
		if err := job.Prepare(ctx, payload); err != nil {
			return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, fmt.Errorf("prepare: %w", err))
		}
	}
	if ctx.Err() != nil {
		return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, context.Cause(ctx))
	}

	// From the first byte on, nobody knows whether paper comes out
	// unless the printer says so.
	var sent atomic.Bool
	wctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration+p.cfg.ConfirmTimeout.Duration, "ticket sent")
	jobID, err := c.Send(wctx, job, payload, func() { sent.Store(true) })
	cancel()
	if err != nil {
		if !sent.Load() {
			// Nothing left: the printer may have said it cannot print
			// now, or gone away since its status.
			switch st := StateOf(err); st {
			case storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen:
				return p.fail(gateway.PrintNotReady, st, fmt.Errorf("send ticket: %w", err))
			case "":
				return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, fmt.Errorf("send ticket: %w", err))
			default:
				return p.fail(gateway.PrintNotSent, st, fmt.Errorf("send ticket: %w", err))
			}
		}
		st := StateOf(err)
		if st == "" {
			st = storeprint.PrinterReady // as it said a moment ago
		}
		return p.fail(gateway.PrintUncertain, st, fmt.Errorf("send ticket: %w", err))
	}
	if job.Submitted != nil {
		job.Submitted(ctx, jobID)
	}
	cctx, cancel := p.bound(ctx, p.cfg.ConfirmTimeout.Duration, "confirmation")
	defer cancel()
	err = c.Confirm(cctx, job, jobID)
	var np *NotPrintedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &np):
		return p.fail(gateway.PrintNotSent, np.State, err)
	}
	return p.fail(gateway.PrintUncertain, StateOf(err), fmt.Errorf("wait for confirmation %s: %w", job.ProcessID, err))
}

// ProbeTransport is a transport whose printers answer a confirmation
// request sent alone, with nothing to print before it (ESC/POS GS ( H over
// TCP or a serial line): Send with no payload puts no paper out.
type ProbeTransport interface {
	Transport
	ConfirmsAlone()
}

var _ gateway.Prober = (*Pipeline)(nil)

// ErrNoProbe is Probe's answer on a transport that cannot prove its print
// path without paper (a spooler, an HTTP printer).
var ErrNoProbe = errors.New("this kind of printer cannot be probed without paper")

// Probe proves the print path without paper: a status round trip, then a
// confirmation request sent alone, answered within the confirm timeout
// (gateway.Prober). The gateway probes a printer in trouble with it.
func (p *Pipeline) Probe(ctx context.Context) error {
	if _, ok := p.t.(ProbeTransport); !ok {
		return ErrNoProbe
	}
	c, err := p.t.Open(ctx)
	if err != nil {
		return p.errorf("probe: %w", err)
	}
	defer closeConn(c)
	sctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration, "status answer")
	st, err := c.Status(sctx)
	cancel()
	switch {
	case err != nil:
		return p.errorf("probe: status: %w", err)
	case st.State != storeprint.PrinterReady:
		return p.errorf("probe: printer reports %s", st.State)
	}
	job := &gateway.PrintJob{ProcessID: storeprint.NewProcessID()}
	wctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration, "probe sent")
	_, err = c.Send(wctx, job, nil, func() {})
	cancel()
	if err != nil {
		return p.errorf("probe: send: %w", err)
	}
	cctx, cancel := p.bound(ctx, p.cfg.ConfirmTimeout.Duration, "probe answer")
	defer cancel()
	if err := c.Confirm(cctx, job, ""); err != nil {
		return p.errorf("probe: answer: %w", err)
	}
	return nil
}

// Close makes further calls fail.
func (p *Pipeline) Close() error {
	if err := p.t.Close(); err != nil {
		return p.errorf("close: %w", err)
	}
	return nil
}

// bound returns ctx ended after d, with a *TimeoutError naming what was
// waited for as its cause.
func (p *Pipeline) bound(ctx context.Context, d time.Duration, what string) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, &TimeoutError{What: what, After: d})
}

func (p *Pipeline) fail(o gateway.PrintOutcome, st storeprint.PrinterState, err error) error {
	return &gateway.PrintError{Outcome: o, State: st, Err: p.errorf("%w", err)}
}

func (p *Pipeline) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{p.t.Describe()}, args...)...)
}

// closeConn closes a call's connection. The call's outcome is settled by
// then; a connection that fails to close does not change it.
func closeConn(c Conn) { _ = c.Close() }

// TimeoutError is the cause of a step's context that ended because the
// pipeline's bound on it passed. It wraps os.ErrDeadlineExceeded.
type TimeoutError struct {
	What  string // what was waited for: "status answer", "confirmation"
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no %s within %s", e.What, e.After)
}

func (e *TimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }

// NotPrintedError is the printer's own answer that it did not print a
// job it was sent (the device is not there, it timed out before
// printing, it cannot use the data). Confirm returns it; the pipeline
// makes it PrintNotSent.
type NotPrintedError struct {
	State storeprint.PrinterState // the printer's state when it said so, if known
	Err   error
}

func (e *NotPrintedError) Error() string {
	return "the printer did not print the job: " + e.Err.Error()
}
func (e *NotPrintedError) Unwrap() error { return e.Err }

// NotPrinted returns the printer's answer that it did not print a job.
func NotPrinted(st storeprint.PrinterState, err error) error {
	return &NotPrintedError{State: st, Err: err}
}

// stateError carries the printer's state alongside an error.
type stateError struct {
	state storeprint.PrinterState
	err   error
}

func (e *stateError) Error() string { return e.err.Error() }
func (e *stateError) Unwrap() error { return e.err }

// WithState marks err with the printer state it points to (offline for a
// peer that closed the connection, paper end for a job stuck out of
// paper). The pipeline reports that state with the outcome.
func WithState(st storeprint.PrinterState, err error) error {
	if err == nil {
		return nil
	}
	return &stateError{state: st, err: err}
}

// StateOf returns the printer state err was marked with (WithState, or a
// *NotPrintedError), or "".
func StateOf(err error) storeprint.PrinterState {
	var se *stateError
	if errors.As(err, &se) {
		return se.state
	}
	var np *NotPrintedError
	if errors.As(err, &np) {
		return np.State
	}
	return ""
}
