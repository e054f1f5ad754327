// Package protocol is Star CloudPRNT (HTTP version) as both ends of the
// project serve it, written from Star's CloudPRNT protocol guide: a
// printer polls a URL with a POST carrying its status as JSON and is told
// whether a job waits (jobReady, mediaTypes, jobToken); it fetches the job
// with a GET (?mac=&type=&token=) and confirms it with a DELETE
// (?mac=&code=&token=), code "200 OK" when it printed.
//
// Handler serves that URL over a Queue: the gateway's (an in-memory hub
// the cloudprnt driver feeds, one ticket in flight per printer) or the
// cloud's (PostgreSQL, for stores without a gateway). It imports nothing
// of the project but package storeprint and internal/authlimit, so both
// sides can use it.
//
// Failed logins are limited and logged the same on both sides: an
// unknown MAC address answers as wrong credentials do (401), each failure
// is logged with the client's address and the MAC address, never the
// password, and past FailBurst failures from one address for one MAC
// address (then one per FailEvery) the address is answered 429 with
// Retry-After for that MAC address, before its credentials are looked at.
package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/authlimit"
)

// Failed logins allowed from one address for one MAC address: FailBurst
// at once, then one per FailEvery. Printers poll every few seconds; a
// printer whose password was fixed is let in again within FailEvery.
const (
	FailBurst = 10
	FailEvery = 6 * time.Second
)

// Media types the project hands out.
const (
	MediaStarPRNT = "application/vnd.star.starprnt" // Star PRNT mode commands
	MediaRaw      = "application/octet-stream"      // passed to the printer as is: ESC/POS for a printer in ESC/POS emulation
	MediaText     = "text/plain"                    // plain text, printed in the default font and cut
)

// Poll is the JSON body of a printer's poll. Every field but statusCode is
// optional and may be null.
type Poll struct {
	Status             string `json:"status"`     // ASB status in hex
	PrinterMAC         string `json:"printerMAC"` // its Ethernet MAC address
	UniqueID           string `json:"uniqueID"`
	StatusCode         string `json:"statusCode"` // "200 OK", "410 Out of paper", ...
	JobToken           string `json:"jobToken"`   // the job it is printing, if any
	PrintingInProgress bool   `json:"printingInProgress"`
}

// PollReply is the server's answer to a poll.
type PollReply struct {
	JobReady   bool     `json:"jobReady"`
	MediaTypes []string `json:"mediaTypes,omitempty"`
	JobToken   string   `json:"jobToken,omitempty"`
}

// MaxPoll bounds a poll's body.
const MaxPoll = 64 << 10

// ParsePoll reads a poll's JSON body.
func ParsePoll(r io.Reader) (*Poll, error) {
	var p Poll
	d := json.NewDecoder(io.LimitReader(r, MaxPoll))
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("poll: malformed JSON: %w", err)
	}
	if strings.TrimSpace(p.StatusCode) == "" {
		return nil, errors.New("poll: statusCode is required")
	}
	return &p, nil
}

