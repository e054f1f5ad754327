package serial

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bugst "go.bug.st/serial"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
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

// Printer is a receipt printer on a serial line, printing through the
// confirmed-print pipeline (printerdrivers.Pipeline). One call uses the
// line at a time; Close may come from any goroutine.
type Printer struct {
	*printerdrivers.Pipeline
}

// transport is the serial line: the open port is kept between calls, and
// each call holds it from Open to its Conn's Close.
type transport struct {
	cfg     gateway.PrinterConfig
	opts    Options
	mode    *bugst.Mode
	modeErr error // a line setting go.bug.st/serial cannot take

	sem  chan struct{} // held by the call using the line
	line *line         // the open line, or nil; only the holder of sem touches it

	closed atomic.Bool
	life   context.Context // done once Close is called
	kill   context.CancelFunc
}

// New returns a driver for the printer cfg describes: cfg.Address is the
// device (/dev/ttyUSB0, COM3), its Options (of type Options, or only
// printerdrivers.Stream) its line settings. storeID heads the tickets that
// do not name their store. Zero values take the defaults. The device is
// opened by the first call, not by New.
func New(cfg gateway.PrinterConfig, storeID string) *Printer {
	cfg.Driver = "serial"
	cfg.Options = optionsOf(cfg)
	cfg.SetDefaults()
	opts := cfg.Options.(Options)
	mode, err := lineMode(opts)
	life, kill := context.WithCancel(context.Background())
	t := &transport{
		cfg: cfg, opts: opts, mode: mode, modeErr: err,
		sem: make(chan struct{}, 1), life: life, kill: kill,
	}
	return &Printer{printerdrivers.New(t, cfg, storeID)}
}

func init() {
	printerdrivers.Register("serial", func(pc gateway.PrinterConfig, env *printerdrivers.Env) (gateway.Printer, error) {
		if err := checkConfig(optionsOf(pc)); err != nil {
			return nil, err
		}
		p := New(pc, env.StoreID)
		if env.Clock != nil {
			p.SetClock(env.Clock)
		}
		return p, nil
	})
}

// checkConfig reports a line setting of o that this driver cannot honour
// on this system, naming the key: flow control other than none off Linux,
// 1.5 stop bits off Windows, values the gateway does not know. The driver
// refuses to open with such a setting (a printer made with New reports
// every call as offline).
func checkConfig(o Options) error {
	o = o.WithDefaults().(Options)
	if _, err := lineMode(o); err != nil {
		return err
	}
	return checkFlow(o.Flow)
}

// parities are go.bug.st/serial's parities by their names in the config.
var parities = map[string]bugst.Parity{
	"none": bugst.NoParity, "odd": bugst.OddParity, "even": bugst.EvenParity,
	"mark": bugst.MarkParity, "space": bugst.SpaceParity,
}

// lineMode turns o's line settings (with their defaults) into a
// go.bug.st/serial mode.
func lineMode(o Options) (*bugst.Mode, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	m := &bugst.Mode{BaudRate: o.Baud, DataBits: o.DataBits, Parity: parities[o.Parity]}
	switch o.StopBits {
	case "1":
		m.StopBits = bugst.OneStopBit
	case "1.5":
		if runtime.GOOS != "windows" {
			return nil, fmt.Errorf("stop_bits: 1.5 stop bits are only available on Windows (go.bug.st/serial refuses them on %s)", runtime.GOOS)
		}
		m.StopBits = bugst.OnePointFiveStopBits
	case "2":
		m.StopBits = bugst.TwoStopBits
	}
	return m, nil
}

func (t *transport) Describe() string {
	return fmt.Sprintf("printer %s at %s", t.cfg.ID, t.cfg.Address)
}

func (t *transport) Encode(job *gateway.PrintJob, tk storeprint.Ticket) ([]byte, error) {
	return printerdrivers.EncodeStream(job, tk, t.cfg)
}

