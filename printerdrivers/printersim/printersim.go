package printersim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

// Fault is a trouble the simulated printer can be put in.
type Fault string

const (
	FaultNone      Fault = "none"       // prints and confirms
	FaultOffline   Fault = "offline"    // reports offline; keeps what it receives and prints it when the fault clears
	FaultPaperEnd  Fault = "paper_end"  // reports paper end; keeps what it receives, as offline
	FaultCoverOpen Fault = "cover_open" // reports cover open; keeps what it receives, as offline
	FaultSlow      Fault = "slow"       // each ticket takes Options.SlowDelay to print
	FaultDrop      Fault = "drop"       // closes the connection as ticket text arrives; nothing prints
	FaultLostAck   Fault = "lost_ack"   // prints, but never answers a confirmation request (GS ( H, GS r) received meanwhile
	FaultDown      Fault = "down"       // closes every new connection at once
)

// Faults lists every fault, FaultNone first.
var Faults = []Fault{FaultNone, FaultOffline, FaultPaperEnd, FaultCoverOpen, FaultSlow, FaultDrop, FaultLostAck, FaultDown}

// Description says in a few words what the fault does.
func (f Fault) Description() string {
	switch f {
	case FaultNone:
		return "print and confirm every ticket"
	case FaultOffline:
		return "report offline; hold received tickets until cleared"
	case FaultPaperEnd:
		return "report paper end; hold received tickets until cleared"
	case FaultCoverOpen:
		return "report cover open; hold received tickets until cleared"
	case FaultSlow:
		return "take the slow delay to print each ticket"
	case FaultDrop:
		return "close the connection mid-ticket; nothing prints"
	case FaultLostAck:
		return "print, but never answer a confirmation request (GS ( H, GS r)"
	case FaultDown:
		return "refuse connections (close them at once)"
	}
	return ""
}

// ParseFault returns the fault named s.
func ParseFault(s string) (Fault, error) {
	for _, f := range Faults {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Faults))
	for i, f := range Faults {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown fault %q (one of %s)", s, strings.Join(names, ", "))
}

// holds reports whether the printer stops printing, keeping what it
// received, while in f.
func (f Fault) holds() bool {
	return f == FaultOffline || f == FaultPaperEnd || f == FaultCoverOpen
}

// Status is what a printer in f reports to DLE EOT.
func (f Fault) Status() storeprint.PrinterStatus {
	switch f {
	case FaultOffline:
		return storeprint.PrinterStatus{State: storeprint.PrinterOffline}
	case FaultPaperEnd:
		return storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}
	case FaultCoverOpen:
		return storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen}
	}
	return storeprint.PrinterStatus{State: storeprint.PrinterReady}
}

// Model is the kind of ESC/POS printer simulated: which confirmation
// requests it answers.
type Model string

const (
	ModelTM    Model = "tm"    // an Epson TM: answers GS ( H and GS r (and DLE EOT)
	ModelBasic Model = "basic" // a low-cost ESC/POS printer: answers GS r, GS I and DLE EOT, ignores GS ( H
	ModelDumb  Model = "dumb"  // answers only the real-time DLE EOT; ignores GS ( H, GS r and GS I
)

// Models lists every model, the default first.
var Models = []Model{ModelTM, ModelBasic, ModelDumb}

// Description says in a few words what the model answers.
func (m Model) Description() string {
	switch m {
	case ModelTM:
		return "an Epson TM-T88V: answers GS ( H, GS r, GS I and DLE EOT"
	case ModelBasic:
		return "a low-cost ESC/POS printer: answers GS r, GS I and DLE EOT, ignores GS ( H"
	case ModelDumb:
		return "answers only DLE EOT (real-time status); ignores GS ( H, GS r and GS I"
	}
	return ""
}

// Confirms is the strongest confirmation the model answers, what the
// gateway's confirm = "auto" finds.
func (m Model) Confirms() storeprint.Confirm {
	switch m {
	case ModelBasic:
		return storeprint.ConfirmTransmitStatus
	case ModelDumb:
		return storeprint.ConfirmStatus
	}
	return storeprint.ConfirmProcessID
}

// ParseModel returns the model named s; "" is ModelTM.
func ParseModel(s string) (Model, error) {
	if s == "" {
		return ModelTM, nil
	}
	for _, m := range Models {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Models))
	for i, m := range Models {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown model %q (one of %s)", s, strings.Join(names, ", "))
}

