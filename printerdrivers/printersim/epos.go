package printersim

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/epos"
)

// EPOSOptions configure the simulated printer's ePOS-Print service.
type EPOSOptions struct {
	DevID string // the device id it answers for; "" is local_printer
	// JobLog keeps a print job log (the ePOS-Print spooler function):
	// every print request with a print job id is logged, and an empty
	// document with a print job id asks for that job's status.
	JobLog bool
}

// DefaultEPOSTimeout is a request's timeout when it names none.
const DefaultEPOSTimeout = 60 * time.Second

// loggedJob is one entry of the print job log.
type loggedJob struct {
	state string // "printing", "printed" or a failure code
}

// ServeEPOS serves the ePOS-Print service (POST /cgi-bin/epos/service.cgi)
// on l until the printer is closed, as an Epson printer's web server
// does. Under FaultDown it closes every connection at once, as a printer
// switched off. It returns nil once the printer is closed.
func (p *Printer) ServeEPOS(l net.Listener, opts EPOSOptions) error {
	srv := &http.Server{Handler: p.EPOSHandler(opts), ReadHeaderTimeout: 10 * time.Second}
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.servers[srv] = struct{}{}
	p.mu.Unlock()
	err := srv.Serve(downListener{l, p})
	select {
	case <-p.closed:
		return nil
	default:
		return fmt.Errorf("printersim: serve ePOS-Print: %w", err)
	}
}

// downListener refuses connections while the printer is down.
type downListener struct {
	net.Listener
	p *Printer
}

func (l downListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.p.Fault() != FaultDown {
			return c, err
		}
		c.Close()
	}
}

// EPOSHandler is the ePOS-Print service, per Epson's ePOS-Print XML
// manual:
//
//   - POST /cgi-bin/epos/service.cgi?devid=ID&timeout=MS with a SOAP
//     envelope holding an <epos-print> document. The text of <text>
//     elements, <feed> and <cut> go on paper (one ticket per cut); other
//     print elements are accepted and print nothing this simulator reads.
//   - The answer, a <response success code status battery> in a SOAP
//     envelope, comes after printing; an error answer comes before it.
//   - An empty document reads the status; with a print job id in the
//     header and the job log on, that job's status: printed (success),
//     Printing, JobNotFound, or the code it failed with.
//   - Another devid is DeviceNotFound; a document it cannot read is
//     SchemaError.
//
// Faults: offline waits up to the request's timeout for the printer to
// come back, then answers EX_TIMEOUT without printing; paper_end and
// cover_open answer EPTR_REC_EMPTY and EPTR_COVER_OPEN at once without
// printing; slow prints after the slow delay; drop closes the connection
// as the ticket arrives and prints nothing; lost_ack prints and closes the
// connection without answering; down closes every connection. The status
// bits of every answer show them.
func (p *Printer) EPOSHandler(opts EPOSOptions) http.Handler {
	if opts.DevID == "" {
		opts.DevID = epos.DefaultDevID
	}
	return &eposHandler{p: p, opts: opts}
}

type eposHandler struct {
	p    *Printer
	opts EPOSOptions
}

