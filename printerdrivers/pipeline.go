package printerdrivers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/clock"
)

// Transport is how a driver reaches its printer: the part of a driver that
// differs from one kind of printer to the next. Pipeline runs the
// confirmed-print steps on it; a transport never decides an outcome.
type Transport interface {
	// Encode renders job's ticket (its StoreID filled in) in the
	// printer's language: the exact bytes Prepare is given. An error
	// means the job cannot be printed on this printer at all.
	Encode(job *gateway.PrintJob, t storeprint.Ticket) ([]byte, error)

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
// calls Status, then sends at most one job, then Close. A Conn is a
// JobConn (the printer takes a whole job and confirms it in its own way)
// or a StreamConn (an ESC/POS byte stream: the pipeline sends the
// confirmation request and reads its answer itself). Each call ends when
// its ctx does; ctx's cause says why (a *TimeoutError when a bound of the
// pipeline passed).
type Conn interface {
	// Status reads the printer's status. An error wrapped with
	// WithState(storeprint.PrinterOffline, ...) means nothing answers
	// there (the peer closed, the device went away); any other error
	// means the answer could not be read or made no sense.
	Status(ctx context.Context) (storeprint.PrinterStatus, error)

	Close() error
}

// JobConn is a Conn to a printer that takes a whole job and confirms it in
// its own way: the spooler, ePOS-Print, CloudPRNT. It may also say how
// (Confirms() storeprint.Confirm), as the transport may.
type JobConn interface {
	Conn

	// Send hands payload (as Encode made it) to the printer, with
	// whatever makes the printer confirm it (a job id). It calls
	// firstByte right before the first byte of the job leaves for the
	// printer, and not at all if it fails before that; once firstByte
	// has been called nobody knows whether paper comes out. It returns
	// once every byte is out, with the job id the printer or spooler
	// gave the job, if any.
	Send(ctx context.Context, job *gateway.PrintJob, payload []byte, firstByte func()) (jobID string, err error)

	// Confirm waits for the printer's own answer that the job printed
	// and returns nil only on that answer. When the printer answers that
	// it did not print the job, the error wraps a *NotPrintedError; any
	// other error leaves the outcome open.
	Confirm(ctx context.Context, job *gateway.PrintJob, jobID string) error
}

// StreamConn is a Conn on a byte stream to an ESC/POS printer (tcp,
// serial). The pipeline writes the ticket and the request of the
// printer's confirmation method (confirm.go) and reads the answers.
type StreamConn interface {
	Conn

	// Write writes all of b before ctx ends. An error marked
	// WithState(storeprint.PrinterOffline, ...) means the peer closed.
	Write(ctx context.Context, b []byte) error

	// Reader returns the printer's answers, whose reads end when ctx
	// does, until done is called.
	Reader(ctx context.Context) (r *bufio.Reader, done func(), err error)
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
//  4. On a StreamConn, how the ticket is to be confirmed (the printer's
//     confirm; for "auto" found out without paper, see confirm.go): a
//     connection lost meanwhile is PrintNotSent. job.Confirms says it.
//  5. job.Prepare with the exact bytes; its error is PrintNotSent.
//  6. Send (on a StreamConn: the ticket and its confirmation request),
//     within the connect and confirm timeouts together (a printer that
//     fetches its tickets takes a poll to come for it). A failure
//     before the first byte is PrintNotSent (PrintNotReady when the
//     printer said meanwhile that it is out of paper or its cover is
//     open); from the first byte on, every failure is PrintUncertain.
//  7. job.Submitted with the job id, then Confirm (on a StreamConn: the
//     answer of its confirmation method), within the confirm timeout.
//     Only the printer's answer that the job printed is nil; its answer
//     that it did not print it is PrintNotSent; anything else (a
//     timeout, a lost connection, a garbled answer) is PrintUncertain.
//
// Cancelling ctx stops any step; before the first byte it is
// PrintNotSent, after it PrintUncertain.
type Pipeline struct {
	t       Transport
	cfg     gateway.PrinterConfig
	storeID string
	clock   clock.Clock
	confirm string // on a byte stream: its confirm (StreamOf)

	mu    sync.Mutex
	found storeprint.Confirm // confirm = "auto": the strongest method the printer answered so far
	maker int                // confirm = "auto": what it said its maker is (confirm.go)
}

var _ gateway.Printer = (*Pipeline)(nil)

// New returns a printer that runs t. cfg supplies the timeouts (zero
// values take the gateway's defaults); storeID heads the tickets that do
// not name their store.
func New(t Transport, cfg gateway.PrinterConfig, storeID string) *Pipeline {
	cfg.SetDefaults()
	return &Pipeline{t: t, cfg: cfg, storeID: storeID, clock: clock.Real{}, confirm: StreamOf(cfg.Options).Confirm}
}

// SetClock makes the pipeline measure the time a ticket takes to print
// (confirm = "status") on c instead of the system's clock.
func (p *Pipeline) SetClock(c clock.Clock) { p.clock = c }

var _ gateway.ConfirmsReporter = (*Pipeline)(nil)

// Confirms says how the printer confirms its prints now: its confirm
// method (for confirm = "auto", the one found; empty before the printer
// was first reached), or the transport's own word.
func (p *Pipeline) Confirms() storeprint.Confirm {
	if _, ok := p.t.(ProbeTransport); ok {
		if p.confirm != ConfirmAuto {
			return storeprint.Confirm(p.confirm)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.found
	}
	if r, ok := p.t.(gateway.ConfirmsReporter); ok {
		return r.Confirms()
	}
	return ""
}

// Config returns the printer's configuration with its defaults filled in.
func (p *Pipeline) Config() gateway.PrinterConfig { return p.cfg }

// Status reads the printer's status. A printer that cannot be reached,
// or where nothing answers, is PrinterOffline with a nil error; one whose
// answer cannot be read within the connect timeout is PrinterUnknown with
// an error.
func (p *Pipeline) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	unknown := storeprint.PrinterStatus{State: storeprint.PrinterUnknown}
	if ctx.Err() != nil {
		return unknown, p.errorf("status: %w", context.Cause(ctx))
	}
	c, err := p.t.Open(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return unknown, p.errorf("status: %w", context.Cause(ctx))
		}
		p.unreachable()
		return storeprint.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	defer closeConn(c)
	sctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration, "status answer")
	defer cancel()
	st, err := c.Status(sctx)
	switch {
	case err == nil:
		if sc, ok := c.(StreamConn); ok && st.State == storeprint.PrinterReady && p.Confirms() == "" {
			// confirm = "auto" and never reached: find out now, so that
			// people see how it confirms before its first ticket.
			if _, err := p.method(ctx, sc); err != nil && ctx.Err() == nil {
				return st, p.errorf("find out how the printer confirms: %w", err)
			}
		}
		return st, nil
	case ctx.Err() != nil:
		return unknown, p.errorf("status: %w", context.Cause(ctx))
	case StateOf(err) == storeprint.PrinterOffline:
		return storeprint.PrinterStatus{State: storeprint.PrinterOffline}, nil
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
		p.unreachable()
		return p.fail(gateway.PrintNotSent, storeprint.PrinterOffline, err)
	}
	defer closeConn(c)
	if err := p.statusGate(ctx, c); err != nil {
		return err
	}
	sc, jc, err := p.confirmMethod(ctx, c, job)
	if err != nil {
		return err
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

	jobID, err := p.send(ctx, sc, jc, job, payload)
	if err != nil {
		return err
	}
	if job.Submitted != nil {
		job.Submitted(ctx, jobID)
	}
	cctx, cancel := p.bound(ctx, p.cfg.ConfirmTimeout.Duration, "confirmation")
	defer cancel()
	if sc != nil {
		err = p.confirmStream(cctx, sc, job, payload)
	} else {
		err = jc.Confirm(cctx, job, jobID)
	}
	var np *NotPrintedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &np):
		return p.fail(gateway.PrintNotSent, np.State, err)
	}
	return p.fail(gateway.PrintUncertain, StateOf(err), fmt.Errorf("wait for confirmation %s: %w", job.ProcessID, err))
}

