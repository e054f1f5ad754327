package cloudprnt

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/starprnt"
)

var _ gateway.Printer = (*Printer)(nil)

// DefaultPollInterval is what a printer's poll interval is taken to be
// until two polls have shown it.
const DefaultPollInterval = 5 * time.Second

// missedPolls is how many poll intervals without a poll make a printer
// offline; the interval is taken to be at least minPollInterval, so that
// a printer whose poll comes late once is not offline at once.
const (
	missedPolls     = 3
	minPollInterval = time.Second
)

// Server is the gateway's CloudPRNT endpoint: the printers configured
// with driver = "cloudprnt" poll it, and each one's driver offers it one
// ticket at a time. Serve it at /v1/cloudprnt.
type Server struct {
	h   http.Handler
	now func() time.Time

	mu      sync.Mutex
	devices map[string]*device // by MAC
}

// ServerOptions configure a Server; zero values are the defaults.
type ServerOptions struct {
	Logger *slog.Logger     // nil: no logging
	Now    func() time.Time // when polls come, for telling a silent printer, and the failed logins' clock; nil: time.Now
}

// NewServer returns an endpoint with no printers; New adds them.
func NewServer(opts ServerOptions) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{now: opts.Now, devices: map[string]*device{}}
	s.h = protocol.HandlerWith(s, protocol.HandlerOptions{Logger: opts.Logger, Now: opts.Now})
	return s
}

// ServeHTTP implements http.Handler: the CloudPRNT protocol, each printer
// told apart by its MAC address and, with a password, HTTP Basic auth.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// Polled returns a channel closed at the next poll of the printer with
// the MAC address mac (nil when there is none), for waiting on a
// printer's polls.
func (s *Server) Polled(mac string) <-chan struct{} {
	s.mu.Lock()
	d := s.devices[mac]
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// Printer implements protocol.Queue.
func (s *Server) Printer(_ context.Context, r *http.Request, mac string) (protocol.Printer, error) {
	s.mu.Lock()
	d := s.devices[mac]
	s.mu.Unlock()
	if d == nil {
		return nil, protocol.ErrUnknownPrinter
	}
	if d.password != "" {
		_, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(pass), []byte(d.password)) != 1 {
			return nil, protocol.ErrUnauthorized
		}
	}
	return d, nil
}

// device is one printer's state at the endpoint. Its lock guards
// everything below it.
type device struct {
	s         *Server
	mac       string
	password  string
	mediaType string

	mu      sync.Mutex
	polls   []time.Time            // the last few polls, oldest first
	status  protocol.PrinterStatus // as the last poll said
	code    string                 // the last poll's status code
	changed chan struct{}          // closed and replaced on every poll
	offer   *offer                 // the ticket in flight, or nil
}

// offer is one ticket handed to the printer.
type offer struct {
	token     string
	body      []byte
	firstByte func()
	claimed   bool        // the printer began to fetch it: no withdrawing it
	written   chan error  // the fetch's write; buffered
	result    chan error  // the printer's confirmation, or its failure; buffered
	withdrawn bool        // the attempt is over
	once      sync.Once   // result is sent once
	wrote     atomic.Bool // written was sent
}

func (o *offer) finish(err error) { o.once.Do(func() { o.result <- err }) }

// Poll implements protocol.Printer: the printer is there, with the status
// it reports; a waiting ticket is offered while it is online. A poll
// reporting a printer error while a fetched ticket prints ends that
// ticket's attempt.
func (d *device) Poll(_ context.Context, p *protocol.Poll) (*protocol.Offer, error) {
	now := d.s.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.polls = append(d.polls, now)
	if len(d.polls) > 5 {
		d.polls = d.polls[1:]
	}
	d.status, d.code = protocol.State(p.StatusCode), p.StatusCode
	close(d.changed)
	d.changed = make(chan struct{})
	o := d.offer
	switch {
	case o == nil || o.withdrawn:
		return nil, nil
	case o.claimed:
		if d.status.State != storeprint.PrinterReady && d.status.State != storeprint.PrinterUnknown && !p.PrintingInProgress {
			o.finish(printerdrivers.WithState(d.status.State, fmt.Errorf("the printer reports %q after fetching the ticket", p.StatusCode)))
		}
		return nil, nil
	case d.status.State != storeprint.PrinterReady:
		return nil, nil // an offline printer does not fetch
	}
	return &protocol.Offer{Token: o.token, MediaTypes: []string{d.mediaType}}, nil
}