func (h *eposHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := h.p
	if r.URL.Path != epos.ServicePath {
		http.Error(w, "no such service", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if !p.enter() {
		hijackClose(w)
		return
	}
	defer p.wg.Done()
	if p.Fault() == FaultDown {
		hijackClose(w)
		return
	}
	timeout := DefaultEPOSTimeout
	if v := r.URL.Query().Get("timeout"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, epos.MaxRequest+1))
	if err != nil {
		return // the client went away before the request was complete: nothing to do
	}
	if devid := r.URL.Query().Get("devid"); devid != h.opts.DevID {
		h.answer(w, "", epos.Response{Code: epos.CodeDeviceNotFound})
		return
	}
	req, err := epos.ParseRequest(body)
	if err != nil {
		p.log.Info("ePOS-Print request refused", "err", err)
		h.answer(w, "", epos.Response{Code: epos.CodeSchemaError, Status: h.status(false)})
		return
	}
	if req.Empty {
		if req.PrintJobID != "" && h.opts.JobLog {
			h.answer(w, req.PrintJobID, h.jobStatus(req.PrintJobID))
			return
		}
		h.answer(w, req.PrintJobID, epos.Response{Success: true, Status: h.status(true)})
		return
	}
	h.print(w, req, timeout)
}

// print puts a request's tickets on paper and answers after printing.
func (h *eposHandler) print(w http.ResponseWriter, req *epos.Request, timeout time.Duration) {
	p := h.p
	id := req.PrintJobID
	if !h.opts.JobLog {
		id = "" // no log: the printer knows no job ids
	}
	fail := func(code string) {
		h.logJob(id, code)
		h.answer(w, id, epos.Response{Code: code, Status: h.status(false)})
	}
	switch p.Fault() {
	case FaultDrop:
		p.log.Info("drop: closing the connection as the ticket arrives")
		hijackClose(w)
		return
	case FaultPaperEnd:
		fail(epos.CodeRecEmpty)
		return
	case FaultCoverOpen:
		fail(epos.CodeCoverOpen)
		return
	case FaultOffline:
		if !h.waitOnline(timeout) {
			fail(epos.CodeTimeout)
			return
		}
	}
	lost := p.Fault() == FaultLostAck
	h.logJob(id, "printing")
	var last chan struct{}
	for _, lines := range req.Tickets {
		last = make(chan struct{})
		p.enqueue(job{kind: jobTicket, lines: lines, done: last})
	}
	if last != nil {
		// The printer prints what it was sent, whether or not the
		// client still waits.
		select {
		case <-last:
		case <-p.closed:
			return
		}
	}
	h.logJob(id, "printed")
	if lost {
		p.log.Info("lost_ack: printed, closing the connection without an answer")
		hijackClose(w)
		return
	}
	h.answer(w, id, epos.Response{Success: true, Status: h.status(true)})
}

// waitOnline waits up to timeout for the printer to leave FaultOffline,
// and reports whether it did and may print.
func (h *eposHandler) waitOnline(timeout time.Duration) bool {
	p := h.p
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		f, changed := p.fault, p.faultCh
		p.mu.Unlock()
		switch f {
		case FaultOffline:
		case FaultPaperEnd, FaultCoverOpen, FaultDown:
			return false
		default:
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-p.closed:
			return false
		}
	}
}

func (h *eposHandler) logJob(id, state string) {
	if id == "" {
		return
	}
	h.p.mu.Lock()
	h.p.jobLog[id] = loggedJob{state: state}
	h.p.mu.Unlock()
}

// jobStatus is the job log's answer about one job.
func (h *eposHandler) jobStatus(id string) epos.Response {
	h.p.mu.Lock()
	j, ok := h.p.jobLog[id]
	h.p.mu.Unlock()
	switch {
	case !ok:
		return epos.Response{Code: epos.CodeJobNotFound, Status: h.status(false)}
	case j.state == "printed":
		return epos.Response{Success: true, Status: h.status(true)}
	case j.state == "printing":
		return epos.Response{Code: epos.CodePrinting, Status: h.status(false)}
	}
	return epos.Response{Code: j.state, Status: h.status(false)}
}

// status returns the status bits of the printer now.
func (h *eposHandler) status(printed bool) uint32 {
	st := h.p.Fault().Status()
	return epos.StatusBits(st, printed && st.State == storeprint.PrinterReady)
}

func (h *eposHandler) answer(w http.ResponseWriter, printJobID string, r epos.Response) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	if _, err := w.Write(epos.ResponseDocument(h.opts.DevID, printJobID, r)); err != nil {
		h.p.log.Info("ePOS-Print answer not delivered", "err", err)
	}
}

// enter counts a request in the printer's work, unless it is closed.
func (p *Printer) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isClosed {
		return false
	}
	p.wg.Add(1)
	return true
}

// hijackClose closes the request's connection without an answer.
func hijackClose(w http.ResponseWriter) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	_ = c.Close() // nothing more is said on it either way
}
