package winspool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

var _ gateway.Printer = (*Printer)(nil)

// Handle is a printer handle from OpenPrinter.
type Handle uintptr

// Spooler is the part of the Windows print spooler API (winspool.drv) the
// driver calls, one method per call. The Windows build implements it on
// winspool.drv; winspooltest has a fake.
type Spooler interface {
	OpenPrinter(name string) (Handle, error)
	ClosePrinter(h Handle) error
	// GetPrinter is GetPrinter level 2 (PRINTER_INFO_2), reduced to what
	// the driver reads.
	GetPrinter(h Handle) (PrinterInfo, error)
	// StartDocPrinter is StartDocPrinter level 1 (DOC_INFO_1); it returns
	// the new job's id.
	StartDocPrinter(h Handle, doc DocInfo) (jobID uint32, err error)
	StartPagePrinter(h Handle) error
	WritePrinter(h Handle, b []byte) (int, error)
	EndPagePrinter(h Handle) error
	EndDocPrinter(h Handle) error
	// GetJob is GetJob level 1 (JOB_INFO_1), reduced to what the driver
	// reads. A job no longer in the queue is an error wrapping
	// ErrJobNotFound.
	GetJob(h Handle, jobID uint32) (JobInfo, error)
	// SetJob with level 0 sends command (JobControlDelete) to a job.
	SetJob(h Handle, jobID uint32, command uint32) error
}

// DocInfo is DOC_INFO_1.
type DocInfo struct {
	DocName    string
	OutputFile string // empty: the printer's port
	Datatype   string // "RAW" for ESC/POS
}

// PrinterInfo is what the driver reads of PRINTER_INFO_2.
type PrinterInfo struct {
	Status     uint32 // PrinterStatus* bits
	Attributes uint32 // PrinterAttribute* bits
	Jobs       uint32 // jobs in the queue
}

// JobInfo is what the driver reads of JOB_INFO_1.
type JobInfo struct {
	Status     uint32 // JobStatus* bits
	StatusText string // pStatus: a message from the port monitor, if any
}

// ErrJobNotFound is GetJob's error for a job that is no longer in the
// queue: printed and removed (unless the queue keeps printed documents),
// or deleted.
var ErrJobNotFound = errors.New("job not in the spooler queue")

// PRINTER_INFO_2 Status bits the driver reads.
const (
	PrinterStatusPaused           = 0x00000001
	PrinterStatusError            = 0x00000002
	PrinterStatusPendingDeletion  = 0x00000004
	PrinterStatusPaperJam         = 0x00000008
	PrinterStatusPaperOut         = 0x00000010
	PrinterStatusPaperProblem     = 0x00000040
	PrinterStatusOffline          = 0x00000080
	PrinterStatusNotAvailable     = 0x00001000
	PrinterStatusUserIntervention = 0x00100000
	PrinterStatusDoorOpen         = 0x00400000
	PrinterStatusServerUnknown    = 0x00800000

	// PrinterAttributeWorkOffline is the queue's "Use printer offline".
	PrinterAttributeWorkOffline = 0x00000400
)

// JOB_INFO_1 Status bits.
const (
	JobStatusPaused           = 0x00000001
	JobStatusError            = 0x00000002
	JobStatusDeleting         = 0x00000004
	JobStatusSpooling         = 0x00000008
	JobStatusPrinting         = 0x00000010
	JobStatusOffline          = 0x00000020
	JobStatusPaperOut         = 0x00000040
	JobStatusPrinted          = 0x00000080
	JobStatusDeleted          = 0x00000100
	JobStatusBlockedDevQ      = 0x00000200
	JobStatusUserIntervention = 0x00000400
	JobStatusRestart          = 0x00000800
	JobStatusComplete         = 0x00001000
)

// JobControlDelete is SetJob's command to delete a job.
const JobControlDelete = 5

// Datatype is the datatype of every document the driver starts: the bytes
// go to the printer as they are.
const Datatype = "RAW"

// docName is the name of a ticket's document in the queue,
// "storeprint:<task_no>". It holds no whitespace on purpose: a spooler
// backed by CUPS passes it on as the job's document-name attribute (Wine's
// does), and Debian 12's cupsd (2.4.2-3+deb12u10) crashes building a
// job's options from any attribute value with whitespace in it.
func docName(taskNo string) string { return "storeprint:" + taskNo }

// Polling the job: first after pollFirst, then twice as long each time up
// to pollMax.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = 250 * time.Millisecond
)

