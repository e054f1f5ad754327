package serial

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	bugst "go.bug.st/serial"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

var _ gateway.Printer = (*Printer)(nil)

// Serial line defaults, the same as gateway.Config.SetDefaults gives.
const (
	DefaultBaud     = 19200
	DefaultDataBits = 8
)

// readQuantum bounds one blocking read, so that a cancellation or Close
// ends a wait within it.
const readQuantum = 50 * time.Millisecond

// errClosed ends the calls of a closed Printer.
var errClosed = errors.New("printer closed")

// Printer is a receipt printer on a serial line. One call uses the line at
// a time; Close may come from any goroutine.
type Printer struct {
	cfg     gateway.PrinterConfig
	storeID string
	mode    *bugst.Mode
	modeErr error // a line setting go.bug.st/serial cannot take

	sem  chan struct{} // held by the call using the line
	line *line         // the open line, or nil; only the holder of sem touches it

	closed atomic.Bool
	life   context.Context // done once Close is called
	kill   context.CancelFunc
}

// New returns a driver for the printer cfg describes: cfg.Address is the
// device (/dev/ttyUSB0, COM3), cfg.Baud, DataBits, Parity, StopBits and
// Flow its line settings. storeID heads the tickets that do not name their
// store. Zero values take the gateway's defaults. The device is opened by
// the first call, not by New.
func New(cfg gateway.PrinterConfig, storeID string) *Printer {
	cfg.Driver = "serial"
	cfg.SetDefaults()
	mode, err := lineMode(cfg)
	life, kill := context.WithCancel(context.Background())
	return &Printer{
		cfg: cfg, storeID: storeID, mode: mode, modeErr: err,
		sem: make(chan struct{}, 1), life: life, kill: kill,
	}
}

// CheckConfig reports a line setting of cfg that this driver cannot honour
// on this system, naming the key: flow control other than none off Linux,
// 1.5 stop bits off Windows, values the gateway does not know. Call it at
// start-up: a driver with such a setting reports every call as offline.
func CheckConfig(cfg gateway.PrinterConfig) error {
	if cfg.Parity == "" {
		cfg.Parity = "none"
	}
	if cfg.StopBits == "" {
		cfg.StopBits = "1"
	}
	if _, err := lineMode(cfg); err != nil {
		return err
	}
	return checkFlow(cfg.Flow)
}

// lineMode turns cfg's line settings into a go.bug.st/serial mode.
func lineMode(cfg gateway.PrinterConfig) (*bugst.Mode, error) {
	m := &bugst.Mode{BaudRate: cfg.Baud, DataBits: cfg.DataBits}
	if m.BaudRate == 0 {
		m.BaudRate = DefaultBaud
	}
	if m.DataBits == 0 {
		m.DataBits = DefaultDataBits
	}
	if m.BaudRate < 0 {
		return nil, fmt.Errorf("baud: %d is not a baud rate", cfg.Baud)
	}
	if m.DataBits < 5 || m.DataBits > 8 {
		return nil, fmt.Errorf("data_bits: %d is not between 5 and 8", cfg.DataBits)
	}
	switch cfg.Parity {
	case "none":
		m.Parity = bugst.NoParity
	case "odd":
		m.Parity = bugst.OddParity
	case "even":
		m.Parity = bugst.EvenParity
	case "mark":
		m.Parity = bugst.MarkParity
	case "space":
		m.Parity = bugst.SpaceParity
	default:
		return nil, fmt.Errorf("parity: %q is not one of none, odd, even, mark, space", cfg.Parity)
	}
	switch cfg.StopBits {
	case "1":
		m.StopBits = bugst.OneStopBit
	case "1.5":
		if runtime.GOOS != "windows" {
			return nil, fmt.Errorf("stop_bits: 1.5 stop bits are only available on Windows (go.bug.st/serial refuses them on %s)", runtime.GOOS)
		}
		m.StopBits = bugst.OnePointFiveStopBits
	case "2":
		m.StopBits = bugst.TwoStopBits
	default:
		return nil, fmt.Errorf("stop_bits: %q is not one of 1, 1.5, 2", cfg.StopBits)
	}
	return m, nil
}