// Open waits for the line to be free and holds it until the Conn is
// closed. The device itself is opened by Status, which can open it again
// after an unplug.
func (t *transport) Open(ctx context.Context) (printerdrivers.Conn, error) {
	if t.closed.Load() {
		return nil, errClosed
	}
	ctx, cancel := t.callContext(ctx)
	defer cancel()
	if err := t.acquire(ctx); err != nil {
		return nil, err
	}
	return &conn{t: t}, nil
}

// Close makes further calls fail and closes the device. A call in
// progress ends at once (as if its context were cancelled) and closes the
// device as it returns.
var _ printerdrivers.ProbeTransport = (*transport)(nil)

// ConfirmsAlone marks an ESC/POS transport: a confirmation request sent
// alone is answered without paper, so the pipeline can probe the printer.
func (t *transport) ConfirmsAlone() {}

func (t *transport) Close() error {
	t.closed.Store(true)
	t.kill()
	return t.closeIdle()
}

// conn is one call's hold on the line.
type conn struct {
	t    *transport
	l    *line // the line Status read the printer's status on
	once sync.Once
}

// Status discards stale input and reads the printer's status with DLE EOT
// 1, 2 and 4, opening the device unless it is open. A device that cannot
// be opened, or that fails as it is read or written (it was unplugged),
// is offline.
func (c *conn) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	ctx, cancel := c.t.callContext(ctx)
	defer cancel()
	l, st, err := c.t.status(ctx)
	switch {
	case ctx.Err() != nil:
		return storeprint.PrinterStatus{}, context.Cause(ctx)
	case err != nil && deviceGone(err):
		return storeprint.PrinterStatus{}, printerdrivers.WithState(storeprint.PrinterOffline, err)
	case err != nil:
		return storeprint.PrinterStatus{}, err
	}
	c.l = l
	return st, nil
}

var _ printerdrivers.StreamConn = (*conn)(nil)

// Write writes b on the line Status opened, before ctx ends.
func (c *conn) Write(ctx context.Context, b []byte) error {
	if c.l == nil {
		return errors.New("the line is not open")
	}
	ctx, cancel := c.t.callContext(ctx)
	defer cancel()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	prev := c.l.ctx // a Reader's bounds stay for the reads after this write
	c.l.bound(ctx)
	err := c.l.write(b)
	c.l.bound(prev)
	if err != nil && deviceGone(err) {
		return printerdrivers.WithState(storeprint.PrinterOffline, err)
	}
	return err
}

// Reader returns the line's reader, its reads bound by ctx until done is
// called.
func (c *conn) Reader(ctx context.Context) (*bufio.Reader, func(), error) {
	if c.l == nil {
		return nil, func() {}, errors.New("the line is not open")
	}
	ctx, cancel := c.t.callContext(ctx)
	c.l.bound(ctx)
	return c.l.r, cancel, nil
}

// Close settles the line and frees it for the next call.
func (c *conn) Close() error {
	c.once.Do(c.t.release)
	return nil
}

// status opens the line unless it is open, discards stale input and reads
// the printer's status. A line left open by an earlier call that fails
// with an I/O error means the device went away since, and may be back: it
// is closed and opened afresh, and asked once more. Nothing of a ticket has
// been sent yet, so trying again is safe.
func (t *transport) status(ctx context.Context) (*line, storeprint.PrinterStatus, error) {
	for retried := false; ; retried = true {
		l, reused, err := t.open()
		if err != nil {
			return nil, storeprint.PrinterStatus{}, err
		}
		st, err := l.status(ctx)
		t.settle()
		if err != nil && reused && !retried && ctx.Err() == nil && deviceGone(err) {
			continue
		}
		if err != nil {
			return nil, storeprint.PrinterStatus{}, fmt.Errorf("status: %w", err)
		}
		return l, st, nil
	}
}

