package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

func printerSimUsage() string {
	var b strings.Builder
	b.WriteString(printerSimUsageText)
	for _, f := range printersim.Faults {
		fmt.Fprintf(&b, "  %-11s %s\n", f, f.Description())
	}
	b.WriteString(printerSimExamples)
	return b.String()
}

// printerSimUsageText is printersim's help up to its list of faults.
const printerSimUsageText = `Usage:
  storeprint printersim --listen ADDR --out FILE.jsonl [flags]
  storeprint printersim --serial PATH --out FILE.jsonl [flags]
  storeprint printersim --protocol epos --listen ADDR --out FILE.jsonl [flags]
  storeprint printersim --protocol cloudprnt --url URL --mac MAC --out FILE.jsonl [flags]

Runs a simulated ESC/POS receipt printer that answers like an Epson TM-T88V
(or, with --model, like a printer that answers less), and appends one JSON
line {"task_no","text","at"} per cut ticket to --out
(and, with --paper, the ticket's text as it reads on paper). It prints the
address it listens on to stderr at start, so --listen 127.0.0.1:0 works.

What it answers, per Epson's ESC/POS reference:
  DLE EOT n   real-time status (n = 1 printer, 2 offline cause, 3 error,
              4 paper sensor): one byte, at once, whatever waits to print
  DLE ENQ n   real-time request: no simulated fault is a recoverable error,
              so, like a TM printer without one, it does nothing
  GS ( H      process ID (fn 48): 37 22 d1..d4 00 once everything received
              before it has printed; the confirmation the gateway waits for
  GS r n      status (n = 1 paper sensor, 2 drawer): one byte, once
              everything received before it has printed
  GS I n      printer ID, in turn with what it prints: n = 1 model ID 20h
              (TM-T88), 2 type ID (autocutter; multi-byte with gb18030),
              3 version ID, as one byte; n = 65 firmware "30.01 ESC/POS",
              66 maker "EPSON", 67 model "TM-T88V", 68 serial "SIM0000001",
              69 font ("CHINA GB18030" with gb18030), as 5F <text> 00
  GS a n      automatic status back: when n enables an item, the 4-byte status
              at once, after every change of an enabled item (1st byte
              offline 08h, cover open 20h; 3rd byte paper near end 03h,
              paper end 0Ch) and after every ticket it prints
  ESC @       initialize: power-on modes; automatic status back off
GS a and ESC @ take effect as they arrive; the status bytes of DLE EOT, GS r
and GS a always agree.

--model says which confirmation requests it answers (the gateway's confirm
= "auto" finds the strongest one):
  tm          GS ( H and GS r (and DLE EOT): the gateway confirms by process_id
  basic       GS r, GS I (maker "GENERIC", model "POS-80") and DLE EOT,
              ignores GS ( H, as most low-cost ESC/POS printers: the
              gateway confirms by transmit_status
  dumb        only DLE EOT, ignores GS ( H, GS r and GS I: the gateway
              confirms by status (weaker); under lost_ack it does not
              answer the status request that follows a ticket Under offline, paper_end and cover_open only DLE EOT
and GS a answer; the rest waits, as on a printer, until the fault clears.

With --protocol epos it is an Epson printer's ePOS-Print service instead
(Epson's ePOS-Print XML manual): POST /cgi-bin/epos/service.cgi?devid=ID&
timeout=MS on --listen with a SOAP envelope holding an <epos-print>
document; the text of <text>, <feed> and <cut> go on paper, one ticket per
cut, and the answer <response success code status/> comes after printing
(status: the ASB_* bits). An empty document reads the status; with
--job-log it keeps a print job log and an empty document with a printjobid
in the SOAP header asks for that job (printed, Printing, JobNotFound).
Faults: offline waits the request's timeout, then EX_TIMEOUT; paper_end
and cover_open answer EPTR_REC_EMPTY and EPTR_COVER_OPEN without printing;
drop closes the connection as the ticket arrives; lost_ack prints and
closes it without an answer; down refuses connections.

With --protocol cloudprnt it is a Star printer polling a CloudPRNT server
(Star's CloudPRNT protocol guide): a POST of its status as JSON to --url
every --poll (printerMAC --mac, statusCode 200 OK, 400 Offline, 410 Out of
paper, 420 Cover open), a GET (?mac=&type=&token=) of a job offered while
it is online, in Star PRNT mode or raw ESC/POS (--emulation) or text/plain,
and a DELETE (?mac=&code=200%20OK&token=) once it printed. Faults:
offline, paper_end and cover_open are reported and hold the printer; drop
abandons the download halfway; lost_ack prints and never confirms; down
stops polling.

With --serial it is a printer at the end of a serial line instead (or as
well, with --listen too): it opens the tty PATH, and opens it again whenever
it comes back after going away (an unplugged adapter, a restarted socat).
To test a serial printer without one, join two ptys with socat and give the
simulator one end and the gateway the other:
  socat -d -d pty,raw,echo=0,link=/tmp/ttySIM pty,raw,echo=0,link=/tmp/ttyPOS

Flags:
  --protocol P      escpos (default: raw ESC/POS on --listen or --serial),
                    epos (ePOS-Print over HTTP on --listen) or cloudprnt
                    (polls --url)
  --listen ADDR     accept printer connections on ADDR (default 127.0.0.1:9100,
                    or none when --serial is given; port 0 picks a free port)
  --serial PATH     serve the serial device (tty) PATH
  --baud N          line speed of --serial, 8N1 (default 19200; a pty ignores it)
  --out FILE        append printed tickets to FILE, one JSON line each;
                    - is stdout (default -)
  --paper FILE      also append each printed ticket to FILE as text, as it
                    reads on paper, between rules naming the printer and the
                    time; - is stdout (default none)
  --name NAME       the printer's name on --paper (default the --listen
                    address or the --serial path)
  --encoding NAME   the printer's text encoding: gb18030 (default), cp437, utf-8
  --model M         tm (default), basic or dumb: what it answers (see above)
  --fault NAME      the fault at start (default none; see below)
  --slow DURATION   how long each ticket takes under the slow fault (default 2s)
  --devid ID        epos: the device id it answers for (default local_printer)
  --job-log         epos: keep a print job log (the ePOS-Print spooler function)
  --url URL         cloudprnt: the server's CloudPRNT URL, e.g.
                    http://127.0.0.1:8080/v1/cloudprnt
  --mac MAC         cloudprnt: its MAC address, e.g. 00:11:62:1d:9a:b7
  --user NAME       cloudprnt: HTTP Basic auth user, sent with --password
  --password PASS   cloudprnt: HTTP Basic auth password (default none)
  --poll DURATION   cloudprnt: the poll interval (default 5s)
  --emulation E     cloudprnt: starprnt (default) or escpos
  --control ADDR    serve the control API on ADDR:
                      GET  /fault                      the current fault
                      PUT  /fault {"fault":"NAME"}     change it (POST too)
                      GET  /printed                    the tickets printed so far

Faults (on a serial line, down keeps the device closed and drop closes it
mid-ticket; the simulator then opens it again and discards what waits in it):
`

