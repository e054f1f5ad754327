package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/storeprint/storeprint"
)

// Printer is one physical printer reached through a transport driver. A
// Printer is used by one goroutine at a time.
type Printer interface {
	// Status reads the printer's status (DLE EOT). A printer that cannot be
	// reached reports storeprint.PrinterOffline with a nil error.
	Status(ctx context.Context) (storeprint.PrinterStatus, error)

	// Print renders and sends one ticket and waits, bounded, for the
	// printer's own confirmation. It returns nil only on that confirmation.
	// Any other result is a *PrintError saying whether the bytes may have
	// reached the printer.
	Print(ctx context.Context, job *PrintJob) error

	Close() error
}

// PrintJob is one attempt to print one ticket.
type PrintJob struct {
	Ticket    storeprint.Ticket
	Attempt   int    // the attempt's number (with Ticket.TaskNo: a job id a printer can keep)
	ProcessID string // four ASCII digits for the GS ( H confirmation request

	// Prepare is called after the printer reported ready and right before
	// the first byte is sent, with the exact bytes about to be sent. It is
	// the final fence and writes the prepared receipt; if it fails the
	// driver sends nothing and returns a PrintNotSent error wrapping it.
	Prepare func(ctx context.Context, payload []byte) error

	// Submitted is called once all bytes are out, before waiting for the
	// confirmation, with the spooler's job id where there is one.
	Submitted func(ctx context.Context, jobID string)

	// Confirms is set by the printer before the first byte goes out: how
	// this attempt is to be confirmed (process_id, transmit_status, status,
	// job_log, ...). A printed receipt keeps it as its confirmed_by.
	Confirms storeprint.Confirm
}

// ConfirmsReporter is a printer that says how it confirms its prints now
// (GET /v1/printers "confirms"). An empty answer means it does not know
// yet (confirm = "auto" before it was first reached).
type ConfirmsReporter interface {
	Confirms() storeprint.Confirm
}

// PrintOutcome classifies a print that did not end in a confirmation.
type PrintOutcome int

const (
	// PrintNotSent: no byte left for the printer; safe to retry.
	PrintNotSent PrintOutcome = iota + 1
	// PrintNotReady: the printer said it cannot print now (offline, paper
	// end, cover open); nothing was sent; wait for it, not a failure.
	PrintNotReady
	// PrintUncertain: bytes may have reached the printer and nothing
	// confirmed them; nobody knows whether paper came out.
	PrintUncertain
)

func (o PrintOutcome) String() string {
	switch o {
	case PrintNotSent:
		return "not_sent"
	case PrintNotReady:
		return "not_ready"
	case PrintUncertain:
		return "uncertain"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// PrintError is the result of a print that was not confirmed.
type PrintError struct {
	Outcome PrintOutcome
	State   storeprint.PrinterState // the printer's state when known (PrintNotReady always sets it)
	Err     error
}

func (e *PrintError) Error() string {
	s := "print " + e.Outcome.String()
	if e.State != "" && e.State != storeprint.PrinterReady {
		s += " (" + string(e.State) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *PrintError) Unwrap() error { return e.Err }

// Outcome returns the outcome of a print error. An error that is not a
// *PrintError is treated as uncertain: nothing proves the bytes stayed home.
func Outcome(err error) PrintOutcome {
	var pe *PrintError
	if errors.As(err, &pe) {
		return pe.Outcome
	}
	return PrintUncertain
}
