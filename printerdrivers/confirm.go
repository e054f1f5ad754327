package printerdrivers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

// EncodeStream is the Encode of a transport to an ESC/POS printer on a
// byte stream (tcp, serial): the ticket in cfg's encoding and width.
// The confirmation request goes after it (Send), so a process id it
// cannot carry is refused here, before anything is sent.
func EncodeStream(job *gateway.PrintJob, tk storeprint.Ticket, cfg gateway.PrinterConfig) ([]byte, error) {
	if !escpos.ValidProcessID(job.ProcessID) {
		return nil, fmt.Errorf("process id %q is not four ASCII digits", job.ProcessID)
	}
	return escpos.Encode(tk, cfg.Encoding, cfg.Width, nil)
}

// How an ESC/POS printer on a byte stream confirms a ticket (a tcp or
// serial printer's confirm), strongest first:
//
//   - process_id: GS ( H fn 48 after the cut; the printer answers it with
//     the attempt's process id once everything before it has printed
//     (Epson TM and compatibles).
//   - transmit_status: GS r 1 after the cut. It is not a real-time
//     command: the printer answers it once it has processed everything
//     before it, so its answer, read in order after the ticket, follows
//     the printed ticket. An answer that reports the paper end, a lost
//     connection or no answer leave the outcome open.
//   - status: the printer answers only the real-time DLE EOT. The first
//     answer after the ticket proves every byte reached the printer; the
//     ticket is done when that answer and every one while the ticket
//     takes to print (printTime, on the pipeline's clock) report the
//     printer online, with paper and no error. Weaker: a printer that
//     jams or loses power after that goes unnoticed.
//
// With confirm = "auto" the pipeline finds out at each connection, before
// anything of the ticket is sent, which of them the printer answers
// (detect), strongest first, and uses the strongest one found. It never
// goes below the strongest method the printer has answered since the
// gateway started, nor below what the printer says it is (GS I 66,
// identify): process_id for an Epson, transmit_status for another printer
// that answers GS I. A printer whose answers are lost from the start is
// thus not confirmed by its status; its tickets are uncertain, as with its
// method set by hand. Only a printer that answers nothing but DLE EOT is
// confirmed by status.

// probeWait bounds the wait for the answer to a confirmation request sent
// alone: with nothing to print before it, a printer that answers it
// answers at once.
const probeWait = 500 * time.Millisecond

// Printing time of a ticket under confirm = "status": the cut and feed,
// and each line at the speed of a slow thermal printer (about 90 mm/s).
const (
	printTimeBase    = 500 * time.Millisecond
	printTimePerLine = 40 * time.Millisecond
	statusEvery      = 250 * time.Millisecond // the status read while it prints
)

// printTime is how long the printer takes to print payload: what a
// status-confirmed ticket must stay ready for after it reached the printer.
func printTime(payload []byte) time.Duration {
	return printTimeBase + time.Duration(bytes.Count(payload, []byte{escpos.LF}))*printTimePerLine
}

// rank orders the methods, the strongest highest; 0 for anything else.
func rank(m storeprint.Confirm) int {
	switch m {
	case storeprint.ConfirmProcessID:
		return 3
	case storeprint.ConfirmTransmitStatus:
		return 2
	case storeprint.ConfirmStatus:
		return 1
	}
	return 0
}

// requestName names a method's request, for errors.
func requestName(m storeprint.Confirm) string {
	switch m {
	case storeprint.ConfirmProcessID:
		return "the process ID request (GS ( H)"
	case storeprint.ConfirmTransmitStatus:
		return "the transmit status request (GS r 1)"
	}
	return "the status request (DLE EOT)"
}

// request returns the bytes that follow a ticket to have it confirmed by
// m: nothing for status, whose requests the pipeline sends afterwards.
func request(m storeprint.Confirm, processID string) []byte {
	switch m {
	case storeprint.ConfirmProcessID:
		return escpos.ProcessIDRequest(processID)
	case storeprint.ConfirmTransmitStatus:
		return escpos.TransmitStatusRequest()
	}
	return nil
}

// confirmsOf returns how a job connection's printer confirms: the
// connection's word, else the transport's.
func confirmsOf(c Conn, t Transport) storeprint.Confirm {
	if r, ok := c.(gateway.ConfirmsReporter); ok {
		return r.Confirms()
	}
	if r, ok := t.(gateway.ConfirmsReporter); ok {
		return r.Confirms()
	}
	return ""
}

// method returns how this connection's ticket is confirmed: the configured
// method, or for confirm = "auto" the strongest the printer answers now
// (detect), never below the strongest it answered before.
func (p *Pipeline) method(ctx context.Context, sc StreamConn) (storeprint.Confirm, error) {
	if p.confirm != ConfirmAuto {
		return storeprint.Confirm(p.confirm), nil
	}
	p.mu.Lock()
	floor := p.found
	p.mu.Unlock()
	got, err := p.detect(ctx, sc, storeprint.ConfirmProcessID)
	if err != nil {
		return "", err
	}
	if rank(got) < rank(storeprint.ConfirmProcessID) {
		least, err := p.identify(ctx, sc)
		if err != nil {
			return "", err
		}
		if rank(least) > rank(got) {
			got = least
		}
	}
	if rank(got) <= rank(floor) {
		return floor, nil
	}
	p.mu.Lock()
	p.found = got
	p.mu.Unlock()
	return got, nil
}

