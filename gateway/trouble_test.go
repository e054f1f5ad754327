package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A printer that cuts every ticket off for 10 s while 10 orders a second
// come in is one problem, not a ticket each: at most 2 tickets are
// flagged, and every other ticket prints once after the printer recovers.
func TestGateway_TroubleCutsEveryTicket(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"hold", "reprint"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			cutsEveryTicket(t, newSteppedPolicy(t, policy))
		})
	}
}

func cutsEveryTicket(t *testing.T, s *stepped) {
	s.printer.cut = true
	var nos []string
	for i := 0; i < 100; i++ {
		nos = append(nos, s.post(t, fmt.Sprintf("c%d", i)))
		s.run(t)
		s.clock.Advance(100 * time.Millisecond)
	}
	s.printer.cut = false
	cutAttempts := s.printer.attempts
	for passed := time.Duration(0); passed < 2*time.Minute; {
		d := s.run(t)
		s.clock.Advance(d)
		passed += d
	}
	flagged, paper := 0, map[string]int{}
	for _, no := range s.printer.printed {
		paper[no]++
	}
	for _, no := range nos {
		task, err := s.g.Task(context.Background(), no)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case task.Status == storeprint.StatusAttention:
			flagged++
		case task.Status != storeprint.StatusDone:
			t.Errorf("%s: got %s (%s), want done or flagged", no, task.Status, task.LastError)
		case paper[no] != 1:
			t.Errorf("%s: printed %d times after the printer recovered, want once", no, paper[no])
		}
	}
	if flagged > 2 {
		t.Fatalf("got %d tickets flagged for a person, want at most 2", flagged)
	}
	if cutAttempts > 10 {
		t.Errorf("got %d attempts on a printer that cut every ticket for 10 s: it should be held, not hammered", cutAttempts)
	}
}

// A printer that reports offline for 5 minutes costs nothing while it
// waits: its ticket's attempt count does not move and nothing durable is
// written for it.
func TestGateway_OfflineCostsNothing(t *testing.T) {
	t.Parallel()
	s := newStepped(t)
	s.printer.state = storeprint.PrinterOffline
	no := s.post(t, "off-1")
	s.run(t)
	before, err := s.g.SyncState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for passed := time.Duration(0); passed < 5*time.Minute; {
		d := s.run(t)
		s.clock.Advance(d)
		passed += d
	}
	after, _ := s.g.SyncState(context.Background())
	task, _ := s.g.Task(context.Background(), no)
	if task.Attempt != 0 || task.Status != storeprint.StatusQueued {
		t.Fatalf("after 5 minutes offline: got %s attempt %d, want queued attempt 0", task.Status, task.Attempt)
	}
	if n := after.Last - before.Last; n > 2 {
		t.Fatalf("got %d outbox events during the outage, want at most 2", n)
	}
	s.printer.state = storeprint.PrinterReady
	if !s.within(t, 2*time.Second, no, storeprint.StatusDone) {
		t.Fatal("the ticket did not print within 2 s of the printer coming back")
	}
}

// A printer that answers ready but fails every ticket before a byte leaves
// (a flapping link): the ticket waits out the backoff and fails once its
// retries are used up.
func TestGateway_RetriesUsedUp(t *testing.T) {
	t.Parallel()
	s := newStepped(t)
	s.printer.refuse = true
	no := s.post(t, "ru-1")
	if !s.within(t, time.Hour, no, storeprint.StatusFailed) {
		t.Fatal("the ticket did not fail")
	}
	task, _ := s.g.Task(context.Background(), no)
	if task.Attempt != 6 || task.Reason != storeprint.ReasonRetries {
		t.Fatalf("got attempt %d reason %q, want failed after 6 attempts (5 retries)", task.Attempt, task.Reason)
	}
	if len(s.printer.printed) != 0 {
		t.Fatal("a ticket came out of a printer that refused every byte")
	}
}

var errRefused = errors.New("connection refused")

var _ gateway.Printer = (*scripted)(nil)