// printerSimExamples ends printersim's help.
const printerSimExamples = `
Example:
  storeprint printersim --listen 127.0.0.1:9100 --out paper.jsonl --control 127.0.0.1:9200
  curl -X PUT -d '{"fault":"paper_end"}' http://127.0.0.1:9200/fault
  storeprint printersim --listen 127.0.0.1:9100 --out paper.jsonl --paper - --name pass-1
  storeprint printersim --serial /tmp/ttySIM --out paper.jsonl
  storeprint printersim --protocol epos --listen 127.0.0.1:8081 --job-log --out paper.jsonl
  storeprint printersim --protocol cloudprnt --url http://127.0.0.1:8080/v1/cloudprnt --mac 00:11:62:1d:9a:b7 --out paper.jsonl
`

// printerSim is the printersim subcommand.
type printerSim struct {
	m *Main

	Listen   string
	Serial   string
	Baud     int
	Out      string
	Paper    string
	Name     string
	Encoding string
	Fault    printersim.Fault
	Model    printersim.Model
	Slow     time.Duration
	Control  string

	Protocol  string // escpos, epos or cloudprnt
	DevID     string
	JobLog    bool
	URL       string
	MAC       string
	User      string
	Password  string
	Poll      time.Duration
	Emulation string

	sim     *printersim.Printer
	out     *os.File // nil when writing to stdout
	paper   *os.File // nil when writing to stdout or not at all
	ln      net.Listener
	control *http.Server

	closeOnce sync.Once
	closeErr  error
}