var errClosed = errors.New("printer closed")

// ErrUnsupported is New's error on a system without the Windows print
// spooler.
var ErrUnsupported = errors.New(`driver "spooler" is only available on Windows`)

// Printer is a printer reached through a Windows print queue, cfg.Address
// naming the queue, printing through the confirmed-print pipeline
// (printerdrivers.Pipeline). It opens a printer handle per call and closes
// it before returning.
type Printer struct {
	*printerdrivers.Pipeline
}

// transport is the print spooler: the queue's status for readiness, a RAW
// document per ticket, the job followed with GetJob for the outcome.
type transport struct {
	cfg    gateway.PrinterConfig
	trust  bool // trust_spooler = true
	sp     Spooler
	closed atomic.Bool
}

func init() {
	printerdrivers.Register("spooler", func(pc gateway.PrinterConfig, env *printerdrivers.Env) (gateway.Printer, error) {
		p, err := New(pc, env.StoreID)
		if errors.Is(err, ErrUnsupported) {
			return nil, errors.New(`driver: "spooler" is only available on Windows`)
		}
		if err != nil {
			return nil, fmt.Errorf("driver: %w", err)
		}
		return p, nil
	})
}

// NewWithSpooler returns a driver for the queue cfg.Address on sp. New
// gives the system's spooler; tests give winspooltest's. storeID heads the
// tickets that do not name their store. Zero timeouts, encoding and width
// take the gateway's defaults.
func NewWithSpooler(sp Spooler, cfg gateway.PrinterConfig, storeID string) *Printer {
	cfg.Driver = "spooler"
	cfg.Options = optionsOf(cfg)
	cfg.SetDefaults()
	return &Printer{printerdrivers.New(&transport{cfg: cfg, trust: optionsOf(cfg).Trusts(), sp: sp}, cfg, storeID)}
}

var _ gateway.ConfirmsReporter = (*transport)(nil)

// Confirms is spooler with trust_spooler = true: Windows, not the
// printer, says the job is complete. Without it nothing confirms.
func (p *transport) Confirms() storeprint.Confirm {
	if p.trust {
		return storeprint.ConfirmSpooler
	}
	return ""
}

func (p *transport) Describe() string {
	return fmt.Sprintf("printer %s at spooler queue %q", p.cfg.ID, p.cfg.Address)
}

func (p *transport) Encode(_ *gateway.PrintJob, t storeprint.Ticket) ([]byte, error) {
	return escpos.Encode(t, p.cfg.Encoding, p.cfg.Width, nil)
}

// Open opens a printer handle (OpenPrinter) for the call.
func (p *transport) Open(ctx context.Context) (printerdrivers.Conn, error) {
	if p.closed.Load() {
		return nil, errClosed
	}
	h, err := p.sp.OpenPrinter(p.cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("open printer: %w", err)
	}
	return &conn{p: p, h: h}, nil
}

// Close makes further calls fail; the transport holds no handle between
// calls.
func (p *transport) Close() error {
	p.closed.Store(true)
	return nil
}

// conn is one call's printer handle:
//
//   - Status is GetPrinter level 2: a printer the queue reports offline,
//     out of paper or with its door open is not ready.
//   - Send is StartDocPrinter (RAW), StartPagePrinter, then, from the
//     first byte, WritePrinter, EndPagePrinter, EndDocPrinter; a job
//     started and given up on is deleted, so that it does not print long
//     after.
//   - Confirm polls GetJob. Printed or complete is the confirmation with
//     trust_spooler = true and uncertain without it (the spooler only knows
//     the data reached the device). A job in error, offline or out of
//     paper is deleted and uncertain; so are a deleted job, a job gone
//     from the queue without having been seen complete, and the confirm
//     timeout. A cancelled call leaves the job to the spooler.
type conn struct {
	p *transport
	h Handle
}

func (c *conn) Close() error { return c.p.sp.ClosePrinter(c.h) }

func (c *conn) Status(ctx context.Context) (storeprint.PrinterStatus, error) {
	if ctx.Err() != nil {
		return storeprint.PrinterStatus{}, context.Cause(ctx)
	}
	info, err := c.p.sp.GetPrinter(c.h)
	if err != nil {
		return storeprint.PrinterStatus{}, fmt.Errorf("get printer: %w", err)
	}
	return PrinterState(info), nil
}

