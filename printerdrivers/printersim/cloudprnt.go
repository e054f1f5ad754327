package printersim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/starprnt"
)

// CloudPRNTOptions configure the simulated printer as a CloudPRNT client.
type CloudPRNTOptions struct {
	URL      string // the server's CloudPRNT URL, e.g. http://gateway:8080/v1/cloudprnt
	MAC      string // its MAC address (printerMAC, ?mac=)
	User     string // HTTP Basic auth user, sent with Password
	Password string // HTTP Basic auth password; "" sends none
	// PollInterval is how often it polls; 0 is 5 s.
	PollInterval time.Duration
	// Emulation is its command set: "starprnt" (default) or "escpos". It
	// takes that media type and text/plain.
	Emulation string
	Client    *http.Client // nil: a client with a 15 s timeout
}

// DefaultPollInterval is a simulated CloudPRNT printer's poll interval
// unless CloudPRNTOptions.PollInterval says otherwise.
const DefaultPollInterval = 5 * time.Second

// CloudPRNT is the simulated printer polling a CloudPRNT server, per
// Star's CloudPRNT protocol guide:
//
//   - POST the URL every poll interval with its status as JSON
//     (printerMAC, statusCode, printingInProgress, jobToken);
//   - when the answer has jobReady and the printer is online, GET the URL
//     with ?mac=&type=&token= in the first offered media type it takes
//     (Star PRNT or raw ESC/POS, and text/plain), print it, and DELETE the
//     URL with ?mac=&code=200%20OK&token= once printed.
//
// Faults: offline, paper_end and cover_open are reported in every poll
// (400 Offline, 410 Out of paper, 420 Cover open) and no job is fetched
// meanwhile; a job fetched just before is held until they clear, as a
// printer holds what it received. slow prints after the slow delay; drop
// abandons the download halfway and prints nothing (no confirmation);
// lost_ack prints and never confirms; down stops polling, a printer
// switched off.
type CloudPRNT struct {
	p      *Printer
	opts   CloudPRNTOptions
	client *http.Client
	media  []string // the media types it takes, preferred first

	pollNow chan chan error // a poll asked for out of turn, and where to say it is done

	mu       sync.Mutex
	printing string // the token of the job being printed, or ""
}

// NewCloudPRNT returns the printer p as a CloudPRNT client of opts.URL;
// Run polls.
func (p *Printer) NewCloudPRNT(opts CloudPRNTOptions) (*CloudPRNT, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("printersim: CloudPRNT URL %q is not an http(s) URL", opts.URL)
	}
	mac, err := protocol.ParseMAC(opts.MAC)
	if err != nil {
		return nil, fmt.Errorf("printersim: CloudPRNT MAC: %w", err)
	}
	opts.MAC = mac
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	c := &CloudPRNT{p: p, opts: opts, client: opts.Client, pollNow: make(chan chan error)}
	switch opts.Emulation {
	case "", "starprnt":
		c.media = []string{protocol.MediaStarPRNT, protocol.MediaText}
	case "escpos":
		c.media = []string{protocol.MediaRaw, protocol.MediaText}
	default:
		return nil, fmt.Errorf("printersim: CloudPRNT emulation %q is not starprnt or escpos", opts.Emulation)
	}
	if c.client == nil {
		c.client = &http.Client{Timeout: 15 * time.Second}
	}
	return c, nil
}

// Printer returns the simulated printer.
func (c *CloudPRNT) Printer() *Printer { return c.p }

// Run polls until ctx ends or the printer is closed, and returns nil then.
func (c *CloudPRNT) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.p.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var done chan error
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case done = <-c.pollNow:
		}
		var err error
		if c.p.Fault() != FaultDown {
			err = c.poll(ctx)
			if err != nil && ctx.Err() == nil {
				c.p.log.Info("CloudPRNT poll failed", "err", err)
			}
		}
		if done != nil {
			done <- err
		}
		timer.Reset(c.opts.PollInterval)
	}
}

// SetFault changes the fault and, unless the printer is now down, polls at
// once and returns when the server has the new status: a test that
// changes the fault knows the server has seen it.
func (c *CloudPRNT) SetFault(f Fault) {
	c.p.SetFault(f)
	if f == FaultDown {
		return
	}
	done := make(chan error, 1)
	select {
	case c.pollNow <- done:
		<-done
	case <-c.p.closed:
	case <-time.After(10 * time.Second):
		c.p.log.Info("CloudPRNT: no poll loop to report the new fault")
	}
}

// Printed returns the tickets printed so far.
func (c *CloudPRNT) Printed() []Ticket { return c.p.Printed() }

// WaitPrinted waits until n tickets are printed.
func (c *CloudPRNT) WaitPrinted(ctx context.Context, n int) ([]Ticket, error) {
	return c.p.WaitPrinted(ctx, n)
}

// statusCode is what the printer reports in f.
func statusCode(f Fault) string {
	switch f {
	case FaultOffline:
		return "400 Offline"
	case FaultPaperEnd:
		return "410 Out of paper"
	case FaultCoverOpen:
		return "420 Cover open"
	}
	return "200 OK"
}

