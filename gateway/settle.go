package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// Settling uncertain attempts from the printer's own records.
//
// Some printers keep a log of the jobs they were sent (Epson's ePOS-Print
// spooler function). Before an uncertain outcome is applied (the
// connection was cut after the ticket went out, no confirmation came), or
// when start-up recovery finds an attempt left prepared or submitted, a
// printer that implements Settler is asked what became of the attempt.
// Its answer settles it without a person: printed makes the task done;
// never printed sends it back to its queue as a failure known not to have
// printed. When it cannot say, on_uncertain applies as for any printer.
// The receipt records how the attempt was settled (Receipt.Settled).

// Settler is a Printer that can tell afterwards whether an attempt
// printed.
type Settler interface {
	// Settle asks the printer what became of the attempt r records, until
	// it has an answer or ctx ends (a job still printing is asked again).
	// An outcome of SettledUnknown, or an error, means it cannot say.
	Settle(ctx context.Context, r *Receipt) (Settlement, error)
}

// SettleOutcome is what a printer says became of an attempt.
type SettleOutcome int

const (
	SettledUnknown    SettleOutcome = iota // it cannot say
	SettledPrinted                         // it printed the attempt's ticket
	SettledNotPrinted                      // the ticket never printed there
)

// Settlement is a printer's answer about one attempt.
type Settlement struct {
	Outcome SettleOutcome
	How     string             // in words, for the receipt: what the printer said
	By      storeprint.Confirm // for SettledPrinted: how the printer confirmed it (job_log)
}

// settleUncertain asks the worker's printer, if it is a Settler, what
// became of an attempt whose outcome is uncertain, and records the
// answer. It reports whether the attempt is settled; when not, the
// receipt says why and on_uncertain applies as before.
func (w *worker) settleUncertain(ctx context.Context, l *lease, cause error) bool {
	s, ok := w.printer.(Settler)
	if !ok {
		return false
	}
	g := w.g
	var r *Receipt
	if err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		r, err = tx.Receipt(l.taskNo, l.attempt)
		return err
	}); err != nil {
		return false // nothing prepared: nothing to ask about
	}
	w.io.Lock()
	v := g.askSettler(ctx, s, w.cfg, r)
	w.io.Unlock()
	if v.Outcome == SettledUnknown {
		if err := g.noteUnsettled(ctx, l.taskNo, l.attempt, v.How); err != nil {
			g.log.Error("store receipt", "task_no", l.taskNo, "attempt", l.attempt, "err", err)
		}
		return false
	}
	var printedAfter time.Duration
	var wake string
	err := g.store.Update(ctx, func(tx Tx) error {
		wake, printedAfter = "", 0
		r, err := tx.Receipt(l.taskNo, l.attempt)
		if err != nil {
			return err
		}
		t, err := g.fence(tx, l, false)
		if err != nil {
			return err
		}
		wake, printedAfter, err = g.applySettlement(tx, t, r, v, cause.Error())
		if err != nil {
			return err
		}
		return tx.PutTask(t)
	})
	if err != nil {
		g.log.Error("store settled attempt", "task_no", l.taskNo, "attempt", l.attempt, "err", err)
		return false
	}
	g.log.Info("uncertain attempt settled by the printer", "task_no", l.taskNo, "attempt", l.attempt, "how", v.How)
	if v.Outcome == SettledPrinted {
		w.noteOutcome(true, false)
		w.troubleOver()
		g.obs.Printed(w.id, printedAfter)
	} else {
		w.noteOutcome(false, true)
		g.obs.Retry(w.id)
	}
	if wake != "" {
		g.wake(wake)
	}
	w.checkFailover(ctx)
	return true
}

// askSettler asks s about r within the printer's connect and confirm
// timeouts. An error becomes an unknown outcome that says why.
func (g *Gateway) askSettler(ctx context.Context, s Settler, pc *PrinterConfig, r *Receipt) Settlement {
	v, _ := g.settle(ctx, s, pc, r)
	return v
}

// settle is askSettler that also returns the printer's error.
func (g *Gateway) settle(ctx context.Context, s Settler, pc *PrinterConfig, r *Receipt) (Settlement, error) {
	sctx, cancel := context.WithTimeout(ctx, pc.ConnectTimeout.Duration+pc.ConfirmTimeout.Duration)
	defer cancel()
	v, err := s.Settle(sctx, r)
	switch {
	case err != nil:
		return Settlement{How: "the printer could not say whether it printed: " + err.Error()}, err
	case v.Outcome == SettledUnknown && v.How == "":
		return Settlement{How: "the printer keeps no record of its jobs"}, nil
	}
	return v, nil
}

