package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// The rule that keeps every queue moving:
//
//	A ticket that cannot print now for a reason about the ticket itself
//	leaves the head of its printer's queue: cancelled (its order was
//	voided), moved (its station prints elsewhere now), flagged (stale) or
//	rescheduled with backoff (its lease ran out before the first byte). It
//	is never leased again at once.
//
// Only the printer's own trouble (offline, paper end, cover open) holds a
// queue, and then the printer's status decides when it moves again. The
// checks are made at the final fence (mayPrint, called by prepare) and
// their outcome is settled in one place, settleFenced.

var errFenced = errors.New("fenced: the attempt is no longer current")

// fenceKind says why an attempt was fenced, and so what becomes of it.
type fenceKind int

const (
	superseded fenceKind = iota + 1 // another writer changed the task: nothing to settle
	expired                         // the lease ran out before the first byte: a failure, with backoff
	voided                          // the order was voided: the task is cancelled
	rerouted                        // the station prints on another printer now: the task moves there
)

// fenceError is an attempt refused at the fence.
type fenceError struct {
	kind fenceKind
	why  string
}

func (e *fenceError) Error() string { return "fenced: " + e.why }

func (e *fenceError) Is(target error) bool { return target == errFenced }

// mayPrint checks, at the final fence, what about the task itself forbids
// printing it now.
func (g *Gateway) mayPrint(tx ReadTx, t *Task) error {
	if err := g.checkNotVoided(tx, t); err != nil {
		return &fenceError{voided, storeprint.ErrorMessage(err)}
	}
	if p, _ := g.route(t.Station); t.Station != "" && p != t.PrinterID {
		return &fenceError{rerouted, fmt.Sprintf("station %s now prints on %s", t.Station, p)}
	}
	return nil
}

// checkNotVoided returns ECONFLICT naming the void when the task's order
// was voided: nothing of a voided order prints again, not even a make-up
// print or a copy.
func (g *Gateway) checkNotVoided(tx ReadTx, t *Task) error {
	if t.Source == storeprint.SourceTestPage {
		return nil
	}
	o, err := tx.Order(t.OrderID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.Voided {
		return storeprint.Errorf(storeprint.ECONFLICT, "order %s was voided: its tickets are not printed again", t.OrderID)
	}
	return nil
}

// settleFenced ends an attempt refused at the fence, by the rule above.
func (g *Gateway) settleFenced(ctx context.Context, l *lease, cause error) error {
	var fe *fenceError
	if !errors.As(cause, &fe) {
		fe = &fenceError{superseded, cause.Error()}
	}
	switch fe.kind {
	case expired:
		return g.release(ctx, l, cause, true)
	case rerouted:
		return g.release(ctx, l, cause, false)
	case voided:
		return g.store.Update(ctx, func(tx Tx) error {
			t, err := g.fence(tx, l, false)
			if err != nil {
				return err
			}
			t.Status, t.LeaseToken, t.LeaseExpires = storeprint.StatusCancelled, "", time.Time{}
			t.LastError = "order voided"
			g.log.Info("ticket of a voided order cancelled before printing", "task_no", t.TaskNo)
			return tx.PutTask(t)
		})
	}
	return nil // superseded: the task is someone else's now
}
