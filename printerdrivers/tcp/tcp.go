package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

var _ gateway.Printer = (*Printer)(nil)

// Printer is a network receipt printer reached over a raw TCP socket
// (usually port 9100), printing through the confirmed-print pipeline
// (printerdrivers.Pipeline). It opens one connection per call and closes
// it before returning.
type Printer struct {
	*printerdrivers.Pipeline
}

func init() {
	printerdrivers.Register("tcp", func(pc gateway.PrinterConfig, env *printerdrivers.Env) (gateway.Printer, error) {
		p := New(pc, env.StoreID)
		if env.Clock != nil {
			p.SetClock(env.Clock)
		}
		return p, nil
	})
}

// New returns a driver for the printer cfg describes; its Options are of
// type Options, or only printerdrivers.Stream. storeID heads the tickets
// that do not name their store. Zero timeouts, encoding and width take the
// gateway's defaults.
func New(cfg gateway.PrinterConfig, storeID string) *Printer {
	cfg.Driver = "tcp"
	cfg.Options = optionsOf(cfg)
	cfg.SetDefaults()
	return &Printer{printerdrivers.New(&transport{cfg: cfg}, cfg, storeID)}
}

// transport is the TCP socket: DLE EOT for status, then the bytes the
// pipeline writes (the ticket and its confirmation request) and the
// printer's answers it reads.
type transport struct {
	cfg    gateway.PrinterConfig
	closed atomic.Bool
}

func (t *transport) Describe() string {
	return fmt.Sprintf("printer %s at %s", t.cfg.ID, t.cfg.Address)
}

func (t *transport) Encode(job *gateway.PrintJob, tk storeprint.Ticket) ([]byte, error) {
	return printerdrivers.EncodeStream(job, tk, t.cfg)
}

// Open connects within the connect timeout.
func (t *transport) Open(ctx context.Context) (printerdrivers.Conn, error) {
	if t.closed.Load() {
		return nil, errors.New("printer closed")
	}
	d := net.Dialer{Timeout: t.cfg.ConnectTimeout.Duration}
	nc, err := d.DialContext(ctx, "tcp", t.cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &conn{nc: nc, r: bufio.NewReader(nc)}, nil
}

// Close makes further calls fail; the transport holds no connection
// between calls.
var _ printerdrivers.ProbeTransport = (*transport)(nil)

// ConfirmsAlone marks an ESC/POS transport: a confirmation request sent
// alone is answered without paper, so the pipeline can probe the printer.
func (t *transport) ConfirmsAlone() {}

func (t *transport) Close() error {
	t.closed.Store(true)
	return nil
}

// conn is one connection to the printer.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
}

func (c *conn) Close() error { return c.nc.Close() }

// bind makes the connection's reads and writes end with ctx: at its
// deadline, and at once when it is cancelled. Call the returned function
// when the step is over.
//
// Once the returned function has returned, the end of ctx touches the
// connection no more: a step that ended at its deadline (a confirmation
// request sent alone and not answered) leaves the next step's bounds alone.
func (c *conn) bind(ctx context.Context) (func(), error) {
	deadline, _ := ctx.Deadline() // zero: none
	if err := c.nc.SetDeadline(deadline); err != nil {
		return func() {}, err
	}
	var mu sync.Mutex
	over := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			_ = c.nc.SetDeadline(time.Unix(1, 0))
		}
	})
	done := func() {
		stop()
		mu.Lock()
		over = true
		mu.Unlock()
	}
	if ctx.Err() != nil {
		done()
		return func() {}, context.Cause(ctx)
	}
	return done, nil
}

// Status asks DLE EOT 1, 2 and 4 and reads the answers.
func (c *conn) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	done, err := c.bind(ctx)
	defer done()
	if err != nil {
		return storeprint.PrinterStatus{}, err
	}
	if _, err := c.nc.Write(escpos.StatusQuery()); err != nil {
		return storeprint.PrinterStatus{}, c.offline(fmt.Errorf("send status request: %w", cause(ctx, err)))
	}
	n1, n2, n4, err := escpos.ReadStatus(c.r)
	if err != nil {
		return storeprint.PrinterStatus{}, c.offline(fmt.Errorf("read status answer: %w", cause(ctx, err)))
	}
	return escpos.ParseStatus(n1, n2, n4), nil
}

var _ printerdrivers.StreamConn = (*conn)(nil)

// Write writes b before ctx ends.
func (c *conn) Write(ctx context.Context, b []byte) error {
	done, err := c.bind(ctx)
	defer done()
	if err != nil {
		return err
	}
	if _, err := c.nc.Write(b); err != nil {
		return c.offline(cause(ctx, err))
	}
	return nil
}

// Reader returns the connection's reader, its reads bound by ctx until
// done is called.
func (c *conn) Reader(ctx context.Context) (*bufio.Reader, func(), error) {
	done, err := c.bind(ctx)
	if err != nil {
		done()
		return nil, func() {}, err
	}
	return c.r, done, nil
}

// offline marks an error that means nothing answers there: the printer
// closed or reset the connection.
func (c *conn) offline(err error) error {
	if closedByPeer(err) {
		return printerdrivers.WithState(storeprint.PrinterOffline, err)
	}
	return err
}

// cause puts the reason ctx ended (a cancellation, the pipeline's bound)
// in place of the deadline error it caused.
func cause(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	return err
}

// closedByPeer reports whether err means the printer closed or reset the
// connection: nothing is listening to us there.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}