func newPrinterSim(m *Main) command { return &printerSim{m: m} }

func (c *printerSim) parseFlags(args []string) error {
	fs := flag.NewFlagSet("storeprint printersim", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; --help prints printerSimUsage
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:9100", "")
	fs.StringVar(&c.Serial, "serial", "", "")
	fs.IntVar(&c.Baud, "baud", printersim.DefaultBaud, "")
	fs.StringVar(&c.Out, "out", "-", "")
	fs.StringVar(&c.Paper, "paper", "", "")
	fs.StringVar(&c.Name, "name", "", "")
	fs.StringVar(&c.Encoding, "encoding", escpos.GB18030, "")
	fault := fs.String("fault", string(printersim.FaultNone), "")
	model := fs.String("model", string(printersim.ModelTM), "")
	fs.DurationVar(&c.Slow, "slow", printersim.DefaultSlowDelay, "")
	fs.StringVar(&c.Control, "control", "", "")
	fs.StringVar(&c.Protocol, "protocol", "escpos", "")
	fs.StringVar(&c.DevID, "devid", "local_printer", "")
	fs.BoolVar(&c.JobLog, "job-log", false, "")
	fs.StringVar(&c.URL, "url", "", "")
	fs.StringVar(&c.MAC, "mac", "", "")
	fs.StringVar(&c.User, "user", "", "")
	fs.StringVar(&c.Password, "password", "", "")
	fs.DurationVar(&c.Poll, "poll", printersim.DefaultPollInterval, "")
	fs.StringVar(&c.Emulation, "emulation", "starprnt", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.m.Stdout, printerSimUsage())
			return errHelp
		}
		return fmt.Errorf("printersim: %w (see storeprint printersim --help)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("printersim: unexpected argument %q (see storeprint printersim --help)", fs.Arg(0))
	}
	listen := false
	fs.Visit(func(f *flag.Flag) { listen = listen || f.Name == "listen" })
	if c.Serial != "" && !listen {
		c.Listen = "" // serial only
	}
	if err := c.checkProtocol(listen); err != nil {
		return err
	}
	if c.Listen != "" || listen {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			return fmt.Errorf("printersim: --listen: %q is not a host:port address", c.Listen)
		}
	}
	if c.Baud <= 0 {
		return fmt.Errorf("printersim: --baud: %d is not a baud rate", c.Baud)
	}
	if c.Out == "" {
		return errors.New("printersim: --out: a file name (or - for stdout) is required")
	}
	if c.Paper != "" && c.Paper == c.Out {
		if c.Paper == "-" {
			return errors.New("printersim: --paper: - is stdout, where --out writes too (give --out a file)")
		}
		return fmt.Errorf("printersim: --paper: %q is the --out file too; give each its own", c.Paper)
	}
	if c.Name == "" {
		c.Name = c.Listen
		if c.Name == "" {
			c.Name = c.Serial
		}
		if c.Protocol == "cloudprnt" {
			c.Name = c.MAC
		}
	}
	if _, err := escpos.NewDecoder(c.Encoding); err != nil {
		return fmt.Errorf("printersim: --encoding: %w", err)
	}
	f, err := printersim.ParseFault(*fault)
	if err != nil {
		return fmt.Errorf("printersim: --fault: %w", err)
	}
	c.Fault = f
	m, err := printersim.ParseModel(*model)
	if err != nil {
		return fmt.Errorf("printersim: --model: %w", err)
	}
	c.Model = m
	if c.Slow <= 0 {
		return fmt.Errorf("printersim: --slow: %s is not a positive duration", c.Slow)
	}
	if c.Control != "" {
		if _, _, err := net.SplitHostPort(c.Control); err != nil {
			return fmt.Errorf("printersim: --control: %q is not a host:port address", c.Control)
		}
	}
	return nil
}