// Status reads the printer's status with DLE EOT 1, 2 and 4. A device
// that cannot be opened, or that fails as it is read or written (it was
// unplugged), is PrinterOffline with a nil error; a printer that answers
// with something else or not within the connect timeout is PrinterUnknown
// with an error.
func (p *Printer) Status(ctx context.Context) (gateway.PrinterStatus, error) {
	if p.closed.Load() {
		return gateway.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	ctx, cancel := p.callContext(ctx)
	defer cancel()
	if err := p.acquire(ctx); err != nil {
		return gateway.PrinterStatus{State: storeprint.PrinterUnknown}, p.errorf("status: %w", err)
	}
	defer p.release()
	_, st, err := p.status(ctx)
	switch {
	case ctx.Err() != nil:
		return gateway.PrinterStatus{State: storeprint.PrinterUnknown}, p.errorf("status: %w", context.Cause(ctx))
	case err == nil:
		return st, nil
	case deviceGone(err):
		return gateway.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	return gateway.PrinterStatus{State: storeprint.PrinterUnknown}, p.errorf("status: %w", err)
}

// Print sends one ticket and waits for the printer's own confirmation,
// step by step as the tcp driver does:
//
//  1. open the device unless it is open; failure is PrintNotSent, offline;
//  2. discard stale input, then DLE EOT 1, 2, 4, answered within the
//     connect timeout; no answer is PrintNotSent, an I/O error PrintNotSent
//     and offline, a printer not ready PrintNotReady with its state;
//  3. job.Prepare with the rendered ticket; its error is PrintNotSent;
//  4. the ticket and a process ID request (GS ( H); from the first byte
//     on, every failure is PrintUncertain;
//  5. job.Submitted, then up to cfg.ConfirmTimeout for the answer with
//     job.ProcessID, skipping any other bytes. Only that answer is nil.
//
// Cancelling ctx, or Close, stops any step; before the write it is
// PrintNotSent, after it PrintUncertain.
func (p *Printer) Print(ctx context.Context, job *gateway.PrintJob) error {
	if p.closed.Load() {
		return p.fail(gateway.PrintNotSent, "", errClosed)
	}
	if !escpos.ValidProcessID(job.ProcessID) {
		return p.fail(gateway.PrintNotSent, "", fmt.Errorf("process id %q is not four ASCII digits", job.ProcessID))
	}
	t := job.Ticket
	if t.StoreID == "" {
		t.StoreID = p.storeID
	}
	payload, err := escpos.Encode(t, p.cfg.Encoding, p.cfg.Width, nil)
	if err != nil {
		return p.fail(gateway.PrintNotSent, "", fmt.Errorf("render ticket: %w", err))
	}

	lctx, cancel := p.callContext(ctx)
	defer cancel()
	if err := p.acquire(lctx); err != nil {
		return p.fail(gateway.PrintNotSent, "", err)
	}
	defer p.release()
	if lctx.Err() != nil {
		return p.fail(gateway.PrintNotSent, "", context.Cause(lctx))
	}

	l, st, err := p.status(lctx)
	switch {
	case lctx.Err() != nil:
		return p.fail(gateway.PrintNotSent, "", context.Cause(lctx))
	case err != nil && deviceGone(err):
		return p.fail(gateway.PrintNotSent, storeprint.PrinterOffline, err)
	case err != nil:
		return p.fail(gateway.PrintNotSent, storeprint.PrinterUnknown, err)
	case st.State != storeprint.PrinterReady:
		return p.fail(gateway.PrintNotReady, st.State, fmt.Errorf("printer reports %s", st.State))
	}

	if job.Prepare != nil {
		if err := job.Prepare(ctx, payload); err != nil {
			return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, fmt.Errorf("prepare: %w", err))
		}
	}
	if lctx.Err() != nil {
		return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, context.Cause(lctx))
	}

	// From the first byte on, nobody knows whether paper comes out
	// unless the printer says so.
	l.bound(lctx, p.cfg.ConfirmTimeout.Duration)
	if err := l.write(append(payload, escpos.ProcessIDRequest(job.ProcessID)...)); err != nil {
		return p.fail(gateway.PrintUncertain, storeprint.PrinterReady, fmt.Errorf("send ticket: %w", err))
	}
	if job.Submitted != nil {
		job.Submitted(ctx, "")
	}
	for {
		id, err := escpos.ReadConfirmation(l.r)
		if err != nil {
			return p.fail(gateway.PrintUncertain, storeprint.PrinterReady,
				fmt.Errorf("wait for confirmation %s: %w", job.ProcessID, err))
		}
		if id == job.ProcessID {
			return nil
		}
		// An answer to someone else's request: not ours.
	}
}

