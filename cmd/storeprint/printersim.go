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
	"os"
	"strings"
	"sync"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

func printerSimUsage() string {
	var b strings.Builder
	b.WriteString(`Usage:
  storeprint printersim --listen ADDR --out FILE.jsonl [flags]
  storeprint printersim --serial PATH --out FILE.jsonl [flags]

Runs a simulated ESC/POS receipt printer that answers like an Epson TM-T88V,
and appends one JSON line {"task_no","text","at"} per cut ticket to --out
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
and GS a always agree. Under offline, paper_end and cover_open only DLE EOT
and GS a answer; the rest waits, as on a printer, until the fault clears.

With --serial it is a printer at the end of a serial line instead (or as
well, with --listen too): it opens the tty PATH, and opens it again whenever
it comes back after going away (an unplugged adapter, a restarted socat).
To test a serial printer without one, join two ptys with socat and give the
simulator one end and the gateway the other:
  socat -d -d pty,raw,echo=0,link=/tmp/ttySIM pty,raw,echo=0,link=/tmp/ttyPOS

Flags:
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
  --fault NAME      the fault at start (default none; see below)
  --slow DURATION   how long each ticket takes under the slow fault (default 2s)
  --control ADDR    serve the control API on ADDR:
                      GET  /fault                      the current fault
                      PUT  /fault {"fault":"NAME"}     change it (POST too)
                      GET  /printed                    the tickets printed so far

Faults (on a serial line, down keeps the device closed and drop closes it
mid-ticket; the simulator then opens it again and discards what waits in it):
`)
	for _, f := range printersim.Faults {
		fmt.Fprintf(&b, "  %-11s %s\n", f, f.Description())
	}
	b.WriteString(`
Example:
  storeprint printersim --listen 127.0.0.1:9100 --out paper.jsonl --control 127.0.0.1:9200
  curl -X PUT -d '{"fault":"paper_end"}' http://127.0.0.1:9200/fault
  storeprint printersim --listen 127.0.0.1:9100 --out paper.jsonl --paper - --name pass-1
  storeprint printersim --serial /tmp/ttySIM --out paper.jsonl
`)
	return b.String()
}

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
	Slow     time.Duration
	Control  string

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
	fs.DurationVar(&c.Slow, "slow", printersim.DefaultSlowDelay, "")
	fs.StringVar(&c.Control, "control", "", "")
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
	}
	if _, err := escpos.NewDecoder(c.Encoding); err != nil {
		return fmt.Errorf("printersim: --encoding: %w", err)
	}
	f, err := printersim.ParseFault(*fault)
	if err != nil {
		return fmt.Errorf("printersim: --fault: %w", err)
	}
	c.Fault = f
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
	var out io.Writer = c.m.Stdout
	if c.Out != "-" {
		f, err := os.OpenFile(c.Out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("printersim: open --out file: %w", err)
		}
		c.out, out = f, f
	}
	var paper io.Writer
	switch c.Paper {
	case "":
	case "-":
		paper = c.m.Stdout
	default:
		f, err := os.OpenFile(c.Paper, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("printersim: open --paper file: %w", err)
		}
		c.paper, paper = f, f
	}
	sim, err := printersim.New(printersim.Options{
		Name:      c.Name,
		Encoding:  c.Encoding,
		Out:       out,
		Paper:     paper,
		Fault:     c.Fault,
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
	if c.Control != "" {
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
	}
	if c.ln != nil {
		fmt.Fprintf(c.m.Stderr, "printersim listening on %s (encoding %s, fault %s, paper %s)\n", c.ln.Addr(), c.Encoding, c.Fault, c.Out)
		go func() {
			if err := sim.Serve(c.ln); err != nil && !errors.Is(err, printersim.ErrClosed) {
				errc <- err
			}
		}()
	}
	if c.Serial != "" {
		fmt.Fprintf(c.m.Stderr, "printersim on serial %s (baud %d, encoding %s, fault %s, paper %s)\n", c.Serial, c.Baud, c.Encoding, c.Fault, c.Out)
		go func() {
			if err := sim.ServeSerial(c.Serial, c.Baud); err != nil && !errors.Is(err, printersim.ErrClosed) {
				errc <- fmt.Errorf("printersim: --serial: %w", err)
			}
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
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