// Fetch implements protocol.Printer: the ticket's bytes, once claimed by
// the printer the first byte of the attempt.
func (d *device) Fetch(_ context.Context, token, mediaType string) ([]byte, func(error), error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.offer
	if o == nil || o.withdrawn || (token != "" && token != o.token) {
		return nil, nil, protocol.ErrNoJob
	}
	if mediaType != d.mediaType {
		return nil, nil, protocol.ErrMediaType
	}
	if !o.claimed {
		o.claimed = true
		o.firstByte()
		// Wake the attempt waiting in Send at once, not at the next poll.
		close(d.changed)
		d.changed = make(chan struct{})
	}
	return o.body, func(err error) {
		if !o.wrote.Swap(true) {
			o.written <- err
		}
	}, nil
}

// Confirm implements protocol.Printer.
func (d *device) Confirm(_ context.Context, token, code string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.offer
	if o == nil || o.withdrawn || !o.claimed || (token != "" && token != o.token) {
		return protocol.ErrNoJob
	}
	switch outcome, st := protocol.Result(code); outcome {
	case protocol.Printed:
		o.finish(nil)
	case protocol.NotPrinted:
		o.finish(printerdrivers.NotPrinted(st, fmt.Errorf("the printer could not use the ticket: %q", code)))
	default:
		o.finish(printerdrivers.WithState(st, fmt.Errorf("the printer confirmed the ticket with %q", code)))
	}
	return nil
}

// state returns the printer's state now: offline when it has not polled
// for missedPolls poll intervals (or ever).
func (d *device) state() (protocol.PrinterStatus, string, error) {
	now := d.s.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.polls) == 0 {
		return protocol.PrinterStatus{}, "", printerdrivers.WithState(storeprint.PrinterOffline,
			errors.New("the printer has not polled since the gateway started"))
	}
	last := d.polls[len(d.polls)-1]
	interval := DefaultPollInterval
	if len(d.polls) > 1 {
		interval = minPollInterval
		for i := 1; i < len(d.polls); i++ {
			interval = max(interval, d.polls[i].Sub(d.polls[i-1]))
		}
	}
	if silent := now.Sub(last); silent > missedPolls*interval {
		return protocol.PrinterStatus{}, "", printerdrivers.WithState(storeprint.PrinterOffline,
			fmt.Errorf("the printer has not polled for %s (it polls every %s)", silent.Round(time.Millisecond), interval.Round(time.Millisecond)))
	}
	return d.status, d.code, nil
}

// Printer is a Star printer that polls the gateway's CloudPRNT endpoint,
// printing through the confirmed-print pipeline (printerdrivers.Pipeline).
type Printer struct {
	*printerdrivers.Pipeline
}

func init() {
	printerdrivers.Register("cloudprnt", func(pc gateway.PrinterConfig, env *printerdrivers.Env) (gateway.Printer, error) {
		return New(pc, env.StoreID, ServerOf(env))
	})
}

// ServerOf returns the one CloudPRNT endpoint of the printers opened with
// env, made the first time it is asked for: the program serves it
// (/v1/cloudprnt) whether or not a CloudPRNT printer is configured, and
// with none it answers every poll as it answers wrong credentials.
func ServerOf(env *printerdrivers.Env) *Server {
	return env.Shared("cloudprnt", func() any {
		return NewServer(ServerOptions{Logger: env.Log(), Now: env.Now})
	}).(*Server)
}