// Close makes further calls fail and closes the device. A call in
// progress ends at once (as if its context were cancelled) and closes the
// device as it returns.
func (p *Printer) Close() error {
	p.closed.Store(true)
	p.kill()
	if err := p.closeIdle(); err != nil {
		return p.errorf("close: %w", err)
	}
	return nil
}

// status opens the line unless it is open, discards stale input and reads
// the printer's status. A line left open by an earlier call that fails
// with an I/O error means the device went away since, and may be back: it
// is closed and opened afresh, and asked once more. Nothing of a ticket has
// been sent yet, so trying again is safe.
func (p *Printer) status(ctx context.Context) (*line, gateway.PrinterStatus, error) {
	for retried := false; ; retried = true {
		l, reused, err := p.open()
		if err != nil {
			return nil, gateway.PrinterStatus{}, err
		}
		st, err := l.status(ctx, p.cfg.ConnectTimeout.Duration)
		p.settle()
		if err != nil && reused && !retried && ctx.Err() == nil && deviceGone(err) {
			continue
		}
		if err != nil {
			return nil, gateway.PrinterStatus{}, fmt.Errorf("status: %w", err)
		}
		return l, st, nil
	}
}

// open returns the open line, opening the device if need be; reused says
// the line was open already.
func (p *Printer) open() (l *line, reused bool, err error) {
	if p.line != nil {
		return p.line, true, nil
	}
	if p.modeErr != nil {
		return nil, false, &openError{p.modeErr}
	}
	port, err := openPort(p.cfg.Address, p.mode, p.cfg.Flow)
	if err != nil {
		return nil, false, &openError{err}
	}
	p.line = newLine(port)
	return p.line, false, nil
}

// settle lets go of a line that cannot be used again: one that failed is
// closed, one with a write still blocked (flow control holding it) is
// closed once that write returns. The next call opens the device afresh.
func (p *Printer) settle() {
	l := p.line
	switch {
	case l == nil:
	case l.pending != nil:
		p.line = nil
		go func() {
			<-l.pending
			_ = l.port.Close() // given up already: nobody to tell
		}()
	case l.broken:
		p.line = nil
		_ = l.port.Close() // it failed already: closing it tells nothing new
	}
}

