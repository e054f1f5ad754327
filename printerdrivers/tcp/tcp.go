package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

var _ gateway.Printer = (*Printer)(nil)

// Printer is a network receipt printer reached over a raw TCP socket
// (usually port 9100). It opens one connection per call and closes it
// before returning.
type Printer struct {
	cfg     gateway.PrinterConfig
	storeID string
	closed  atomic.Bool
}

// New returns a driver for the printer cfg describes. storeID heads the
// tickets that do not name their store. Zero timeouts, encoding and width
// take the gateway's defaults.
func New(cfg gateway.PrinterConfig, storeID string) *Printer {
	cfg.SetDefaults()
	return &Printer{cfg: cfg, storeID: storeID}
}

// Status reads the printer's status with DLE EOT 1, 2 and 4. A printer that
// cannot be reached, or that closes the connection without answering, is
// PrinterOffline with a nil error; one that answers with something else or
// not within the connect timeout is PrinterUnknown with an error.
func (p *Printer) Status(ctx context.Context) (gateway.PrinterStatus, error) {
	c, err := p.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return gateway.PrinterStatus{State: storeprint.PrinterUnknown}, p.errorf("status: %w", ctx.Err())
		}
		return gateway.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	defer c.Close()
	st, err := c.status(p.cfg.ConnectTimeout.Duration)
	switch {
	case err == nil:
		return st, nil
	case ctx.Err() != nil:
		return gateway.PrinterStatus{State: storeprint.PrinterUnknown}, p.errorf("status: %w", ctx.Err())
	case closedByPeer(err):
		return gateway.PrinterStatus{State: storeprint.PrinterOffline}, nil
	}
	return gateway.PrinterStatus{State: storeprint.PrinterUnknown}, p.errorf("status: %w", err)
}

// Print sends one ticket and waits for the printer's own confirmation:
//
//  1. connect (cfg.ConnectTimeout); failure is PrintNotSent, offline;
//  2. DLE EOT 1, 2, 4, answered within the connect timeout; no answer is
//     PrintNotSent, a printer not ready is PrintNotReady with its state;
//  3. job.Prepare with the rendered ticket; its error is PrintNotSent;
//  4. the ticket and a process ID request (GS ( H) in one write; from the
//     first byte on, every failure is PrintUncertain;
//  5. job.Submitted, then up to cfg.ConfirmTimeout for the answer with
//     job.ProcessID, skipping any other bytes. Only that answer is nil.
//
// Cancelling ctx stops any step; before the write it is PrintNotSent,
// after it PrintUncertain.
func (p *Printer) Print(ctx context.Context, job *gateway.PrintJob) error {
	if p.closed.Load() {
		return p.fail(gateway.PrintNotSent, "", errors.New("printer closed"))
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

	c, err := p.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return p.fail(gateway.PrintNotSent, "", ctx.Err())
		}
		return p.fail(gateway.PrintNotSent, storeprint.PrinterOffline, err)
	}
	defer c.Close()

	st, err := c.status(p.cfg.ConnectTimeout.Duration)
	switch {
	case ctx.Err() != nil:
		return p.fail(gateway.PrintNotSent, "", ctx.Err())
	case err != nil && closedByPeer(err):
		return p.fail(gateway.PrintNotSent, storeprint.PrinterOffline, fmt.Errorf("status: %w", err))
	case err != nil:
		return p.fail(gateway.PrintNotSent, storeprint.PrinterUnknown, fmt.Errorf("status: %w", err))
	case st.State != storeprint.PrinterReady:
		return p.fail(gateway.PrintNotReady, st.State, fmt.Errorf("printer reports %s", st.State))
	}

	if job.Prepare != nil {
		if err := job.Prepare(ctx, payload); err != nil {
			return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, fmt.Errorf("prepare: %w", err))
		}
	}
	if ctx.Err() != nil {
		return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, ctx.Err())
	}

	// From the first byte on, nobody knows whether paper comes out
	// unless the printer says so.
	if err := c.setDeadline(time.Now().Add(p.cfg.ConfirmTimeout.Duration)); err != nil {
		return p.fail(gateway.PrintNotSent, storeprint.PrinterReady, err)
	}
	if _, err := c.Write(append(payload, escpos.ProcessIDRequest(job.ProcessID)...)); err != nil {
		return p.fail(gateway.PrintUncertain, storeprint.PrinterReady, c.cause(fmt.Errorf("send ticket: %w", err)))
	}
	if job.Submitted != nil {
		job.Submitted(ctx, "")
	}
	for {
		id, err := escpos.ReadConfirmation(c.r)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && c.ctx.Err() == nil {
				err = fmt.Errorf("none within %s: %w", p.cfg.ConfirmTimeout.Duration, err)
			}
			return p.fail(gateway.PrintUncertain, storeprint.PrinterReady,
				c.cause(fmt.Errorf("wait for confirmation %s: %w", job.ProcessID, err)))
		}
		if id == job.ProcessID {
			return nil
		}
		// An answer to someone else's request: not ours.
	}
}