func (c *conn) Send(ctx context.Context, job *gateway.PrintJob, payload []byte, firstByte func()) (string, error) {
	p, h := c.p, c.h
	jobID, err := p.sp.StartDocPrinter(h, DocInfo{DocName: docName(job.Ticket.TaskNo), Datatype: Datatype})
	if err != nil {
		return "", fmt.Errorf("start document: %w", err)
	}
	if err := p.sp.StartPagePrinter(h); err != nil {
		err = fmt.Errorf("job %d: start page: %w", jobID, err)
		return "", p.deleteJob(h, jobID, err)
	}
	// From the first byte on, nobody knows whether paper comes out: a
	// spooler may start printing a job while it is being spooled.
	firstByte()
	if err := p.send(h, payload); err != nil {
		err = fmt.Errorf("job %d: %w", jobID, err)
		return "", p.deleteJob(h, jobID, err)
	}
	return strconv.FormatUint(uint64(jobID), 10), nil
}

func (c *conn) Confirm(ctx context.Context, _ *gateway.PrintJob, jobID string) error {
	id, err := strconv.ParseUint(jobID, 10, 32)
	if err != nil {
		return fmt.Errorf("job id %q: %w", jobID, err)
	}
	return c.p.follow(ctx, c.h, uint32(id))
}

// send writes the document and ends it.
func (p *transport) send(h Handle, b []byte) error {
	for len(b) > 0 {
		n, err := p.sp.WritePrinter(h, b)
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if n <= 0 {
			return errors.New("write: the spooler took no bytes")
		}
		b = b[n:]
	}
	if err := p.sp.EndPagePrinter(h); err != nil {
		return fmt.Errorf("end page: %w", err)
	}
	if err := p.sp.EndDocPrinter(h); err != nil {
		return fmt.Errorf("end document: %w", err)
	}
	return nil
}

// follow polls job jobID until it is settled or ctx ends (the confirm
// timeout, or a cancellation).
func (p *transport) follow(ctx context.Context, h Handle, jobID uint32) error {
	timeout := p.cfg.ConfirmTimeout.Duration
	wait := pollFirst
	var last JobInfo
	for {
		info, err := p.sp.GetJob(h, jobID)
		switch {
		case errors.Is(err, ErrJobNotFound):
			return fmt.Errorf("job %d left the queue without the spooler reporting it printed or complete (last status %s); "+
				"turn on \"Keep printed documents\" for the queue so that completion can be read: %w", jobID, JobStatusText(last), err)
		case err != nil:
			return fmt.Errorf("job %d: get job: %w", jobID, err)
		}
		last = info
		switch state, trouble := JobState(info); state {
		case JobComplete:
			if p.trust {
				return nil
			}
			return printerdrivers.WithState(storeprint.PrinterReady, fmt.Errorf("the spooler reports job %d %s: the data reached the printer, "+
				"but the spooler cannot tell whether paper came out (trust_spooler = false)", jobID, JobStatusText(info)))
		case JobFailed:
			err := fmt.Errorf("job %d is stuck in the spooler: %s", jobID, JobStatusText(info))
			return printerdrivers.WithState(trouble, p.deleteJob(h, jobID, err))
		case JobDeleted:
			return fmt.Errorf("job %d was deleted in the spooler (%s)", jobID, JobStatusText(info))
		}
		poll := time.NewTimer(wait)
		select {
		case <-poll.C:
		case <-ctx.Done():
			poll.Stop()
			var te *printerdrivers.TimeoutError
			if errors.As(context.Cause(ctx), &te) {
				return fmt.Errorf("job %d not printed within %s (status %s): %w", jobID, timeout, JobStatusText(last), os.ErrDeadlineExceeded)
			}
			return fmt.Errorf("job %d (status %s): %w", jobID, JobStatusText(last), context.Cause(ctx))
		}
		wait = min(2*wait, pollMax)
	}
}

// deleteJob deletes a job given up on, so that it does not print long
// after, and returns cause with any error doing so.
func (p *transport) deleteJob(h Handle, jobID uint32, cause error) error {
	if err := p.sp.SetJob(h, jobID, JobControlDelete); err != nil && !errors.Is(err, ErrJobNotFound) {
		return fmt.Errorf("%w (and deleting the job failed: %w)", cause, err)
	}
	return fmt.Errorf("%w (job deleted)", cause)
}