// callContext returns ctx, also cancelled (with errClosed as the cause)
// when the Printer is closed.
func (p *Printer) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(p.life, func() { cancel(errClosed) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// acquire waits for the line to be free.
func (p *Printer) acquire(ctx context.Context) error {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if p.closed.Load() {
		<-p.sem
		return errClosed
	}
	return nil
}

// release settles the line and frees it. A Printer closed meanwhile
// closes the line now.
func (p *Printer) release() {
	p.settle()
	<-p.sem
	if p.closed.Load() {
		_ = p.closeIdle() // Close reports nothing for a call in progress
	}
}

// closeIdle closes the line unless a call holds it; that call closes it as
// it ends (see release).
func (p *Printer) closeIdle() error {
	select {
	case p.sem <- struct{}{}:
	default:
		return nil
	}
	defer func() { <-p.sem }()
	l := p.line
	if l == nil {
		return nil
	}
	p.line = nil
	if l.pending != nil {
		go func() {
			<-l.pending
			_ = l.port.Close() // given up already: nobody to tell
		}()
		return nil
	}
	return l.port.Close()
}

func (p *Printer) fail(o gateway.PrintOutcome, st storeprint.PrinterState, err error) error {
	return &gateway.PrintError{Outcome: o, State: st, Err: p.errorf("%w", err)}
}

func (p *Printer) errorf(format string, args ...any) error {
	return fmt.Errorf("printer %s at %s: "+format, append([]any{p.cfg.ID, p.cfg.Address}, args...)...)
}

// openError is a device that could not be opened: missing, busy, not a
// serial port.
type openError struct{ err error }

func (e *openError) Error() string { return "open: " + e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// ioError is a read or write that failed: the device went away.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// deviceGone reports whether err means the device is not there: it could
// not be opened, or it failed as it was read or written.
func deviceGone(err error) bool {
	var oe *openError
	var ie *ioError
	return errors.As(err, &oe) || errors.As(err, &ie)
}

// line is an open serial port, with the bounds of the current wait.
type line struct {
	port    bugst.Port
	r       *bufio.Reader // reads through the line's bounds
	broken  bool          // a read or write failed
	pending chan error    // a write given up on while blocked; nil if none

	ctx      context.Context
	deadline time.Time
	timeout  time.Duration
}

func newLine(port bugst.Port) *line {
	l := &line{port: port, ctx: context.Background()}
	l.r = bufio.NewReader(lineReader{l})
	return l
}

// bound makes the line's reads and writes end with ctx or after timeout.
func (l *line) bound(ctx context.Context, timeout time.Duration) {
	l.ctx, l.deadline, l.timeout = ctx, time.Now().Add(timeout), timeout
}

// status discards stale input, sends DLE EOT 1, 2 and 4 and reads the
// answers within timeout.
func (l *line) status(ctx context.Context, timeout time.Duration) (gateway.PrinterStatus, error) {
	l.bound(ctx, timeout)
	if err := l.drain(); err != nil {
		return gateway.PrinterStatus{}, err
	}
	if err := l.write(escpos.StatusQuery()); err != nil {
		return gateway.PrinterStatus{}, fmt.Errorf("send status request: %w", err)
	}
	n1, n2, n4, err := escpos.ReadStatus(l.r)
	if err != nil {
		return gateway.PrinterStatus{}, fmt.Errorf("read status answer: %w", err)
	}
	return escpos.ParseStatus(n1, n2, n4), nil
}

// drain discards input left from before: read ahead, waiting in the
// device, and arriving right now.
func (l *line) drain() error {
	l.r.Reset(lineReader{l})
	if err := l.port.ResetInputBuffer(); err != nil {
		l.broken = true
		return &ioError{fmt.Errorf("discard stale input: %w", err)}
	}
	if err := l.port.SetReadTimeout(0); err != nil {
		l.broken = true
		return &ioError{fmt.Errorf("discard stale input: %w", err)}
	}
	buf := make([]byte, 512)
	for range 64 {
		n, err := l.port.Read(buf)
		if err != nil {
			l.broken = true
			return &ioError{fmt.Errorf("discard stale input: %w", err)}
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// write sends b within the line's bounds. A write still blocked when they
// end (flow control holding the line) is left to finish on its own: the
// rest of the ticket goes out if the line frees, as bytes already in a
// printer's buffer would print, and the line is closed once it returns.
func (l *line) write(b []byte) error {
	done := make(chan error, 1)
	go func() { done <- writeAll(l.port, b) }()
	timer := time.NewTimer(time.Until(l.deadline))
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
		if err != nil {
			l.broken = true
			return &ioError{err}
		}
		return nil
	case <-timer.C:
		err = fmt.Errorf("write not done within %s: %w", l.timeout, os.ErrDeadlineExceeded)
	case <-l.ctx.Done():
		err = context.Cause(l.ctx)
	}
	select {
	case werr := <-done: // it finished after all
		if werr != nil {
			l.broken = true
			return &ioError{werr}
		}
		return nil
	default:
		l.pending = done
		return err
	}
}

// writeAll writes all of b: a write may take part of it.
func writeAll(port bugst.Port, b []byte) error {
	for len(b) > 0 {
		n, err := port.Write(b)
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if n == 0 {
			return errors.New("write: the device took no bytes")
		}
		b = b[n:]
	}
	return nil
}

// lineReader reads from the port within the line's bounds, a short
// blocking read at a time so that a cancellation is seen within
// readQuantum.
type lineReader struct{ l *line }

func (r lineReader) Read(b []byte) (int, error) {
	l := r.l
	for {
		if l.ctx.Err() != nil {
			return 0, context.Cause(l.ctx)
		}
		left := time.Until(l.deadline)
		if left <= 0 {
			return 0, fmt.Errorf("none within %s: %w", l.timeout, os.ErrDeadlineExceeded)
		}
		if err := l.port.SetReadTimeout(min(left, readQuantum)); err != nil {
			l.broken = true
			return 0, &ioError{fmt.Errorf("set read timeout: %w", err)}
		}
		n, err := l.port.Read(b)
		if err != nil {
			l.broken = true
			return n, &ioError{fmt.Errorf("read: %w", err)}
		}
		if n > 0 {
			return n, nil
		}
	}
}
