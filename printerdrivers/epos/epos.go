package epos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

var (
	_ gateway.Printer = (*Printer)(nil)
	_ gateway.Settler = (*Printer)(nil)
)

// Printer is an Epson printer reached through its ePOS-Print service
// (cfg.Address its base URL, its Options.DevID its device id), printing through
// the confirmed-print pipeline (printerdrivers.Pipeline). With Options.JobLog
// it settles uncertain attempts from the printer's print job log.
type Printer struct {
	*printerdrivers.Pipeline
	t *transport
}

// Job log polling: while the printer says a job is still printing or
// spooling it is asked again after jobPoll; a job it does not know is
// asked for once more after notFoundRecheck, as a request that was still
// on its way when the first answer was given would otherwise be missed.
const (
	jobPoll         = 100 * time.Millisecond
	notFoundRecheck = 500 * time.Millisecond
)

func init() {
	printerdrivers.Register("epos", func(pc gateway.PrinterConfig, env *printerdrivers.Env) (gateway.Printer, error) {
		return New(pc, env.StoreID), nil
	})
}

// New returns a driver for the printer cfg describes. storeID heads the
// tickets that do not name their store. Zero timeouts, encoding, width and
// devid take the gateway's defaults.
func New(cfg gateway.PrinterConfig, storeID string) *Printer {
	cfg.Driver = "epos"
	cfg.Options = optionsOf(cfg)
	cfg.SetDefaults()
	t := newTransport(cfg)
	return &Printer{Pipeline: printerdrivers.New(t, cfg, storeID), t: t}
}

// Settle asks the printer's job log what became of the attempt r records,
// for the gateway to settle an uncertain outcome without a person. A job
// the log reports printed is printed; one it does not know (asked twice)
// was not printed; while it is printing or spooling it is asked again
// until ctx ends. Without Options.JobLog, or when the printer does not answer
// or reports the job failed part-way, the outcome stays open.
func (p *Printer) Settle(ctx context.Context, r *gateway.Receipt) (gateway.Settlement, error) {
	if !p.t.logOn() {
		// No log to ask (not configured, or the printer keeps none): a
		// success it would answer means nothing.
		return gateway.Settlement{}, nil
	}
	id := r.JobID
	if id == "" {
		id = JobID(r.TaskNo, r.Attempt, r.ProcessID)
	}
	v, err := p.t.awaitJob(ctx, id, true)
	if err != nil {
		return gateway.Settlement{}, fmt.Errorf("%s: %w", p.t.Describe(), err)
	}
	return v, nil
}

// transport is the ePOS-Print service: an empty document for the status,
// one request per ticket whose response, sent after printing, is the
// confirmation.
type transport struct {
	cfg      gateway.PrinterConfig
	opts     Options
	endpoint string                // the service URL without the query
	print    *http.Client          // the print request: never retried
	query    *retryablehttp.Client // status and job status: safe to retry
	closed   atomic.Bool
	log      *slog.Logger

	// noLog: job_log = true, and the printer answered the check for a job
	// id never used with something else than JobNotFound: it keeps no job
	// log (its spooler function is off or absent) and runs as job_log =
	// false until a check finds the log. See checkJobLog.
	noLog atomic.Bool
}

var _ gateway.ConfirmsReporter = (*transport)(nil)

// Confirms is job_log while the printer's job log confirms its tickets,
// else epos (the answer to the print request).
func (t *transport) Confirms() storeprint.Confirm {
	if t.logOn() {
		return storeprint.ConfirmJobLog
	}
	return storeprint.ConfirmEPOS
}

// logOn reports whether tickets go with a print job id and are confirmed
// and settled by the printer's job log.
func (t *transport) logOn() bool { return t.opts.JobLog && !t.noLog.Load() }