// statusGate reads the printer's status: only a ready printer gets a
// ticket. Otherwise nothing was sent, and the error says whether the
// printer is not ready (paper end, cover open) or could not be asked.
func (p *Pipeline) statusGate(ctx context.Context, c Conn) error {
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
	return nil
}

// confirmMethod sets how this attempt is to be confirmed (job.Confirms)
// and returns the connection as a byte stream (sc), which the pipeline
// confirms itself, or as a job taker (jc), which confirms its jobs; the
// other is nil. Nothing of the ticket was sent when it fails.
func (p *Pipeline) confirmMethod(ctx context.Context, c Conn, job *gateway.PrintJob) (sc StreamConn, jc JobConn, err error) {
	sc, stream := c.(StreamConn)
	jc, _ = c.(JobConn)
	switch {
	case stream:
		m, err := p.method(ctx, sc)
		switch {
		case ctx.Err() != nil:
			return nil, nil, p.fail(gateway.PrintNotSent, "", context.Cause(ctx))
		case err != nil:
			st := StateOf(err)
			if st == "" {
				st = storeprint.PrinterUnknown
			}
			return nil, nil, p.fail(gateway.PrintNotSent, st, fmt.Errorf("find out how the printer confirms: %w", err))
		}
		job.Confirms = m
		return sc, nil, nil
	case jc == nil:
		return nil, nil, p.fail(gateway.PrintNotSent, "", fmt.Errorf("a %T can neither take a job nor a byte stream", c))
	}
	job.Confirms = confirmsOf(c, p.t)
	return nil, jc, nil
}