// Ticket is one cut ticket, as written to Options.Out.
type Ticket struct {
	TaskNo string    `json:"task_no"` // the last non-empty text line before the cut
	Text   string    `json:"text"`    // every text line, joined by "\n"
	At     time.Time `json:"at"`
}

// DefaultSlowDelay is how long a ticket takes under FaultSlow unless
// Options.SlowDelay says otherwise.
const DefaultSlowDelay = 2 * time.Second

// Options configure a simulated printer.
type Options struct {
	Name      string        // the printer's name, heading each ticket on Paper
	Encoding  string        // power-on text encoding: gb18030 (default), cp437, utf-8
	Out       io.Writer     // receives one JSON line per printed ticket; nil: none
	Paper     io.Writer     // receives each printed ticket as text, as it reads on paper (see PaperText); nil: none
	Fault     Fault         // fault at start; "" is FaultNone
	Model     Model         // what it answers on ESC/POS; "" is ModelTM
	SlowDelay time.Duration // time per ticket under FaultSlow; 0 is DefaultSlowDelay
	Now       func() time.Time
	Logger    *slog.Logger // nil: no logging
}

// ErrClosed is returned by Serve on a closed printer.
var ErrClosed = errors.New("printersim: printer closed")

// Printer is a simulated ESC/POS printer. Its methods are safe for
// concurrent use.
type Printer struct {
	opts   Options
	log    *slog.Logger
	closed chan struct{}
	wg     sync.WaitGroup // the print loop and every served connection

	mu        sync.Mutex
	isClosed  bool
	fault     Fault
	faultCh   chan struct{} // closed and replaced when the fault changes
	queue     []job         // received, not yet printed or answered
	queueCh   chan struct{} // wakes the print loop; capacity 1
	printed   []Ticket
	printedCh chan struct{} // closed and replaced when a ticket prints
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	servers   map[*http.Server]struct{} // ePOS-Print (ServeEPOS)
	jobLog    map[string]loggedJob      // ePOS-Print print job log, by print job id
}

// job is one thing the print mechanism works through in order: a cut
// ticket, or a request to answer once everything before it is printed.
type job struct {
	kind  jobKind
	conn  *conn
	lines []string      // jobTicket
	id    string        // jobProcessID
	n     byte          // jobPrinterID, jobStatus: n of GS I n, GS r n
	lost  bool          // a confirmation received under FaultLostAck: never answered
	done  chan struct{} // jobTicket from an HTTP protocol: closed once printed; conn is nil
}

type jobKind uint8

const (
	jobTicket    jobKind = iota + 1 // a cut ticket
	jobProcessID                    // GS ( H: confirm what came before
	jobPrinterID                    // GS I n: who the printer is
	jobStatus                       // GS r n: status, once what came before is printed
)

// New returns a simulated printer. Serve it on a listener, or hand it
// single connections with ServeConn; Close stops it.
func New(opts Options) (*Printer, error) {
	if opts.Encoding == "" {
		opts.Encoding = escpos.GB18030
	}
	if _, err := escpos.NewDecoder(opts.Encoding); err != nil {
		return nil, fmt.Errorf("printersim: %w", err)
	}
	if opts.Fault == "" {
		opts.Fault = FaultNone
	}
	if _, err := ParseFault(string(opts.Fault)); err != nil {
		return nil, fmt.Errorf("printersim: %w", err)
	}
	if opts.SlowDelay <= 0 {
		opts.SlowDelay = DefaultSlowDelay
	}
	m, err := ParseModel(string(opts.Model))
	if err != nil {
		return nil, fmt.Errorf("printersim: %w", err)
	}
	opts.Model = m
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Printer{
		opts:      opts,
		log:       log,
		closed:    make(chan struct{}),
		fault:     opts.Fault,
		faultCh:   make(chan struct{}),
		queueCh:   make(chan struct{}, 1),
		printedCh: make(chan struct{}),
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
		servers:   map[*http.Server]struct{}{},
		jobLog:    map[string]loggedJob{},
	}
	p.wg.Add(1)
	go p.printLoop()
	return p, nil
}