// detect finds out without paper which confirmation requests the printer
// answers, strongest first, trying none stronger than from: GS ( H sent
// alone, then GS r 1 sent alone, each answered within probeWait; a
// printer that answers neither is confirmed by its status (the caller has
// just read it). A lost connection is an error.
func (p *Pipeline) detect(ctx context.Context, sc StreamConn, from storeprint.Confirm) (storeprint.Confirm, error) {
	wait := min(probeWait, p.cfg.ConnectTimeout.Duration)
	if rank(from) >= rank(storeprint.ConfirmProcessID) {
		id := storeprint.NewProcessID()
		ok, err := p.ask(ctx, sc, wait, escpos.ProcessIDRequest(id), func(r *bufio.Reader) error {
			for {
				got, err := escpos.ReadConfirmation(r)
				if err != nil || got == id {
					return err
				}
			}
		})
		if err != nil || ok {
			return storeprint.ConfirmProcessID, err
		}
	}
	if rank(from) >= rank(storeprint.ConfirmTransmitStatus) {
		ok, err := p.ask(ctx, sc, wait, escpos.TransmitStatusRequest(), func(r *bufio.Reader) error {
			_, err := escpos.ReadTransmitStatus(r)
			return err
		})
		if err != nil || ok {
			return storeprint.ConfirmTransmitStatus, err
		}
	}
	return storeprint.ConfirmStatus, nil
}

// identify asks the printer who made it (GS I 66), once until it cannot
// be reached (it may be another printer then), and returns the least
// confirmation method that answer implies: process_id for an Epson (every
// TM printer answers GS ( H), transmit_status for any other printer that
// answers GS I (a printer with that part of the ESC/POS command set has
// GS r too), nothing for one that does not answer.
func (p *Pipeline) identify(ctx context.Context, sc StreamConn) (storeprint.Confirm, error) {
	p.mu.Lock()
	m := p.maker
	p.mu.Unlock()
	if m == makerUnknown {
		var maker string
		ok, err := p.ask(ctx, sc, min(probeWait, p.cfg.ConnectTimeout.Duration), escpos.MakerRequest(), func(r *bufio.Reader) error {
			var err error
			maker, err = escpos.ReadIDBlock(r)
			return err
		})
		if err != nil {
			return "", err
		}
		switch {
		case !ok:
			m = makerNone
		case strings.EqualFold(strings.TrimSpace(maker), "EPSON"):
			m = makerEpson
		default:
			m = makerOther
		}
		p.mu.Lock()
		p.maker = m
		p.mu.Unlock()
	}
	switch m {
	case makerEpson:
		return storeprint.ConfirmProcessID, nil
	case makerOther:
		return storeprint.ConfirmTransmitStatus, nil
	}
	return "", nil
}

// What the printer said its maker is (GS I 66).
const (
	makerUnknown = iota // not asked since it was last unreachable
	makerEpson          // EPSON
	makerOther          // another maker
	makerNone           // no answer
)

// ask sends req and reads its answer with read within wait. It returns
// false and no error when no answer came in time.
func (p *Pipeline) ask(ctx context.Context, sc StreamConn, wait time.Duration, req []byte, read func(*bufio.Reader) error) (bool, error) {
	actx, cancel := p.bound(ctx, wait, "answer to a confirmation request sent alone")
	defer cancel()
	if err := sc.Write(actx, req); err != nil {
		return false, fmt.Errorf("send %x: %w", req, err)
	}
	r, done, err := sc.Reader(actx)
	if err != nil {
		return false, err
	}
	err = read(r)
	done()
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, context.Cause(ctx)
	case actx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
		return false, nil // no answer within wait
	}
	return false, fmt.Errorf("read the answer to %x: %w", req, err)
}

// confirmStream waits for the confirmation of job's ticket (payload, just
// written with its request) by the method the pipeline chose for it.
func (p *Pipeline) confirmStream(ctx context.Context, sc StreamConn, job *gateway.PrintJob, payload []byte) error {
	r, done, err := sc.Reader(ctx)
	if err != nil {
		return err
	}
	defer done()
	switch job.Confirms {
	case storeprint.ConfirmProcessID:
		for {
			id, err := escpos.ReadConfirmation(r)
			if err != nil {
				return err
			}
			if id == job.ProcessID {
				return nil
			}
			// An answer to someone else's request: not ours.
		}
	case storeprint.ConfirmTransmitStatus:
		b, err := escpos.ReadTransmitStatus(r)
		if err != nil {
			return err
		}
		if b&escpos.TransmitPaperEnd != 0 {
			return WithState(storeprint.PrinterPaperEnd, fmt.Errorf("the answer to GS r 1 (%#02x) reports the paper end: the ticket may not be whole", b))
		}
		return nil
	case storeprint.ConfirmStatus:
		return p.confirmByStatus(ctx, sc, r, payload)
	}
	return fmt.Errorf("unknown confirmation method %q", job.Confirms)
}

// confirmByStatus is confirm = "status": the first status answer after the
// ticket proves all of it reached the printer; the printer must then
// report ready at every reading for the time the ticket takes to print.
func (p *Pipeline) confirmByStatus(ctx context.Context, sc StreamConn, r *bufio.Reader, payload []byte) error {
	read := func() error {
		if err := sc.Write(ctx, escpos.StatusQuery()); err != nil {
			return fmt.Errorf("send status request: %w", err)
		}
		n1, n2, n4, err := escpos.ReadStatus(r)
		if err != nil {
			return fmt.Errorf("read status answer: %w", err)
		}
		if st := escpos.ParseStatus(n1, n2, n4); st.State != storeprint.PrinterReady {
			return WithState(st.State, fmt.Errorf("the printer reports %s while the ticket prints", st.State))
		}
		return nil
	}
	if err := read(); err != nil {
		return err
	}
	end := p.clock.Mono() + printTime(payload)
	for {
		left := end - p.clock.Mono()
		if left <= 0 {
			return nil
		}
		if !clock.Sleep(ctx, p.clock, min(left, statusEvery)) {
			return context.Cause(ctx)
		}
		if err := read(); err != nil {
			return err
		}
	}
}