// poll reports the status and fetches a job offered to it.
func (c *CloudPRNT) poll(ctx context.Context) error {
	f := c.p.Fault()
	c.mu.Lock()
	printing := c.printing
	c.mu.Unlock()
	body, err := json.Marshal(protocol.Poll{PrinterMAC: c.opts.MAC, StatusCode: statusCode(f),
		JobToken: printing, PrintingInProgress: printing != ""})
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, http.MethodPost, c.opts.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, protocol.MaxPoll))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the poll's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("poll: HTTP %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var reply protocol.PollReply
	if err := json.Unmarshal(data, &reply); err != nil {
		return fmt.Errorf("poll: answer %q: %w", data, err)
	}
	if !reply.JobReady || printing != "" || f.holds() {
		return nil // offline: no GET is issued
	}
	mt := ""
	for _, m := range c.media {
		if slices.Contains(reply.MediaTypes, m) {
			mt = m
			break
		}
	}
	if mt == "" {
		return c.confirm(ctx, reply.JobToken, "510 Incompatible media type")
	}
	return c.fetch(ctx, reply.JobToken, mt)
}

// fetch downloads a job and prints it.
func (c *CloudPRNT) fetch(ctx context.Context, token, mt string) error {
	q := url.Values{"mac": {c.opts.MAC}, "type": {mt}}
	if token != "" {
		q.Set("token", token)
	}
	resp, err := c.do(ctx, http.MethodGet, c.with(q), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch: HTTP %s", resp.Status)
	}
	if c.p.Fault() == FaultDrop {
		// Half the job, then the connection goes.
		_, _ = io.CopyN(io.Discard, resp.Body, max(resp.ContentLength/2, 1))
		c.p.log.Info("drop: the download broke off; nothing prints")
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	tickets, err := c.decode(mt, data)
	if err != nil {
		return c.confirm(ctx, token, "511 Media decoding error")
	}
	lost := c.p.Fault() == FaultLostAck
	c.mu.Lock()
	c.printing = token
	c.mu.Unlock()
	var last chan struct{}
	for _, lines := range tickets {
		last = make(chan struct{})
		c.p.enqueue(job{kind: jobTicket, lines: lines, done: last})
	}
	go func() {
		defer func() {
			c.mu.Lock()
			c.printing = ""
			c.mu.Unlock()
		}()
		if last != nil {
			select {
			case <-last:
			case <-c.p.closed:
				return
			}
		}
		if lost {
			c.p.log.Info("lost_ack: printed, never confirmed", "token", token)
			return
		}
		if err := c.confirm(ctx, token, "200 OK"); err != nil {
			c.p.log.Info("CloudPRNT confirmation not delivered", "err", err)
		}
	}()
	return nil
}

// decode reads a job's cut tickets.
func (c *CloudPRNT) decode(mt string, data []byte) ([][]string, error) {
	var tickets [][]string
	var lines []string
	switch mt {
	case protocol.MediaText:
		// Plain text, cut at its end.
		text := strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		return [][]string{strings.Split(text, "\n")}, nil
	case protocol.MediaStarPRNT:
		d, err := starprnt.NewDecoder(c.p.opts.Encoding)
		if err != nil {
			return nil, err
		}
		for _, ev := range d.Decode(data) {
			switch ev.Kind {
			case starprnt.EventLine:
				lines = append(lines, ev.Text)
			case starprnt.EventCut:
				tickets, lines = append(tickets, lines), nil
			}
		}
	case protocol.MediaRaw:
		d, err := escpos.NewDecoder(c.p.opts.Encoding)
		if err != nil {
			return nil, err
		}
		for _, ev := range d.Decode(data) {
			switch ev.Kind {
			case escpos.EventLine:
				lines = append(lines, ev.Text)
			case escpos.EventCut:
				tickets, lines = append(tickets, lines), nil
			}
		}
	default:
		return nil, errors.New("unknown media type")
	}
	if len(tickets) == 0 {
		return nil, errors.New("no cut ticket in the job")
	}
	return tickets, nil
}

// confirm sends the job confirmation with code.
func (c *CloudPRNT) confirm(ctx context.Context, token, code string) error {
	q := url.Values{"mac": {c.opts.MAC}, "code": {code}}
	if token != "" {
		q.Set("token", token)
	}
	resp, err := c.do(ctx, http.MethodDelete, c.with(q), nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("confirm: HTTP %s", resp.Status)
	}
	return nil
}

func (c *CloudPRNT) with(q url.Values) string {
	sep := "?"
	if strings.Contains(c.opts.URL, "?") {
		sep = "&"
	}
	return c.opts.URL + sep + q.Encode()
}

func (c *CloudPRNT) do(ctx context.Context, method, u string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.opts.Password != "" {
		req.SetBasicAuth(c.opts.User, c.opts.Password)
	}
	return c.client.Do(req)
}
