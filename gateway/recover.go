package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// Recover settles every attempt that a previous run of the gateway left
// open (tasks still `printing`), from the receipt of the task's current
// attempt. Each receipt state means:
//
//   - no receipt: the process stopped after leasing the task and before the
//     prepared receipt was durable. The driver writes no byte before that
//     receipt exists, so nothing was sent: the task goes back to its queue
//     (not counted as a failure).
//   - not_sent: the driver proved that no byte left (the connection never
//     opened); the task goes back to its queue.
//   - prepared: the process stopped between the durable prepared receipt
//     and the submitted one: the bytes may or may not have gone out. Nobody
//     knows whether paper came out: the printer's on_uncertain applies
//     (hold: attention_required; reprint: another attempt marked REPRINT).
//     Never a silent retry.
//   - submitted: the bytes went out and no confirmation was stored: as for
//     prepared, on_uncertain applies.
//   - printed, confirmed: the printer confirmed. The receipt and the task's
//     done state are written in one transaction, so this only arises from
//     data written by another release; the task is done.
//
// Before that, the printer of a prepared or submitted attempt that keeps
// a job log is asked what became of it (see settle.go): its answer, when
// it has one, settles the attempt instead of on_uncertain.
//
// Tasks in other states need nothing: queued and retry_wait tasks resume
// with their stored backoff, and done, failed, attention_required and
// cancelled tasks wait for a person. Printed receipts not yet confirmed by
// the cloud are replayed by the sync link.
func (g *Gateway) Recover(ctx context.Context) error {
	var open []*Task
	if err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		open, err = tx.ByStatus(storeprint.StatusPrinting, 0)
		return err
	}); err != nil {
		return err
	}
	silent := map[string]bool{} // printers that did not answer: not asked again
	for _, t := range open {
		if g.isDisplay(t.PrinterID) {
			continue // on a screen: it shows the ticket again (display.go)
		}
		// A printer that keeps a job log is asked first (settle.go).
		in := g.settleInterrupted(ctx, t.TaskNo, silent)
		if err := g.recoverTask(ctx, t.TaskNo, in); err != nil {
			return fmt.Errorf("task %s: %w", t.TaskNo, err)
		}
	}
	return nil
}

// recoverTask settles one task left in printing; see Recover. in is the
// printer's own answer about the attempt, when it was asked.
func (g *Gateway) recoverTask(ctx context.Context, taskNo string, in *interrupted) error {
	var wake string
	err := g.store.Update(ctx, func(tx Tx) error {
		wake = ""
		t, err := tx.Task(taskNo)
		if err != nil || t.Status != storeprint.StatusPrinting {
			return err
		}
		r, err := tx.Receipt(t.TaskNo, t.Attempt)
		if err != nil && !isNotFound(err) {
			return err
		}
		var state storeprint.ReceiptState
		if r != nil {
			state = r.State
		}
		switch state {
		case "", storeprint.ReceiptNotSent:
			g.log.Info("recovered attempt that sent nothing: back to the queue", "task_no", t.TaskNo, "attempt", t.Attempt)
			t.LeaseToken, t.LeaseExpires = "", time.Time{}
			t.Status = storeprint.StatusQueued
			if t.Failures > 0 {
				t.Status = storeprint.StatusRetryWait
			}
			wake = g.reroute(t)
			if wake == "" {
				wake = t.PrinterID
			}
		case storeprint.ReceiptPrinted, storeprint.ReceiptConfirmed:
			t.Status, t.PrintedAt, t.Reason, t.LastError = storeprint.StatusDone, r.PrintedAt, "", ""
			t.LeaseToken, t.LeaseExpires = "", time.Time{}
		default: // prepared, submitted
			policy := "hold"
			if pc := g.pcfg[t.PrinterID]; pc != nil {
				policy = pc.OnUncertain
			}
			cause := fmt.Sprintf("gateway stopped during attempt %d (receipt %s): paper may or may not have come out", t.Attempt, state)
			r.Error = cause
			if w, settled, err := in.apply(g, tx, t, r, cause); err != nil {
				return err
			} else if settled {
				wake = w
				break
			}
			if err := tx.PutReceipt(r); err != nil {
				return err
			}
			wake = g.applyUncertain(t, policy, cause, true)
		}
		return tx.PutTask(t)
	})
	if wake != "" {
		g.wake(wake)
	}
	return err
}