// open returns the open line, opening the device if need be; reused says
// the line was open already.
func (t *transport) open() (l *line, reused bool, err error) {
	if t.line != nil {
		return t.line, true, nil
	}
	if t.modeErr != nil {
		return nil, false, &openError{t.modeErr}
	}
	port, err := openPort(t.cfg.Address, t.mode, t.opts.Flow)
	if err != nil {
		return nil, false, &openError{err}
	}
	t.line = newLine(port)
	return t.line, false, nil
}

// settle lets go of a line that cannot be used again: one that failed is
// closed, one with a write still blocked (flow control holding it) is
// closed once that write returns. The next call opens the device afresh.
func (t *transport) settle() {
	l := t.line
	switch {
	case l == nil:
	case l.pending != nil:
		t.line = nil
		go func() {
			<-l.pending
			_ = l.port.Close() // given up already: nobody to tell
		}()
	case l.broken:
		t.line = nil
		_ = l.port.Close() // it failed already: closing it tells nothing new
	}
}

// callContext returns ctx, also cancelled (with errClosed as the cause)
// when the Printer is closed.
func (t *transport) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(t.life, func() { cancel(errClosed) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// acquire waits for the line to be free.
func (t *transport) acquire(ctx context.Context) error {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if t.closed.Load() {
		<-t.sem
		return errClosed
	}
	return nil
}

// release settles the line and frees it. A Printer closed meanwhile
// closes the line now.
func (t *transport) release() {
	t.settle()
	<-t.sem
	if t.closed.Load() {
		_ = t.closeIdle() // Close reports nothing for a call in progress
	}
}

// closeIdle closes the line unless a call holds it; that call closes it as
// it ends (see release).
func (t *transport) closeIdle() error {
	select {
	case t.sem <- struct{}{}:
	default:
		return nil
	}
	defer func() { <-t.sem }()
	l := t.line
	if l == nil {
		return nil
	}
	t.line = nil
	if l.pending != nil {
		go func() {
			<-l.pending
			_ = l.port.Close() // given up already: nobody to tell
		}()
		return nil
	}
	return l.port.Close()
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

	ctx context.Context // the current step: its end ends reads and writes
}

func newLine(port bugst.Port) *line {
	l := &line{port: port, ctx: context.Background()}
	l.r = bufio.NewReader(lineReader{l})
	return l
}

// bound makes the line's reads and writes end with ctx.
func (l *line) bound(ctx context.Context) { l.ctx = ctx }

// status discards stale input, sends DLE EOT 1, 2 and 4 and reads the
// answers before ctx ends.
func (l *line) status(ctx context.Context) (storeprint.PrinterStatus, error) {
	l.bound(ctx)
	if err := l.drain(); err != nil {
		return storeprint.PrinterStatus{}, err
	}
	if err := l.write(escpos.StatusQuery()); err != nil {
		return storeprint.PrinterStatus{}, fmt.Errorf("send status request: %w", err)
	}
	n1, n2, n4, err := escpos.ReadStatus(l.r)
	if err != nil {
		return storeprint.PrinterStatus{}, fmt.Errorf("read status answer: %w", err)
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
	var err error
	select {
	case err = <-done:
		if err != nil {
			l.broken = true
			return &ioError{err}
		}
		return nil
	case <-l.ctx.Done():
		err = fmt.Errorf("write not done: %w", context.Cause(l.ctx))
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
// blocking read at a time so that the end of the step is seen within
// readQuantum.
type lineReader struct{ l *line }

func (r lineReader) Read(b []byte) (int, error) {
	l := r.l
	for {
		if l.ctx.Err() != nil {
			return 0, context.Cause(l.ctx)
		}
		wait := readQuantum
		if deadline, ok := l.ctx.Deadline(); ok {
			wait = min(max(time.Until(deadline), time.Millisecond), readQuantum)
		}
		if err := l.port.SetReadTimeout(wait); err != nil {
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