var _ gateway.Prober = (*Printer)(nil)

// Probe proves the print path without paper: after a status round trip it
// sends a process ID request (GS ( H) alone and waits up to the confirm
// timeout for the printer's answer, which it gives once everything before
// it (nothing) has printed.
func (p *Printer) Probe(ctx context.Context) error {
	c, err := p.dial(ctx)
	if err != nil {
		return p.errorf("probe: %w", err)
	}
	defer c.Close()
	st, err := c.status(p.cfg.ConnectTimeout.Duration)
	if err != nil {
		return p.errorf("probe: status: %w", err)
	}
	if st.State != storeprint.PrinterReady {
		return p.errorf("probe: printer reports %s", st.State)
	}
	id := storeprint.NewProcessID()
	if err := c.setDeadline(time.Now().Add(p.cfg.ConfirmTimeout.Duration)); err != nil {
		return p.errorf("probe: %w", err)
	}
	if _, err := c.Write(escpos.ProcessIDRequest(id)); err != nil {
		return p.errorf("probe: send request: %w", c.cause(err))
	}
	for {
		got, err := escpos.ReadConfirmation(c.r)
		if err != nil {
			return p.errorf("probe: wait for the answer: %w", c.cause(err))
		}
		if got == id {
			return nil
		}
	}
}

// Close makes further calls fail; a Printer holds no connection between
// calls.
func (p *Printer) Close() error {
	p.closed.Store(true)
	return nil
}

func (p *Printer) fail(o gateway.PrintOutcome, st storeprint.PrinterState, err error) error {
	return &gateway.PrintError{Outcome: o, State: st, Err: p.errorf("%w", err)}
}

func (p *Printer) errorf(format string, args ...any) error {
	return fmt.Errorf("printer %s at %s: "+format, append([]any{p.cfg.ID, p.cfg.Address}, args...)...)
}

// conn is one connection to the printer, its deadlines tied to a context.
type conn struct {
	net.Conn
	r    *bufio.Reader
	ctx  context.Context
	stop func() bool // stops tying the context to the deadline
}

func (p *Printer) dial(ctx context.Context) (*conn, error) {
	if p.closed.Load() {
		return nil, errors.New("printer closed")
	}
	d := net.Dialer{Timeout: p.cfg.ConnectTimeout.Duration}
	nc, err := d.DialContext(ctx, "tcp", p.cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	c := &conn{Conn: nc, r: bufio.NewReader(nc), ctx: ctx}
	// Cancelling ctx ends any read or write at once.
	c.stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	return c, nil
}

// setDeadline sets the connection's deadline. It fails if ctx is done:
// the cancellation's own deadline would otherwise be overwritten.
func (c *conn) setDeadline(t time.Time) error {
	if err := c.Conn.SetDeadline(t); err != nil {
		return err
	}
	return c.ctx.Err()
}

// status asks DLE EOT 1, 2 and 4 and reads the answers within timeout.
func (c *conn) status(timeout time.Duration) (gateway.PrinterStatus, error) {
	if err := c.setDeadline(time.Now().Add(timeout)); err != nil {
		return gateway.PrinterStatus{}, err
	}
	if _, err := c.Write(escpos.StatusQuery()); err != nil {
		return gateway.PrinterStatus{}, fmt.Errorf("send status request: %w", err)
	}
	n1, n2, n4, err := escpos.ReadStatus(c.r)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && c.ctx.Err() == nil {
			err = fmt.Errorf("none within %s: %w", timeout, err)
		}
		return gateway.PrinterStatus{}, fmt.Errorf("read status answer: %w", c.cause(err))
	}
	return escpos.ParseStatus(n1, n2, n4), nil
}

// cause puts a cancellation in place of the deadline error it caused.
func (c *conn) cause(err error) error {
	if c.ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", c.ctx.Err(), err)
	}
	return err
}

func (c *conn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// closedByPeer reports whether err means the printer closed or reset the
// connection: nothing is listening to us there.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}