// checkJobLog asks the job log of a printer configured with job_log = true
// for a job id never used. A printer that keeps a log answers JobNotFound;
// one that keeps none runs the empty request and answers success, which
// must then never be read as "printed". The answer decides how the
// printer runs from now on; a change is logged.
func (t *transport) checkJobLog(ctx context.Context) error {
	if !t.opts.JobLog {
		return nil
	}
	r, err := t.ask(ctx, neverUsedJobID(), t.cfg.ConnectTimeout.Duration)
	if err != nil {
		return fmt.Errorf("check the job log: %w", err)
	}
	none := r.Code != CodeJobNotFound
	if t.noLog.Swap(none) == none {
		return nil
	}
	if none {
		t.log.Warn("the printer keeps no job log: running it as job_log = false; a ticket whose answer is lost needs a person",
			"printer_id", t.cfg.ID, "answer", fmt.Sprintf("success=%v code=%q (not %s) to a job id never used", r.Success, r.Code, CodeJobNotFound))
	} else {
		t.log.Info("the printer keeps a job log again: job_log = true applies", "printer_id", t.cfg.ID)
	}
	return nil
}

// neverUsedJobID returns a print job id no attempt gets: JobID's are "sp"
// and hex digits.
func neverUsedJobID() string {
	return "chk" + storeprint.RandomHex(14)[:27]
}

func newTransport(cfg gateway.PrinterConfig) *transport {
	// A print request always gets a connection of its own: "no byte
	// before the first" is then "no byte before the connection is made".
	printTr := http.DefaultTransport.(*http.Transport).Clone()
	printTr.DisableKeepAlives = true
	printTr.DialContext = dialSent((&net.Dialer{Timeout: cfg.ConnectTimeout.Duration}).DialContext)
	queryTr := http.DefaultTransport.(*http.Transport).Clone()
	queryTr.DialContext = (&net.Dialer{Timeout: cfg.ConnectTimeout.Duration}).DialContext
	q := retryablehttp.NewClient()
	q.HTTPClient = &http.Client{Transport: queryTr}
	q.Logger = nil
	q.RetryMax = 2
	q.RetryWaitMin = 50 * time.Millisecond
	q.RetryWaitMax = 500 * time.Millisecond
	q.ErrorHandler = retryablehttp.PassthroughErrorHandler
	return &transport{
		log:      slog.Default(),
		cfg:      cfg,
		opts:     optionsOf(cfg).WithDefaults().(Options),
		endpoint: strings.TrimRight(cfg.Address, "/") + ServicePath,
		print:    &http.Client{Transport: printTr},
		query:    q,
	}
}

func (t *transport) Describe() string {
	return fmt.Sprintf("printer %s at %s (devid %s)", t.cfg.ID, t.cfg.Address, t.opts.DevID)
}

// Encode renders the request: the SOAP envelope, with the attempt's print
// job id in its header when the printer keeps a job log.
func (t *transport) Encode(job *gateway.PrintJob, tk storeprint.Ticket) ([]byte, error) {
	doc, err := Document(tk, Lang(t.cfg.Encoding), t.cfg.Width, nil)
	if err != nil {
		return nil, err
	}
	return Envelope(doc, t.jobID(job)), nil
}

func (t *transport) jobID(job *gateway.PrintJob) string {
	if !t.logOn() {
		return ""
	}
	return JobID(job.Ticket.TaskNo, job.Attempt, job.ProcessID)
}

// url returns the service URL with the printer's device id and the
// request's timeout, which the printer waits at most for the device.
func (t *transport) url(timeout time.Duration) string {
	return t.endpoint + "?devid=" + url.QueryEscape(t.opts.DevID) + "&timeout=" + strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)
}

func (t *transport) Open(ctx context.Context) (printerdrivers.Conn, error) {
	if t.closed.Load() {
		return nil, errors.New("printer closed")
	}
	// The print request outlives the Send step: it lives as long as the
	// call.
	rctx, cancel := context.WithCancelCause(ctx)
	return &conn{t: t, ctx: rctx, cancel: cancel}, nil
}

func (t *transport) Close() error {
	t.closed.Store(true)
	t.print.CloseIdleConnections()
	t.query.HTTPClient.CloseIdleConnections()
	return nil
}

// ask sends a request whose answer is only read (a status query, a job
// status query), retried on a lost connection or a 5xx, and reads the
// response within ctx.
func (t *transport) ask(ctx context.Context, printJobID string, timeout time.Duration) (Response, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, t.url(timeout), Envelope(EmptyDocument(), printJobID))
	if err != nil {
		return Response{}, err
	}
	setHeaders(req.Header)
	resp, err := t.query.Do(req)
	if err != nil {
		return Response{}, netError(ctx, err)
	}
	return readResponse(resp)
}