// New returns a driver for the printer cfg describes (its Options: MAC,
// Password, Emulation) and adds it to s. storeID heads the
// tickets that do not name their store.
func New(cfg gateway.PrinterConfig, storeID string, s *Server) (*Printer, error) {
	cfg.Driver = "cloudprnt"
	cfg.Options = optionsOf(cfg)
	cfg.SetDefaults()
	opts := cfg.Options.(Options)
	mac, err := protocol.ParseMAC(opts.MAC)
	if err != nil {
		return nil, fmt.Errorf("mac: %w", err)
	}
	mt, err := mediaType(opts.Emulation)
	if err != nil {
		return nil, err
	}
	d := &device{s: s, mac: mac, password: opts.Password, mediaType: mt, changed: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.devices[mac] != nil {
		return nil, fmt.Errorf("mac: %s is another printer's", mac)
	}
	s.devices[mac] = d
	return &Printer{printerdrivers.New(&transport{cfg: cfg, d: d}, cfg, storeID)}, nil
}

// mediaType returns the media type of an emulation's tickets.
func mediaType(emulation string) (string, error) {
	switch emulation {
	case "starprnt", "":
		return protocol.MediaStarPRNT, nil
	case "escpos":
		return protocol.MediaRaw, nil
	}
	return "", fmt.Errorf("emulation: %q is not starprnt or escpos", emulation)
}

// transport hands tickets to the printer through its device.
type transport struct {
	cfg    gateway.PrinterConfig
	d      *device
	closed atomic.Bool
}

var _ gateway.ConfirmsReporter = (*transport)(nil)

// Confirms is cloudprnt: the printer's confirmation of the job (DELETE).
func (t *transport) Confirms() storeprint.Confirm { return storeprint.ConfirmCloudPRNT }

func (t *transport) Describe() string {
	return fmt.Sprintf("printer %s (CloudPRNT, MAC %s)", t.cfg.ID, t.d.mac)
}

func (t *transport) Encode(_ *gateway.PrintJob, tk storeprint.Ticket) ([]byte, error) {
	if t.d.mediaType == protocol.MediaRaw {
		return escpos.Encode(tk, t.cfg.Encoding, t.cfg.Width, nil)
	}
	return starprnt.Encode(tk, t.cfg.Encoding, t.cfg.Width, nil)
}

func (t *transport) Open(context.Context) (printerdrivers.Conn, error) {
	if t.closed.Load() {
		return nil, errors.New("printer closed")
	}
	return &conn{t: t}, nil
}

// Close withdraws any ticket in flight and makes further calls fail; the
// printer's polls are still answered, with nothing to print.
func (t *transport) Close() error {
	t.closed.Store(true)
	t.d.mu.Lock()
	if o := t.d.offer; o != nil {
		o.withdrawn = true
		o.finish(errors.New("printer closed"))
	}
	t.d.mu.Unlock()
	return nil
}

// conn is one call.
type conn struct {
	t *transport
	o *offer
}

// Status is the status of the printer's last poll, or offline when it
// has not polled for three poll intervals.
func (c *conn) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	if ctx.Err() != nil {
		return storeprint.PrinterStatus{}, context.Cause(ctx)
	}
	st, code, err := c.t.d.state()
	if err != nil {
		return storeprint.PrinterStatus{}, err
	}
	if st.State == storeprint.PrinterUnknown {
		return storeprint.PrinterStatus{}, fmt.Errorf("the printer reports status code %q", code)
	}
	return storeprint.PrinterStatus{State: st.State, PaperNearEnd: st.PaperNearEnd}, nil
}

// Send offers the ticket at the printer's next poll and returns once the
// printer has fetched it. Until it starts fetching, the ticket can be
// withdrawn: nothing left. A printer that reports it cannot print
// meanwhile, or stops polling, gets no ticket.
func (c *conn) Send(ctx context.Context, job *gateway.PrintJob, payload []byte, firstByte func()) (string, error) {
	d := c.t.d
	o := &offer{token: newToken(job.ProcessID), body: payload, firstByte: firstByte,
		written: make(chan error, 1), result: make(chan error, 1)}
	d.mu.Lock()
	if prev := d.offer; prev != nil {
		prev.withdrawn = true
	}
	d.offer = o
	d.mu.Unlock()
	c.o = o
	for {
		d.mu.Lock()
		changed, claimed := d.changed, o.claimed
		d.mu.Unlock()
		if claimed {
			select {
			case err := <-o.written:
				if err != nil {
					return "", fmt.Errorf("the printer's fetch of the ticket failed: %w", err)
				}
				return o.token, nil
			case <-ctx.Done():
				return "", fmt.Errorf("the printer's fetch of the ticket: %w", context.Cause(ctx))
			}
		}
		if st, code, err := d.state(); err != nil {
			if c.withdraw() {
				return "", err
			}
			continue
		} else if st.State == storeprint.PrinterPaperEnd || st.State == storeprint.PrinterCoverOpen || st.State == storeprint.PrinterOffline {
			if c.withdraw() {
				return "", printerdrivers.WithState(st.State, fmt.Errorf("the printer reports %q", code))
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if c.withdraw() {
				return "", fmt.Errorf("the printer did not fetch the ticket: %w", context.Cause(ctx))
			}
		case <-time.After(missedPolls * DefaultPollInterval):
			// Look at its polls again: it may have gone silent.
		}
	}
}

// withdraw takes back the ticket unless the printer began to fetch it,
// and reports whether it did.
func (c *conn) withdraw() bool {
	d := c.t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.o.claimed {
		return false
	}
	c.o.withdrawn = true
	return true
}

// Confirm waits for the printer's confirmation (DELETE) of the ticket.
func (c *conn) Confirm(ctx context.Context, _ *gateway.PrintJob, _ string) error {
	select {
	case err := <-c.o.result:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no confirmation of the fetched ticket: %w", context.Cause(ctx))
	}
}

// Close ends the attempt: the ticket is withdrawn, so that the printer
// does not fetch it again.
func (c *conn) Close() error {
	if c.o == nil {
		return nil
	}
	d := c.t.d
	d.mu.Lock()
	c.o.withdrawn = true
	if d.offer == c.o {
		d.offer = nil
	}
	d.mu.Unlock()
	return nil
}

// newToken returns a job token carrying the attempt's process id.
func newToken(processID string) string {
	return processID + "-" + storeprint.RandomHex(6)
}