// Fault returns the current fault.
func (p *Printer) Fault() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// SetFault changes the fault at once. Clearing offline, paper_end or
// cover_open prints what was kept meanwhile; clearing slow finishes the
// ticket being printed without further delay. Connections that enabled
// automatic status back (GS a n) for what changed get the new status.
func (p *Printer) SetFault(f Fault) {
	if f == "" {
		f = FaultNone
	}
	p.mu.Lock()
	if f == p.fault {
		p.mu.Unlock()
		return
	}
	p.log.Info("fault changed", "from", p.fault, "to", f)
	prev, next := asb(p.fault.Status()), asb(f.Status())
	p.fault = f
	close(p.faultCh)
	p.faultCh = make(chan struct{})
	var notify []*conn
	for c := range p.conns {
		if c.asb != 0 && asbChanged(c.asb, prev, next) {
			notify = append(notify, c)
		}
	}
	p.mu.Unlock()
	for _, c := range notify {
		if err := c.write(next[:]); err != nil {
			p.log.Info("automatic status back not delivered", "err", err)
		}
	}
}

// Printed returns the tickets printed so far, oldest first.
func (p *Printer) Printed() []Ticket {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Ticket(nil), p.printed...)
}

// WaitPrinted waits until at least n tickets have been printed and returns
// them all, or returns what has been printed with ctx's error.
func (p *Printer) WaitPrinted(ctx context.Context, n int) ([]Ticket, error) {
	for {
		p.mu.Lock()
		printed := append([]Ticket(nil), p.printed...)
		ch := p.printedCh
		p.mu.Unlock()
		if len(printed) >= n {
			return printed, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return printed, fmt.Errorf("wait for %d tickets, have %d: %w", n, len(printed), ctx.Err())
		}
	}
}

// Serve accepts connections on l and serves each until it closes. It
// returns nil once the printer is closed, or the listener's error.
func (p *Printer) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			select {
			case <-p.closed:
				return nil
			default:
				return fmt.Errorf("printersim: accept: %w", err)
			}
		}
		go p.ServeConn(c)
	}
}