// awaitJob asks the job log for a job until it says printed, not found
// (twice when recheck), or failed, or ctx ends.
func (t *transport) awaitJob(ctx context.Context, id string, recheck bool) (gateway.Settlement, error) {
	notFound := 0
	for {
		r, err := t.ask(ctx, id, t.cfg.ConnectTimeout.Duration)
		if err != nil {
			return gateway.Settlement{}, fmt.Errorf("ask the job log for job %s: %w", id, err)
		}
		wait := jobPoll
		switch {
		case r.Success && r.Code == "":
			return gateway.Settlement{Outcome: gateway.SettledPrinted, By: storeprint.ConfirmJobLog,
				How: fmt.Sprintf("the printer's job log reports job %s printed", id)}, nil
		case r.Code == CodeJobNotFound:
			notFound++
			if !recheck || notFound == 2 {
				return gateway.Settlement{Outcome: gateway.SettledNotPrinted,
					How: fmt.Sprintf("the printer's job log does not know job %s: it never reached the printer", id)}, nil
			}
			wait = notFoundRecheck
		case r.Code == CodePrinting || r.Code == CodeJobSpooling:
			notFound = 0
		default:
			return gateway.Settlement{}, fmt.Errorf("the job log reports job %s failed (%s, status %#x): part of it may be on paper", id, r.Code, r.Status)
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return gateway.Settlement{}, fmt.Errorf("job %s still printing: %w", id, context.Cause(ctx))
		}
	}
}

// conn is one call. Status is an empty document; Send starts the print
// request and returns once it has left the process; Confirm reads its
// response.
type conn struct {
	t      *transport
	ctx    context.Context // the call's, for the print request
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the print request returned
	resp   *http.Response
	err    error
	jobID  string
}

func (c *conn) Close() error {
	c.cancel(errors.New("call over"))
	if c.done != nil {
		<-c.done
		if c.resp != nil {
			c.resp.Body.Close()
		}
	}
	return nil
}

// Status asks for the printer's status with an empty document. A
// printer nothing answers for, or whose device its service cannot reach
// (no response bit, DeviceNotFound), is offline.
func (c *conn) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	r, err := c.t.ask(ctx, "", c.t.cfg.ConnectTimeout.Duration)
	if err != nil {
		return storeprint.PrinterStatus{}, err
	}
	if r.Code == CodeDeviceNotFound {
		return storeprint.PrinterStatus{}, printerdrivers.WithState(storeprint.PrinterOffline,
			fmt.Errorf("the printer's ePOS-Print service has no device %q (DeviceNotFound)", c.t.opts.DevID))
	}
	if err := c.t.checkJobLog(ctx); err != nil {
		return storeprint.PrinterStatus{}, err
	}
	return PrinterState(r.Status), nil
}

// Send starts the print request. Its first byte goes once the connection
// is made (a fresh one); it returns once the request has left the process
// (see sent).
func (c *conn) Send(ctx context.Context, job *gateway.PrintJob, payload []byte, firstByte func()) (string, error) {
	wrote := make(chan error, 1)
	out := newSent()
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) {
			connected.Store(true)
			firstByte()
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				out.arm()
			}
			wrote <- i.Err
		},
	}
	// Before the connection is made, a failure means nothing answers
	// there; after it, only that the request may not have arrived whole.
	fail := func(err error) error {
		if connected.Load() {
			return withCause(ctx, err)
		}
		return netError(ctx, err)
	}
	// The printer's own timeout ends a little before the confirm
	// timeout, so that its EX_TIMEOUT answer arrives while it is awaited.
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.WithValue(c.ctx, sentKey{}, out), trace), http.MethodPost,
		c.t.url(c.t.cfg.ConfirmTimeout.Duration*4/5), bytes.NewReader(payload))
	if err != nil {
		return "", err
	}
	setHeaders(req.Header)
	c.done = make(chan struct{})
	go func() {
		defer close(c.done)
		c.resp, c.err = c.t.print.Do(req)
	}()
	// The request carries the job id only if the job log was on when it
	// was encoded; it is asked for only if the log is on still.
	if id := c.t.jobID(job); id != "" && bytes.Contains(payload, []byte(id)) {
		c.jobID = id
	}
	select {
	case err := <-wrote:
		if err != nil {
			return "", fail(err)
		}
		select {
		case <-out.out:
		case <-c.done: // answered, or failed after the request was written: Confirm tells
		case <-ctx.Done():
			c.cancel(context.Cause(ctx))
			return "", context.Cause(ctx)
		}
		return c.jobID, nil
	case <-c.done:
		if c.err != nil {
			return "", fail(c.err)
		}
		return c.jobID, nil // answered before the request was seen written
	case <-ctx.Done():
		c.cancel(context.Cause(ctx))
		return "", context.Cause(ctx)
	}
}