// noteUnsettled records on a receipt that the printer could not settle it.
func (g *Gateway) noteUnsettled(ctx context.Context, taskNo string, attempt int, how string) error {
	return g.store.Update(ctx, func(tx Tx) error {
		r, err := tx.Receipt(taskNo, attempt)
		if err != nil {
			return err
		}
		r.Settled = how + "; on_uncertain applies"
		return tx.PutReceipt(r)
	})
}

// applySettlement records a printer's answer on the receipt and the
// task, which must be the receipt's current attempt, and returns the
// printer to wake and, for a print, how long the ticket took to paper:
//
//   - printed: the receipt becomes printed and the task done, as on the
//     printer's confirmation;
//   - not printed: the receipt becomes not_sent and the task waits to be
//     tried again, a failure counting towards max_retries.
func (g *Gateway) applySettlement(tx Tx, t *Task, r *Receipt, v Settlement, cause string) (wake string, printedAfter time.Duration, err error) {
	now := g.now()
	r.Settled, r.Error = v.How, cause
	t.LeaseToken, t.LeaseExpires = "", time.Time{}
	if v.Outcome == SettledPrinted {
		r.State, r.PrintedAt, r.ConfirmedBy = storeprint.ReceiptPrinted, &now, v.By
		t.Status, t.PrintedAt, t.LastError, t.Reason, t.Reprint = storeprint.StatusDone, &now, "", "", false
		return "", g.times.age(t), tx.PutReceipt(r)
	}
	r.State = storeprint.ReceiptNotSent
	if err := tx.PutReceipt(r); err != nil {
		return "", 0, err
	}
	t.LastError = fmt.Sprintf("%s (%s)", cause, v.How)
	t.Failures++
	if t.Failures > *g.cfg.MaxRetries {
		t.Status, t.Reason = storeprint.StatusFailed, storeprint.ReasonRetries
		return "", 0, nil
	}
	t.Status = storeprint.StatusRetryWait
	t.NextAt = now.Add(g.backoff.Wait(t.Failures))
	wake = g.reroute(t)
	if wake == "" {
		wake = t.PrinterID
	}
	return wake, 0, nil
}

// settleInterrupted asks the printer of a task left printing by an
// earlier run, if it is a Settler, what became of the attempt its
// receipt records (prepared or submitted). It returns nil when there is
// nothing to ask or no printer to ask. A printer in silent, or that
// cannot answer now, is not asked (again): start-up does not wait on a
// printer that is off for every ticket it left open.
func (g *Gateway) settleInterrupted(ctx context.Context, taskNo string, silent map[string]bool) *interrupted {
	var t *Task
	var r *Receipt
	if err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		if t, err = tx.Task(taskNo); err != nil {
			return err
		}
		r, err = tx.Receipt(t.TaskNo, t.Attempt)
		return err
	}); err != nil {
		return nil
	}
	if r.State != storeprint.ReceiptPrepared && r.State != storeprint.ReceiptSubmitted {
		return nil
	}
	s, ok := g.printers[r.PrinterID].(Settler)
	pc := g.pcfg[r.PrinterID]
	if !ok || pc == nil {
		return nil
	}
	if silent[r.PrinterID] {
		return &interrupted{attempt: r.Attempt, v: Settlement{How: "the printer did not answer at start-up"}}
	}
	v, err := g.settle(ctx, s, pc, r)
	if err != nil {
		silent[r.PrinterID] = true
	}
	return &interrupted{attempt: r.Attempt, v: v}
}

// interrupted is a printer's answer about an attempt an earlier run left
// open.
type interrupted struct {
	attempt int
	v       Settlement
}

// apply settles the attempt from the printer's answer, if it had one and
// it is about t's current attempt, and reports whether it did. Otherwise
// it only notes on r (not stored yet) why the printer could not say.
func (in *interrupted) apply(g *Gateway, tx Tx, t *Task, r *Receipt, cause string) (wake string, settled bool, err error) {
	if in == nil || in.attempt != t.Attempt || r == nil {
		return "", false, nil
	}
	if in.v.Outcome == SettledUnknown {
		r.Settled = in.v.How + "; on_uncertain applies"
		return "", false, nil
	}
	if wake, _, err = g.applySettlement(tx, t, r, in.v, cause); err != nil {
		return "", false, err
	}
	g.log.Info("interrupted attempt settled by the printer", "task_no", t.TaskNo, "attempt", t.Attempt, "how", in.v.How)
	return wake, true, nil
}