// send sends the ticket: on a byte stream with its confirmation request
// after it, to a job taker as a job (its id returned). From the first
// byte on, nobody knows whether paper comes out unless the printer says
// so: a failure after it is uncertain, one before it is not.
func (p *Pipeline) send(ctx context.Context, sc StreamConn, jc JobConn, job *gateway.PrintJob, payload []byte) (jobID string, err error) {
	var sent atomic.Bool
	wctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration+p.cfg.ConfirmTimeout.Duration, "ticket sent")
	if sc != nil {
		sent.Store(true)
		err = sc.Write(wctx, append(payload, request(job.Confirms, job.ProcessID)...))
	} else {
		jobID, err = jc.Send(wctx, job, payload, func() { sent.Store(true) })
	}
	cancel()
	if err == nil {
		return jobID, nil
	}
	if !sent.Load() {
		// Nothing left: the printer may have said it cannot print
		// now, or gone away since its status.
		switch st := StateOf(err); st {
		case storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen:
			return "", p.fail(gateway.PrintNotReady, st, fmt.Errorf("send ticket: %w", err))
		case "":
			return "", p.fail(gateway.PrintNotSent, storeprint.PrinterReady, fmt.Errorf("send ticket: %w", err))
		default:
			return "", p.fail(gateway.PrintNotSent, st, fmt.Errorf("send ticket: %w", err))
		}
	}
	st := StateOf(err)
	if st == "" {
		st = storeprint.PrinterReady // as it said a moment ago
	}
	return "", p.fail(gateway.PrintUncertain, st, fmt.Errorf("send ticket: %w", err))
}

// ProbeTransport is a transport whose printers answer a confirmation
// request sent alone, with nothing to print before it (ESC/POS GS ( H or
// GS r 1 over TCP or a serial line): its Conns are StreamConns, and a
// request written alone puts no paper out.
type ProbeTransport interface {
	Transport
	ConfirmsAlone()
}

var _ gateway.Prober = (*Pipeline)(nil)

// ErrNoProbe is Probe's answer on a transport that cannot prove its print
// path without paper (a spooler, an HTTP printer).
var ErrNoProbe = errors.New("this kind of printer cannot be probed without paper")

// Probe proves the print path without paper: a status round trip, then
// the printer's confirmation request sent alone, answered at once
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
	sc, ok := c.(StreamConn)
	if !ok {
		return ErrNoProbe
	}
	sctx, cancel := p.bound(ctx, p.cfg.ConnectTimeout.Duration, "status answer")
	st, err := c.Status(sctx)
	cancel()
	switch {
	case err != nil:
		return p.errorf("probe: status: %w", err)
	case st.State != storeprint.PrinterReady:
		return p.errorf("probe: printer reports %s", st.State)
	}
	want := storeprint.Confirm(p.confirm)
	if p.confirm == ConfirmAuto {
		p.mu.Lock()
		want = p.found
		p.mu.Unlock()
	}
	if want == "" {
		// Never reached before: finding out is the probe.
		if _, err := p.method(ctx, sc); err != nil {
			return p.errorf("probe: %w", err)
		}
		return nil
	}
	got, err := p.detect(ctx, sc, want)
	if err != nil {
		return p.errorf("probe: %w", err)
	}
	if rank(got) < rank(want) {
		return p.errorf("probe: no answer to %s", requestName(want))
	}
	return nil
}

// unreachable forgets what the printer said it is: the one that answers
// next may be another.
func (p *Pipeline) unreachable() {
	p.mu.Lock()
	p.maker = makerUnknown
	p.mu.Unlock()
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