// ServeConn serves one connection, a TCP connection or any other byte
// stream such as a pseudo-terminal, until it ends or the printer closes;
// it closes rwc before it returns.
func (p *Printer) ServeConn(rwc io.ReadWriteCloser) {
	c := &conn{rwc: rwc}
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		rwc.Close()
		return
	}
	p.wg.Add(1)
	p.conns[c] = struct{}{}
	down := p.fault == FaultDown
	p.mu.Unlock()
	defer func() {
		c.close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		p.wg.Done()
	}()
	if down {
		p.log.Info("down: refusing a connection")
		return
	}

	dec, _ := escpos.NewDecoder(p.opts.Encoding) // checked in New
	var lines []string                           // the ticket being received
	buf := make([]byte, 4096)
	for {
		n, err := rwc.Read(buf)
		for _, ev := range dec.Decode(buf[:n]) {
			if !p.handle(c, ev, &lines) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// handle acts on one event from a connection at the moment it arrives. It
// returns false when the connection must close.
func (p *Printer) handle(c *conn, ev escpos.Event, lines *[]string) bool {
	switch ev.Kind {
	case escpos.EventStatusRequest:
		// Real-time: answered as it arrives, whatever is waiting to print.
		// A dumb printer's confirmation is its status after the ticket:
		// under lost_ack it is lost.
		if c.lose > 0 {
			c.lose--
			p.log.Info("lost_ack: not answering a status request after a ticket")
			return true
		}
		if b, ok := escpos.StatusByte(p.Fault().Status(), ev.N); ok {
			if err := c.write([]byte{b}); err != nil {
				return false
			}
		}
	case escpos.EventCommand:
		return p.command(c, ev.Cmd)
	case escpos.EventLine, escpos.EventCut:
		if p.Fault() == FaultDrop {
			p.log.Info("drop: closing the connection mid-ticket")
			return false
		}
		if ev.Kind == escpos.EventLine {
			*lines = append(*lines, ev.Text)
			return true
		}
		p.log.Info("received", "lines", len(*lines))
		if p.opts.Model == ModelDumb && p.Fault() == FaultLostAck {
			c.lose = len(escpos.StatusQuery()) / 3 // the one status query after it
		}
		p.enqueue(job{kind: jobTicket, conn: c, lines: *lines})
		*lines = nil
	case escpos.EventProcessID:
		if p.opts.Model != ModelTM {
			return true // not a command it knows: ignored
		}
		p.enqueue(job{kind: jobProcessID, conn: c, id: ev.ID, lost: p.Fault() == FaultLostAck})
	}
	return true
}

// command acts on the commands a TM printer answers or that change how it
// answers; the decoder has already taken care of the rest. It returns false
// when the connection must close.
func (p *Printer) command(c *conn, cmd []byte) bool {
	if len(cmd) < 2 {
		return true
	}
	switch {
	case cmd[0] == escpos.ESC && cmd[1] == '@':
		// Initialize: back to power-on modes, automatic status back off.
		p.mu.Lock()
		c.asb = 0
		p.mu.Unlock()
	case cmd[0] == escpos.GS && cmd[1] == 'a' && len(cmd) == 3:
		// Automatic status back: the status at once when enabled, then
		// after every change of an enabled item and every print.
		p.mu.Lock()
		c.asb = cmd[2]
		st := asb(p.fault.Status())
		p.mu.Unlock()
		if cmd[2] != 0 {
			return c.write(st[:]) == nil
		}
	case cmd[0] == escpos.GS && cmd[1] == 'I' && len(cmd) == 3:
		if p.opts.Model == ModelDumb {
			return true // not a command it knows: ignored
		}
		if printerID(cmd[2], p.opts.Encoding, p.opts.Model) != nil {
			p.enqueue(job{kind: jobPrinterID, conn: c, n: cmd[2]})
		}
	case cmd[0] == escpos.GS && cmd[1] == 'r' && len(cmd) == 3:
		if p.opts.Model == ModelDumb {
			return true // not a command it knows: ignored
		}
		if transmitStatus(cmd[2], storeprint.PrinterStatus{}) != nil {
			p.enqueue(job{kind: jobStatus, conn: c, n: cmd[2], lost: p.Fault() == FaultLostAck})
		}
	case cmd[0] == escpos.DLE && cmd[1] == 0x05:
		// DLE ENQ n recovers from a recoverable error (an autocutter
		// jam); no simulated fault is one, so, as a TM printer without
		// such an error does, it does nothing.
	}
	return true
}

func (p *Printer) enqueue(j job) {
	p.mu.Lock()
	p.queue = append(p.queue, j)
	p.mu.Unlock()
	select {
	case p.queueCh <- struct{}{}:
	default:
	}
}

// printLoop is the print mechanism: it works through received jobs one at
// a time, across all connections, in the order they arrived.
func (p *Printer) printLoop() {
	defer p.wg.Done()
	for {
		j, ok := p.next()
		if !ok || !p.waitReady(j.kind == jobTicket) {
			return
		}
		var answer []byte
		switch {
		case j.kind == jobTicket && j.conn == nil:
			p.print(j.lines)
			close(j.done)
		case j.kind == jobTicket:
			p.print(j.lines)
			p.mu.Lock()
			on, st := j.conn.asb != 0, asb(p.fault.Status())
			p.mu.Unlock()
			if on {
				answer = st[:]
			}
		case j.lost:
			p.log.Info("lost_ack: not answering a confirmation request", "id", j.id, "n", j.n)
		case j.kind == jobProcessID:
			answer = escpos.ProcessIDAnswer(j.id)
		case j.kind == jobPrinterID:
			answer = printerID(j.n, p.opts.Encoding, p.opts.Model)
		case j.kind == jobStatus:
			answer = transmitStatus(j.n, p.Fault().Status())
		}
		if answer == nil {
			continue
		}
		if err := j.conn.write(answer); err != nil {
			// The client gave up waiting: the answer is lost.
			p.log.Info("answer not delivered", "answer", fmt.Sprintf("% x", answer), "err", err)
		}
	}
}

// next returns the oldest job, waiting for one; false when closed.
func (p *Printer) next() (job, bool) {
	for {
		p.mu.Lock()
		if len(p.queue) > 0 {
			j := p.queue[0]
			p.queue = p.queue[1:]
			p.mu.Unlock()
			return j, true
		}
		p.mu.Unlock()
		select {
		case <-p.queueCh:
		case <-p.closed:
			return job{}, false
		}
	}
}

// waitReady waits until the printer may go on: no holding fault, and for
// a ticket under FaultSlow, the slow delay spent. False when closed.
func (p *Printer) waitReady(ticket bool) bool {
	var slow *time.Timer
	defer func() {
		if slow != nil {
			slow.Stop()
		}
	}()
	slowDone := false
	for {
		p.mu.Lock()
		f, changed := p.fault, p.faultCh
		p.mu.Unlock()
		var timeout <-chan time.Time
		switch {
		case f.holds():
		case f == FaultSlow && ticket && !slowDone:
			if slow == nil {
				slow = time.NewTimer(p.opts.SlowDelay)
			}
			timeout = slow.C
		default:
			return true
		}
		select {
		case <-changed:
		case <-timeout:
			slowDone = true
		case <-p.closed:
			return false
		}
	}
}

// print puts a ticket on paper: the out file first, then Printed.
func (p *Printer) print(lines []string) {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	t := Ticket{Text: strings.Join(lines, "\n"), At: p.opts.Now().UTC()}
	if len(lines) > 0 {
		t.TaskNo = strings.TrimSpace(lines[len(lines)-1])
	}
	if err := p.writeOut(t); err != nil {
		p.log.Error("write printed ticket", "task_no", t.TaskNo, "err", err)
	}
	p.log.Info("printed", "task_no", t.TaskNo, "lines", len(lines))
	p.mu.Lock()
	p.printed = append(p.printed, t)
	close(p.printedCh)
	p.printedCh = make(chan struct{})
	p.mu.Unlock()
}

func (p *Printer) writeOut(t Ticket) error {
	var errs []error
	if p.opts.Out != nil {
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		errs = append(errs, write(p.opts.Out, append(b, '\n')))
	}
	if p.opts.Paper != nil {
		errs = append(errs, write(p.opts.Paper, []byte(t.PaperText(p.opts.Name, time.Local))))
	}
	return errors.Join(errs...)
}

func write(w io.Writer, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	if f, ok := w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// paperWidth is the width of the rules around a ticket in PaperText: a
// ticket of 48 columns, the width of 80 mm paper.
const paperWidth = 50

// PaperText returns the ticket as it reads on paper, for a person watching
// the printer: a rule naming the printer and the time (in loc) it printed,
// every line of text, and the cut.
//
//	┌─ hot-1 · 12:34:56 ──────────────────────────────
//	│ Order: 1001
//	│ order_1001_station_hot
//	└───────────────────────────────── ✂ ────────────
func (t Ticket) PaperText(name string, loc *time.Location) string {
	var b strings.Builder
	head := "┌─ "
	if name != "" {
		head += name + " · "
	}
	head += t.At.In(loc).Format("15:04:05") + " "
	b.WriteString(head)
	b.WriteString(strings.Repeat("─", max(3, paperWidth-utf8.RuneCountInString(head))))
	b.WriteString("\n")
	if t.Text != "" {
		for _, l := range strings.Split(t.Text, "\n") {
			b.WriteString(strings.TrimRight("│ "+l, " "))
			b.WriteString("\n")
		}
	}
	b.WriteString("└" + strings.Repeat("─", paperWidth-14) + " ✂ " + strings.Repeat("─", 10) + "\n")
	return b.String()
}

// Close closes every listener and connection and stops printing; tickets
// not yet printed are lost, as when a printer is switched off.
func (p *Printer) Close() error {
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		return nil
	}
	p.isClosed = true
	close(p.closed)
	var ls []net.Listener
	for l := range p.listeners {
		ls = append(ls, l)
	}
	var cs []*conn
	for c := range p.conns {
		cs = append(cs, c)
	}
	var ss []*http.Server
	for s := range p.servers {
		ss = append(ss, s)
	}
	p.mu.Unlock()
	for _, s := range ss {
		_ = s.Close() // its listener is closed below; Serve reports nothing more
	}

	var errs []error
	for _, l := range ls {
		if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, c := range cs {
		c.close()
	}
	p.wg.Wait()
	return errors.Join(errs...)
}

// writeTimeout bounds an answer to a client that does not read.
const writeTimeout = 5 * time.Second

// conn is one client connection.
type conn struct {
	rwc       io.ReadWriteCloser
	wmu       sync.Mutex // answers come from the reader, the print loop and SetFault
	closeOnce sync.Once
	asb       byte // GS a n: the automatic status back items enabled; guarded by Printer.mu
	lose      int  // status requests not to answer (a dumb printer's lost confirmation); its serving goroutine's only
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if d, ok := c.rwc.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(writeTimeout)) // not every stream has deadlines
	}
	_, err := c.rwc.Write(b)
	return err
}

func (c *conn) close() {
	c.closeOnce.Do(func() { c.rwc.Close() })
}