// Confirm reads the print request's response: the printer answers after
// printing. Success is the confirmation; with a job log, the log must
// say the job printed too (a printer whose spooler queues jobs answers
// success once the job is queued). A failure code that means the printer
// did not print the ticket is its answer that it did not; any other
// failure, and a connection lost before the answer, leaves it open.
func (c *conn) Confirm(ctx context.Context, _ *gateway.PrintJob, jobID string) error {
	select {
	case <-c.done:
	case <-ctx.Done():
		c.cancel(context.Cause(ctx))
		return context.Cause(ctx)
	}
	if c.err != nil {
		return fmt.Errorf("the connection ended before the printer answered: %w", withCause(ctx, c.err))
	}
	r, err := readResponse(c.resp)
	if err != nil {
		if errors.Is(err, errRefused) {
			return printerdrivers.NotPrinted("", err)
		}
		return err
	}
	if !r.Success {
		failure, st := Classify(r.Code, r.Status)
		if bits := PrinterState(r.Status); bits.State != storeprint.PrinterReady {
			st = bits.State
		}
		err := fmt.Errorf("the printer answered %s (status %#x)", r.Code, r.Status)
		if failure == FailureNotPrinted {
			return printerdrivers.NotPrinted(st, err)
		}
		return printerdrivers.WithState(st, err)
	}
	if jobID == "" {
		return nil
	}
	v, err := c.t.awaitJob(ctx, jobID, false)
	switch {
	case err != nil:
		return fmt.Errorf("the printer took job %s: %w", jobID, err)
	case v.Outcome == gateway.SettledPrinted:
		return nil
	}
	return fmt.Errorf("the printer took job %s, then its job log did not know it", jobID)
}

func setHeaders(h http.Header) {
	h.Set("Content-Type", "text/xml; charset=utf-8")
	h.Set("SOAPAction", `""`)
	h.Set("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")
}

// errRefused marks an HTTP answer that refuses the request as such (no
// such service, not allowed, too large): nothing was printed.
var errRefused = errors.New("the printer's web server refused the request")

// readResponse reads and parses a response; an HTTP error status is an
// error (wrapping errRefused when it refuses the request as such).
func readResponse(resp *http.Response) (Response, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if err != nil {
		return Response{}, fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("HTTP %s", resp.Status)
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			return Response{}, fmt.Errorf("%w: %w", errRefused, err)
		}
		return Response{}, err
	}
	return ParseResponse(bytes.NewReader(body))
}

// withCause puts the reason ctx ended in place of the error it caused.
func withCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	return err
}

// netError marks a transport error that means nothing answers at the
// printer's address (refused, reset, closed) as offline, and puts the
// reason ctx ended in place of the error it caused.
func netError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	if closedIdle(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrDeadlineExceeded) {
		return printerdrivers.WithState(storeprint.PrinterOffline, err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return printerdrivers.WithState(storeprint.PrinterOffline, err)
	}
	return err
}

// closedIdle reports net/http's "server closed idle connection": a
// kept-alive connection the printer closed before the request went out.
// net/http keeps no exported value for it, so its text is matched.
func closedIdle(err error) bool {
	return strings.Contains(err.Error(), "server closed idle connection")
}