// Code returns the 3 or 4 digits a printer status code starts with
// ("410 Out of paper" is 410), or 0 when it starts with none.
//
// A bare "OK" is 200: Star's protocol guide words the confirmation as the
// code "set to OK" on one page and "200 OK" on others, and printers and
// middleware send either.
func Code(statusCode string) int {
	s := strings.TrimSpace(statusCode)
	if strings.EqualFold(s, "OK") {
		return 200
	}
	end := 0
	for end < len(s) && end < 4 && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end < 3 {
		return 0
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

// State maps a printer status code to the printer's state: 2xx is online
// (21x with a paper-low warning), 41x paper end, 42x cover open, other
// 4xx (a printer error) offline. Codes that say nothing of the printer
// (5xx client errors, garbage) are unknown.
func State(statusCode string) PrinterStatus {
	c := Code(statusCode)
	if c >= 1000 {
		c /= 10 // a 4-digit code keeps the pattern of its first three
	}
	switch {
	case c >= 200 && c < 300:
		return PrinterStatus{State: storeprint.PrinterReady, PaperNearEnd: c/10 == 21}
	case c >= 410 && c < 420:
		return PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}
	case c >= 420 && c < 430:
		return PrinterStatus{State: storeprint.PrinterCoverOpen}
	case c >= 400 && c < 500:
		return PrinterStatus{State: storeprint.PrinterOffline}
	}
	return PrinterStatus{State: storeprint.PrinterUnknown}
}

// PrinterStatus is a printer's state as a status code tells it.
type PrinterStatus struct {
	State        storeprint.PrinterState
	PaperNearEnd bool
}

// Outcome is what the code of a print job confirmation says.
type Outcome int

const (
	// Printed: 2xx, the printer printed the job.
	Printed Outcome = iota + 1
	// NotPrinted: 5xx, the printer could not use the job (media type,
	// decoding, download timeout, too large): nothing of it printed.
	NotPrinted
	// Failed: anything else (a 4xx printer error while printing, a code
	// it does not know): part of it may be on paper.
	Failed
)

// Result classifies the code of a print job confirmation.
func Result(code string) (Outcome, storeprint.PrinterState) {
	c := Code(code)
	if c >= 1000 {
		c /= 10
	}
	switch {
	case c >= 200 && c < 300:
		return Printed, storeprint.PrinterReady
	case c >= 500 && c < 600:
		return NotPrinted, storeprint.PrinterReady
	}
	st := State(code).State
	if st == storeprint.PrinterUnknown {
		st = ""
	}
	return Failed, st
}

// ParseMAC returns a MAC address in the form CloudPRNT printers send it:
// lower case hex octets separated by colons.
func ParseMAC(s string) (string, error) {
	hw, err := net.ParseMAC(strings.TrimSpace(s))
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("%q is not a MAC address like 00:11:62:1d:9a:b7", s)
	}
	return hw.String(), nil
}

// Errors a Queue returns; Handler answers each with its status.
var (
	ErrUnknownPrinter = errors.New("no printer with this MAC address")               // 401, as ErrUnauthorized
	ErrUnauthorized   = errors.New("the printer's credentials are missing or wrong") // 401
	ErrNoJob          = errors.New("no print job for this printer")                  // 404
	ErrMediaType      = errors.New("the job is not available in that media type")    // 415
)

// Queue finds the printer a request is from.
type Queue interface {
	// Printer returns the printer with the MAC address mac, checking the
	// request's credentials (HTTP Basic auth). An unknown MAC is
	// ErrUnknownPrinter; missing or wrong credentials ErrUnauthorized.
	Printer(ctx context.Context, r *http.Request, mac string) (Printer, error)
}

// Printer is one printer's side of the protocol.
type Printer interface {
	// Poll records the poll (the printer's status, that it is there) and
	// returns the job to offer it, or nil.
	Poll(ctx context.Context, p *Poll) (*Offer, error)
	// Fetch hands out the job with token in mediaType: the bytes to
	// answer with, and a function to call once they are written (with
	// the write's error). No job with that token is ErrNoJob.
	Fetch(ctx context.Context, token, mediaType string) (body []byte, written func(error), err error)
	// Confirm takes the printer's confirmation of the job with token:
	// code "200 OK" when it printed, another status code when not.
	Confirm(ctx context.Context, token, code string) error
}

// Offer is a job waiting for a printer.
type Offer struct {
	Token      string
	MediaTypes []string
}

// Handler serves the CloudPRNT URL over q. Errors are JSON {"error"} with
// the status Star's guide gives: 400 a request it cannot read, 401 wrong
// credentials or an unknown MAC address (the same answer: it does not
// tell which MAC addresses are configured), 404 no such job, 415 a media
// type the job is not in, and 429 past the failed logins allowed.
func Handler(q Queue, log *slog.Logger) http.Handler {
	return HandlerWith(q, HandlerOptions{Logger: log})
}

// HandlerOptions configure HandlerWith; zero values are the defaults.
type HandlerOptions struct {
	Logger *slog.Logger     // nil: no logging
	Now    func() time.Time // the failed logins' clock; nil: time.Now
}