// PrinterState maps a queue's printer status to the gateway's. When
// several conditions hold, the one a person must fix first wins, as in
// escpos.ParseStatus: door open, then paper out (which is paper near-end
// too), then anything that keeps the queue from printing (offline, error,
// jam, paused, not available, "Use printer offline").
func PrinterState(info PrinterInfo) storeprint.PrinterStatus {
	const stopped = PrinterStatusOffline | PrinterStatusError | PrinterStatusPaperJam | PrinterStatusPaperProblem |
		PrinterStatusPaused | PrinterStatusPendingDeletion | PrinterStatusNotAvailable |
		PrinterStatusUserIntervention | PrinterStatusServerUnknown
	switch {
	case info.Status&PrinterStatusDoorOpen != 0:
		return storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen}
	case info.Status&PrinterStatusPaperOut != 0:
		return storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}
	case info.Status&stopped != 0, info.Attributes&PrinterAttributeWorkOffline != 0:
		return storeprint.PrinterStatus{State: storeprint.PrinterOffline}
	}
	return storeprint.PrinterStatus{State: storeprint.PrinterReady}
}

// JobProgress is where a job stands, as JobState reads it.
type JobProgress int

const (
	// JobPending: spooling, waiting or printing; ask again.
	JobPending JobProgress = iota
	// JobComplete: printed or complete; the data reached the device.
	JobComplete
	// JobFailed: in error, offline, out of paper, blocked or waiting for
	// a person; it does not go on by itself.
	JobFailed
	// JobDeleted: deleted or being deleted.
	JobDeleted
)

// JobState reads a job's status. For a failed job, trouble is the
// printer state it points to (paper end or offline).
func JobState(info JobInfo) (progress JobProgress, trouble storeprint.PrinterState) {
	const failed = JobStatusError | JobStatusOffline | JobStatusPaperOut | JobStatusBlockedDevQ | JobStatusUserIntervention
	switch s := info.Status; {
	case s&(JobStatusDeleted|JobStatusDeleting) != 0:
		return JobDeleted, ""
	case s&failed != 0:
		if s&JobStatusPaperOut != 0 {
			return JobFailed, storeprint.PrinterPaperEnd
		}
		return JobFailed, storeprint.PrinterOffline
	case s&(JobStatusPrinted|JobStatusComplete) != 0:
		return JobComplete, ""
	}
	return JobPending, ""
}

var printerStatusNames = []struct {
	bit  uint32
	name string
}{
	{PrinterStatusPaused, "paused"},
	{PrinterStatusError, "error"},
	{PrinterStatusPendingDeletion, "pending deletion"},
	{PrinterStatusPaperJam, "paper jam"},
	{PrinterStatusPaperOut, "paper out"},
	{PrinterStatusPaperProblem, "paper problem"},
	{PrinterStatusOffline, "offline"},
	{PrinterStatusNotAvailable, "not available"},
	{PrinterStatusUserIntervention, "user intervention"},
	{PrinterStatusDoorOpen, "door open"},
	{PrinterStatusServerUnknown, "server unknown"},
}

var jobStatusNames = []struct {
	bit  uint32
	name string
}{
	{JobStatusPaused, "paused"},
	{JobStatusError, "error"},
	{JobStatusDeleting, "deleting"},
	{JobStatusSpooling, "spooling"},
	{JobStatusPrinting, "printing"},
	{JobStatusOffline, "offline"},
	{JobStatusPaperOut, "paper out"},
	{JobStatusPrinted, "printed"},
	{JobStatusDeleted, "deleted"},
	{JobStatusBlockedDevQ, "blocked"},
	{JobStatusUserIntervention, "user intervention"},
	{JobStatusRestart, "restart"},
	{JobStatusComplete, "complete"},
}

// PrinterStatusText names a queue's status bits, for messages.
func PrinterStatusText(info PrinterInfo) string {
	var names []string
	for _, n := range printerStatusNames {
		if info.Status&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	if info.Attributes&PrinterAttributeWorkOffline != 0 {
		names = append(names, `"use printer offline"`)
	}
	if len(names) == 0 {
		return fmt.Sprintf("%#x", info.Status)
	}
	return strings.Join(names, ", ")
}

// JobStatusText names a job's status bits and adds the port monitor's
// message, for messages.
func JobStatusText(info JobInfo) string {
	var names []string
	for _, n := range jobStatusNames {
		if info.Status&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	s := strings.Join(names, ", ")
	if s == "" {
		s = fmt.Sprintf("%#x", info.Status)
	}
	if info.StatusText != "" {
		s += fmt.Sprintf(" %q", info.StatusText)
	}
	return s
}
