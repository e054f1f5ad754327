package storeprint

import (
	"fmt"
	"slices"
	"strings"
)

// Status is a task's place in its lifecycle. Which status may follow which
// is the transition table, Transitions; docs/lifecycle.md draws it.
type Status string

const (
	StatusQueued    Status = "queued"             // waiting for its printer
	StatusPrinting  Status = "printing"           // an attempt holds the lease
	StatusRetryWait Status = "retry_wait"         // a failure known not to have printed; backing off
	StatusDone      Status = "done"               // the printer confirmed, or a person saw the paper
	StatusFailed    Status = "failed"             // retries used up: a person retries it
	StatusAttention Status = "attention_required" // nobody knows whether it printed, or held back
	StatusCancelled Status = "cancelled"          // its order was voided before it was sent
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{StatusQueued, StatusPrinting, StatusRetryWait, StatusDone, StatusFailed, StatusAttention, StatusCancelled}

// StatusNew stands for "no task yet" in the transition table: the status a
// task comes from when it is created.
const StatusNew Status = ""

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Open reports whether a task in this status still waits to be printed by
// its printer's queue.
func (s Status) Open() bool {
	return s == StatusQueued || s == StatusRetryWait || s == StatusPrinting
}

// Final reports whether no transition leaves s.
func (s Status) Final() bool { return s.Valid() && len(Transitions[s]) == 0 }

// StatusList is the statuses as text, for messages: "queued, printing, ...".
func StatusList() string { return join(Statuses) }

// Transition is one edge of the lifecycle: why a task may move From a
// status To another.
type Transition struct {
	From, To Status
	Why      string
}

// Transitions is the task lifecycle: for each status, the statuses a task
// may move to, and why. A change that keeps the status (a new route, a
// copy counted) is always allowed and not listed. The gateway checks every
// write against it, the cloud every version it is told of.
var Transitions = map[Status][]Transition{
	StatusNew: {
		{StatusNew, StatusQueued, "accepted (an order, a copy, a test page)"},
	},
	StatusQueued: {
		{StatusQueued, StatusPrinting, "an attempt takes the lease"},
		{StatusQueued, StatusAttention, "stale, or recovered after damage"},
		{StatusQueued, StatusCancelled, "order voided"},
		{StatusQueued, StatusDone, "the cloud knows it printed"},
	},
	StatusPrinting: {
		{StatusPrinting, StatusDone, "the printer confirmed"},
		{StatusPrinting, StatusQueued, "nothing was sent (not ready, or stopped before the first byte)"},
		{StatusPrinting, StatusRetryWait, "failed without printing, or reprint after an uncertain outcome"},
		{StatusPrinting, StatusFailed, "retries used up"},
		{StatusPrinting, StatusAttention, "may have printed"},
		{StatusPrinting, StatusCancelled, "order voided before the first byte"},
	},
	StatusRetryWait: {
		{StatusRetryWait, StatusPrinting, "the next attempt takes the lease"},
		{StatusRetryWait, StatusAttention, "stale, or recovered after damage"},
		{StatusRetryWait, StatusCancelled, "order voided"},
		{StatusRetryWait, StatusDone, "the cloud knows it printed"},
	},
	StatusFailed: {
		{StatusFailed, StatusQueued, "a person asks for a make-up print"},
		{StatusFailed, StatusCancelled, "order voided"},
		{StatusFailed, StatusDone, "the cloud knows it printed"},
	},
	StatusAttention: {
		{StatusAttention, StatusQueued, "a person asks for a make-up print"},
		{StatusAttention, StatusDone, "a person saw the paper, the printer's job log settles it, or the cloud knows it printed"},
		{StatusAttention, StatusCancelled, "order voided while held back (the cloud may tell the store after a restore)"},
	},
	StatusDone:      nil,
	StatusCancelled: nil,
}

// CanTransition reports whether a task may move from one status to
// another: a transition in the table, or a change that keeps the status.
func CanTransition(from, to Status) bool {
	if !to.Valid() || (from != StatusNew && !from.Valid()) {
		return false
	}
	if from == to {
		return true
	}
	for _, t := range Transitions[from] {
		if t.To == to {
			return true
		}
	}
	return false
}

// CheckTransition returns an error naming both statuses when the move is
// not in the table.
func CheckTransition(from, to Status) error {
	if CanTransition(from, to) {
		return nil
	}
	if from == StatusNew {
		return fmt.Errorf("a new task cannot start as %q", to)
	}
	return fmt.Errorf("a task cannot move from %q to %q", from, to)
}

func join[S ~string](list []S) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