// HandlerWith is Handler with options.
func HandlerWith(q Queue, o HandlerOptions) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &handler{q: q, log: o.Logger, fails: authlimit.New(FailBurst, FailEvery, o.Now)}
}

type handler struct {
	q     Queue
	log   *slog.Logger
	fails *authlimit.Limiter // by client address and MAC address
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.poll(w, r)
	case http.MethodGet:
		h.fetch(w, r)
	case http.MethodDelete:
		h.confirm(w, r)
	default:
		w.Header().Set("Allow", "POST, GET, DELETE")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed; CloudPRNT uses POST, GET and DELETE", r.Method))
	}
}

func (h *handler) printer(w http.ResponseWriter, r *http.Request, mac string) Printer {
	m, err := ParseMAC(mac)
	if err != nil {
		writeError(w, http.StatusBadRequest, "mac: "+err.Error())
		return nil
	}
	addr := authlimit.Addr(r)
	key := addr + " " + m
	if d := h.fails.Wait(key); d > 0 {
		h.log.Warn("cloudprnt login refused: too many failed logins", "addr", addr, "mac", m, "method", r.Method, "rate_limited", true)
		w.Header().Set("Retry-After", authlimit.RetryAfter(d))
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed CloudPRNT logins from %s for %s; try again in %ss", addr, m, authlimit.RetryAfter(d)))
		return nil
	}
	p, err := h.q.Printer(r.Context(), r, m)
	switch {
	case err == nil:
		return p
	case errors.Is(err, ErrUnknownPrinter), errors.Is(err, ErrUnauthorized):
		limited := h.fails.Fail(key)
		_, _, sent := r.BasicAuth()
		h.log.Warn("cloudprnt login refused", "addr", addr, "mac", m, "method", r.Method,
			"unknown_mac", errors.Is(err, ErrUnknownPrinter), "credentials_sent", sent, "rate_limited", limited)
		w.Header().Set("WWW-Authenticate", `Basic realm="storeprint CloudPRNT"`)
		writeError(w, http.StatusUnauthorized, "the printer's MAC address or its CloudPRNT user and password are wrong")
	default:
		h.internal(w, err)
	}
	return nil
}

func (h *handler) poll(w http.ResponseWriter, r *http.Request) {
	poll, err := ParsePoll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if poll.PrinterMAC == "" {
		poll.PrinterMAC = r.URL.Query().Get("mac")
	}
	p := h.printer(w, r, poll.PrinterMAC)
	if p == nil {
		return
	}
	o, err := p.Poll(r.Context(), poll)
	if err != nil {
		h.internal(w, err)
		return
	}
	reply := PollReply{}
	if o != nil {
		reply = PollReply{JobReady: true, MediaTypes: o.MediaTypes, JobToken: o.Token}
	}
	writeJSON(w, http.StatusOK, reply)
}

func (h *handler) fetch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := h.printer(w, r, q.Get("mac"))
	if p == nil {
		return
	}
	mt := q.Get("type")
	if mt == "" {
		writeError(w, http.StatusBadRequest, "type: the media type is required")
		return
	}
	body, written, err := p.Fetch(r.Context(), q.Get("token"), mt)
	switch {
	case errors.Is(err, ErrNoJob):
		writeError(w, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, ErrMediaType):
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("%v: %s", err, mt))
		return
	case err != nil:
		h.internal(w, err)
		return
	}
	w.Header().Set("Content-Type", mt)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err = w.Write(body)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	written(err)
}

func (h *handler) confirm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := h.printer(w, r, q.Get("mac"))
	if p == nil {
		return
	}
	code := q.Get("code")
	if Code(code) == 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("code: %q is not a printer status code like \"200 OK\"", code))
		return
	}
	if err := p.Confirm(r.Context(), q.Get("token"), code); err != nil {
		if errors.Is(err, ErrNoJob) {
			// Confirmed already, or given up on: nothing is left to do.
			writeJSON(w, http.StatusOK, struct{}{})
			return
		}
		h.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (h *handler) internal(w http.ResponseWriter, err error) {
	h.log.Error("cloudprnt", "err", err)
	writeError(w, http.StatusInternalServerError, "internal error")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a printer that went away: nobody to tell
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