// run serves the simulated printer until ctx is done.
func (c *printerSim) run(ctx context.Context) error {
	out, paper, err := c.openOutputs()
	if err != nil {
		return err
	}
	sim, err := printersim.New(printersim.Options{
		Name:      c.Name,
		Encoding:  c.Encoding,
		Out:       out,
		Paper:     paper,
		Fault:     c.Fault,
		Model:     c.Model,
		SlowDelay: c.Slow,
		Logger:    slog.New(slog.NewTextHandler(c.m.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	c.sim = sim
	if c.Listen != "" {
		if c.ln, err = net.Listen("tcp", c.Listen); err != nil {
			return fmt.Errorf("printersim: --listen: %w", err)
		}
	}
	var cp *printersim.CloudPRNT
	if c.Protocol == "cloudprnt" {
		cp, err = sim.NewCloudPRNT(printersim.CloudPRNTOptions{URL: c.URL, MAC: c.MAC, User: c.User,
			Password: c.Password, PollInterval: c.Poll, Emulation: c.Emulation})
		if err != nil {
			return err
		}
	}
	if c.Serial != "" {
		// Open it once here, so that a wrong path is an error at start.
		port, err := printersim.OpenSerial(c.Serial, c.Baud)
		if err != nil {
			return fmt.Errorf("printersim: --serial: %w", err)
		}
		if err := port.Close(); err != nil {
			return fmt.Errorf("printersim: --serial: close %s: %w", c.Serial, err)
		}
	}
	errc := make(chan error, 3)
	if err := c.serveControl(sim, errc); err != nil {
		return err
	}
	c.serve(ctx, sim, cp, errc)
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

// openOutputs opens --out (the JSON lines) and --paper (the tickets as
// they read on paper; nil without it); "-" is standard output.
func (c *printerSim) openOutputs() (out, paper io.Writer, err error) {
	out = c.m.Stdout
	if c.Out != "-" {
		f, err := os.OpenFile(c.Out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("printersim: open --out file: %w", err)
		}
		c.out, out = f, f
	}
	switch c.Paper {
	case "":
	case "-":
		paper = c.m.Stdout
	default:
		f, err := os.OpenFile(c.Paper, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("printersim: open --paper file: %w", err)
		}
		c.paper, paper = f, f
	}
	return out, paper, nil
}

// serveControl serves the control API on --control, if given; a failure
// of the server goes to errc.
func (c *printerSim) serveControl(sim *printersim.Printer, errc chan<- error) error {
	if c.Control == "" {
		return nil
	}
	cl, err := net.Listen("tcp", c.Control)
	if err != nil {
		return fmt.Errorf("printersim: --control: %w", err)
	}
	c.control = &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := c.control.Serve(cl); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("printersim: control: %w", err)
		}
	}()
	fmt.Fprintf(c.m.Stderr, "printersim control on http://%s\n", cl.Addr())
	return nil
}

// serve runs the simulated printer on what the flags name (the listener
// as ePOS-Print or raw ESC/POS, CloudPRNT polling, a serial line), each
// saying so on stderr; a failure goes to errc.
func (c *printerSim) serve(ctx context.Context, sim *printersim.Printer, cp *printersim.CloudPRNT, errc chan<- error) {
	switch {
	case c.ln != nil && c.Protocol == "epos":
		fmt.Fprintf(c.m.Stderr, "printersim ePOS-Print listening on http://%s (devid %s, job log %t, encoding %s, fault %s, paper %s)\n",
			c.ln.Addr(), c.DevID, c.JobLog, c.Encoding, c.Fault, c.Out)
		go func() {
			if err := sim.ServeEPOS(c.ln, printersim.EPOSOptions{DevID: c.DevID, JobLog: c.JobLog}); err != nil && !errors.Is(err, printersim.ErrClosed) {
				errc <- err
			}
		}()
	case c.ln != nil:
		fmt.Fprintf(c.m.Stderr, "printersim listening on %s (model %s, encoding %s, fault %s, paper %s)\n", c.ln.Addr(), c.Model, c.Encoding, c.Fault, c.Out)
		go func() {
			if err := sim.Serve(c.ln); err != nil && !errors.Is(err, printersim.ErrClosed) {
				errc <- err
			}
		}()
	case cp != nil:
		fmt.Fprintf(c.m.Stderr, "printersim CloudPRNT polling %s every %s (MAC %s, emulation %s, encoding %s, fault %s, paper %s)\n",
			c.URL, c.Poll, c.MAC, c.Emulation, c.Encoding, c.Fault, c.Out)
		go func() {
			if err := cp.Run(ctx); err != nil {
				errc <- fmt.Errorf("printersim: cloudprnt: %w", err)
			}
		}()
	}
	if c.Serial != "" {
		fmt.Fprintf(c.m.Stderr, "printersim on serial %s (model %s, baud %d, encoding %s, fault %s, paper %s)\n", c.Serial, c.Model, c.Baud, c.Encoding, c.Fault, c.Out)
		go func() {
			if err := sim.ServeSerial(c.Serial, c.Baud); err != nil && !errors.Is(err, printersim.ErrClosed) {
				errc <- fmt.Errorf("printersim: --serial: %w", err)
			}
		}()
	}
}

// checkProtocol checks the flags of --protocol.
func (c *printerSim) checkProtocol(listen bool) error {
	switch c.Protocol {
	case "escpos", "":
		c.Protocol = "escpos"
	case "epos":
		if c.Serial != "" {
			return errors.New("printersim: --serial: an ePOS-Print printer is reached over HTTP; use --listen")
		}
		if strings.TrimSpace(c.DevID) == "" {
			return errors.New("printersim: --devid: a device id is required")
		}
	case "cloudprnt":
		if c.Serial != "" || listen {
			return errors.New("printersim: --protocol cloudprnt polls --url; --listen and --serial do not apply")
		}
		c.Listen = ""
		if c.URL == "" {
			return errors.New("printersim: --url: the CloudPRNT server's URL is required with --protocol cloudprnt")
		}
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("printersim: --url: %q is not an http:// or https:// URL", c.URL)
		}
		if _, err := protocol.ParseMAC(c.MAC); err != nil {
			return fmt.Errorf("printersim: --mac: %w", err)
		}
		if c.Poll <= 0 {
			return fmt.Errorf("printersim: --poll: %s is not a positive duration", c.Poll)
		}
		if c.Emulation != "starprnt" && c.Emulation != "escpos" {
			return fmt.Errorf("printersim: --emulation: %q is not starprnt or escpos", c.Emulation)
		}
	default:
		return fmt.Errorf("printersim: --protocol: %q is not escpos, epos or cloudprnt", c.Protocol)
	}
	return nil
}

func (c *printerSim) close() error {
	c.closeOnce.Do(func() {
		var errs []error
		if c.control != nil {
			errs = append(errs, c.control.Close())
		}
		if c.ln != nil {
			if err := c.ln.Close(); !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		if c.sim != nil {
			errs = append(errs, c.sim.Close())
		}
		if c.out != nil {
			errs = append(errs, c.out.Close())
		}
		if c.paper != nil {
			errs = append(errs, c.paper.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}
