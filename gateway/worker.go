package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// worker drives one printer's queue: oldest accepted first, one ticket in
// flight at a time.
type worker struct {
	g       *Gateway
	id      string
	printer Printer
	cfg     *PrinterConfig
	wake    chan struct{}

	lastSweep  time.Time
	lastStatus time.Time
}

// Failpoint names, in the order an attempt reaches them.
const (
	FailpointAfterPrepared   = "after-prepared"   // the prepared receipt is durable, no byte sent yet
	FailpointBeforeSubmitted = "before-submitted" // the bytes are out, submitted not stored
	FailpointBeforePrinted   = "before-printed"   // the printer confirmed, printed not stored
)

func (w *worker) failpoint(name string) {
	if fp := w.g.opts.Failpoint; fp != nil {
		fp(name)
	}
}

func (w *worker) run(ctx context.Context) {
	g := w.g
	for ctx.Err() == nil {
		if err := g.store.Health(); err != nil {
			// Storage trouble: take no ticket to the printer whose outcome
			// could not be recorded. The store probes and recovers.
			w.pause(ctx, g.opts.StatusPoll)
			continue
		}
		now := g.now()
		if now.Sub(w.lastSweep) >= g.opts.SweepEvery {
			w.lastSweep = now
			if err := w.sweepStale(ctx); err != nil {
				g.log.Error("stale sweep", "printer", w.id, "err", err)
			}
			w.maybeFailback(ctx)
		}
		head, err := w.head(ctx)
		if err != nil {
			g.log.Error("read queue", "printer", w.id, "err", err)
			w.pause(ctx, g.opts.StatusPoll)
			continue
		}
		if head == nil {
			w.idle(ctx)
			continue
		}
		if head.Status == storeprint.StatusPrinting {
			// An attempt this process no longer drives (see Recover).
			if err := g.recoverTask(ctx, head.TaskNo); err != nil {
				g.log.Error("recover attempt", "task_no", head.TaskNo, "err", err)
				w.pause(ctx, g.opts.StatusPoll)
			}
			continue
		}
		if st := g.PrinterState(w.id); st == storeprint.PrinterPaperEnd || st == storeprint.PrinterCoverOpen {
			// The printer says a person must act: send nothing (it is not
			// a failure) and ask again soon.
			w.pollStatus(ctx)
			if g.PrinterState(w.id) != storeprint.PrinterReady {
				w.checkFailover(ctx)
				w.pause(ctx, g.opts.StatusPoll)
				continue
			}
		}
		if now.Before(head.NextAt) {
			// Back off (after a failure, or briefly after "not ready"), but
			// retry at once when a printer in trouble answers ready again.
			prev := g.PrinterState(w.id)
			w.pause(ctx, min(head.NextAt.Sub(now), g.opts.StatusPoll))
			if g.now().Before(head.NextAt) {
				if st := w.pollStatus(ctx); st != storeprint.PrinterReady || prev == storeprint.PrinterReady {
					w.checkFailover(ctx)
					continue
				}
			}
		}
		w.attempt(ctx, head)
	}
}

// pause waits for d, a wake-up or the end of ctx.
func (w *worker) pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-t.C:
	}
}

// idle waits for work, polling the printer slowly (or at the trouble rate
// while it is failed over, to learn when it is healthy again).
func (w *worker) idle(ctx context.Context) {
	g := w.g
	poll := g.opts.IdlePoll
	if g.PrinterState(w.id) != storeprint.PrinterReady || w.failedOver() {
		poll = g.opts.StatusPoll
	}
	if g.now().Sub(w.lastStatus) >= poll {
		w.pollStatus(ctx)
	}
	w.pause(ctx, min(poll, g.opts.SweepEvery))
}

func (w *worker) failedOver() bool {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	f := w.g.failover[w.id]
	return f != nil && f.Active
}

func (w *worker) head(ctx context.Context) (*Task, error) {
	var t *Task
	err := w.g.store.View(ctx, func(tx ReadTx) error {
		var err error
		t, err = tx.Head(w.id)
		return err
	})
	return t, err
}

// pollStatus reads the printer's status and records it.
func (w *worker) pollStatus(ctx context.Context) storeprint.PrinterState {
	sctx, cancel := context.WithTimeout(ctx, w.cfg.ConnectTimeout.Duration+3*time.Second)
	defer cancel()
	st, err := w.printer.Status(sctx)
	w.lastStatus = w.g.now()
	if err != nil {
		if ctx.Err() != nil {
			return w.g.PrinterState(w.id)
		}
		w.setStatus(PrinterStatus{State: storeprint.PrinterUnknown}, err.Error())
		return storeprint.PrinterUnknown
	}
	w.setStatus(st, "")
	return st.State
}

func (w *worker) setStatus(st PrinterStatus, lastErr string) {
	g := w.g
	now := g.now()
	g.mu.Lock()
	s := g.status[w.id]
	changed := s.State != st.State
	s.State, s.PaperNearEnd, s.CheckedAt = st.State, st.PaperNearEnd, now
	if lastErr != "" {
		s.LastError = lastErr
	}
	if st.State == storeprint.PrinterReady {
		if s.HealthySince.IsZero() {
			s.HealthySince = now
		}
	} else {
		s.HealthySince = time.Time{}
		if s.FailingSince.IsZero() {
			s.FailingSince = now
		}
	}
	g.mu.Unlock()
	if changed {
		g.changes.signal()
		g.log.Info("printer status", "printer", w.id, "status", st.State)
		// A printer that recovers releases its waiting tickets at once.
		if st.State == storeprint.PrinterReady {
			g.wake(w.id)
		}
	}
}

// noteOutcome keeps the printer's failure streak for failover.
func (w *worker) noteOutcome(ok bool, countAttempt bool) {
	g := w.g
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.status[w.id]
	if ok {
		s.Streak, s.FailingSince, s.LastError = 0, time.Time{}, ""
		return
	}
	if countAttempt {
		s.Streak++
	}
	if s.FailingSince.IsZero() {
		s.FailingSince = g.now()
	}
}

// attempt leases the head task, prints it and records the outcome.
func (w *worker) attempt(ctx context.Context, head *Task) {
	g := w.g
	lease, err := g.lease(ctx, w, head.TaskNo)
	if err != nil {
		if !errors.Is(err, errFenced) && ctx.Err() == nil {
			g.log.Error("lease task", "task_no", head.TaskNo, "err", err)
			w.pause(ctx, g.opts.StatusPoll)
		}
		return
	}
	if lease == nil {
		return // flagged stale, or no longer due
	}
	job := &PrintJob{
		Ticket:    lease.ticket,
		ProcessID: lease.processID,
		Prepare: func(pctx context.Context, payload []byte) error {
			if err := g.prepare(pctx, lease, payload); err != nil {
				return err
			}
			w.failpoint(FailpointAfterPrepared)
			return nil
		},
		Submitted: func(sctx context.Context, jobID string) {
			w.failpoint(FailpointBeforeSubmitted)
			if err := g.submitted(sctx, lease, jobID); err != nil {
				g.log.Error("store submitted receipt", "task_no", lease.taskNo, "attempt", lease.attempt, "err", err)
			}
		},
	}
	// The attempt must end within its lease. A driver that overruns it is
	// abandoned: the attempt is settled from its receipt as after a crash
	// (see Recover), and the driver's late result is fenced out.
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), lease.expires.Add(-g.opts.LeaseMargin/2))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.printer.Print(pctx, job) }()
	var perr error
	select {
	case perr = <-done:
	case <-time.After(time.Until(lease.expires) + g.opts.LeaseMargin/2):
		g.log.Error("printer driver overran its lease; attempt abandoned", "printer", w.id, "task_no", lease.taskNo, "attempt", lease.attempt)
		w.noteOutcome(false, true)
		g.obs.Attempt(w.id, "abandoned")
		if err := g.recoverTask(context.WithoutCancel(ctx), lease.taskNo); err != nil {
			g.log.Error("settle abandoned attempt", "task_no", lease.taskNo, "err", err)
		}
		return
	}
	if perr == nil {
		w.failpoint(FailpointBeforePrinted)
	}
	w.finish(ctx, lease, perr)
}

// finish records an attempt's outcome.
func (w *worker) finish(ctx context.Context, lease *lease, perr error) {
	g := w.g
	// Recording must not be cut short by shutdown: the outcome is known now
	// and would be uncertain after a restart.
	ctx = context.WithoutCancel(ctx)
	switch {
	case perr == nil:
		w.noteOutcome(true, false)
		w.setStatus(PrinterStatus{State: storeprint.PrinterReady}, "")
		g.obs.Attempt(w.id, "printed")
		if err := g.complete(ctx, lease); err != nil {
			g.log.Error("store printed", "task_no", lease.taskNo, "err", err)
		}
		return
	case errors.Is(perr, errFenced):
		g.obs.Attempt(w.id, "fenced")
		if err := g.release(ctx, lease, perr, false); err != nil && !errors.Is(err, errFenced) {
			g.log.Error("release fenced attempt", "task_no", lease.taskNo, "err", err)
		}
		return
	}
	var pe *PrintError
	if !errors.As(perr, &pe) {
		pe = &PrintError{Outcome: PrintUncertain, Err: perr}
	}
	g.obs.Attempt(w.id, pe.Outcome.String())
	if pe.State != "" {
		w.setStatus(PrinterStatus{State: pe.State}, perr.Error())
	} else if pe.Outcome == PrintNotSent {
		w.setStatus(PrinterStatus{State: storeprint.PrinterOffline}, perr.Error())
	}
	var err error
	switch pe.Outcome {
	case PrintNotReady:
		w.noteOutcome(false, false)
		err = g.release(ctx, lease, perr, false)
	case PrintNotSent:
		w.noteOutcome(false, true)
		g.obs.Retry(w.id)
		err = g.release(ctx, lease, perr, true)
	default:
		w.noteOutcome(false, true)
		err = g.uncertain(ctx, lease, perr)
	}
	if err != nil && !errors.Is(err, errFenced) {
		g.log.Error("store attempt outcome", "task_no", lease.taskNo, "err", err)
	}
	w.checkFailover(ctx)
}

// lease is one attempt's claim on a task.
type lease struct {
	taskNo    string
	printerID string
	attempt   int
	token     string
	expires   time.Time
	processID string
	reprint   bool
	backup    string
	ticket    Ticket
	policy    string // on_uncertain of the printer
}

// lease starts a new attempt of a due task: the attempt number grows by one
// and a fresh token is issued. A task past its station's stale_after is
// flagged instead and nil is returned.
func (g *Gateway) lease(ctx context.Context, w *worker, taskNo string) (*lease, error) {
	var l *lease
	now := g.now()
	err := g.store.Update(ctx, func(tx Tx) error {
		l = nil
		t, err := tx.Task(taskNo)
		if err != nil {
			return err
		}
		if t.PrinterID != w.id || (t.Status != storeprint.StatusQueued && t.Status != storeprint.StatusRetryWait) {
			return errFenced
		}
		if g.isStale(t, now) {
			return g.flagStale(tx, t, now)
		}
		if now.Before(t.NextAt) && g.PrinterState(w.id) != storeprint.PrinterReady {
			return nil
		}
		t.Attempt++
		t.Status = storeprint.StatusPrinting
		t.LeaseToken = newToken()
		t.LeaseExpires = now.Add(w.cfg.ConnectTimeout.Duration + w.cfg.ConfirmTimeout.Duration + g.opts.LeaseMargin)
		if err := tx.PutTask(t); err != nil {
			return err
		}
		l = &lease{
			taskNo: t.TaskNo, printerID: w.id, attempt: t.Attempt, token: t.LeaseToken,
			expires: t.LeaseExpires, processID: newProcessID(), reprint: t.Reprint,
			backup: t.BackupFrom, policy: w.cfg.OnUncertain,
			ticket: Ticket{
				StoreID: g.cfg.StoreID, Station: t.Station, OrderID: t.OrderID, Table: t.Table,
				Note: t.Note, Items: t.Items, AcceptedAt: t.CreatedAt, TaskNo: t.TaskNo,
				Reprint: t.Reprint, BackupFrom: t.BackupFrom, CopyOf: t.CopyOf,
			},
		}
		return nil
	})
	return l, err
}

// fence loads the task and checks that the lease still holds it: same
// attempt, same token and, when checkExpiry, a lease not yet expired.
func (g *Gateway) fence(tx ReadTx, l *lease, checkExpiry bool) (*Task, error) {
	t, err := tx.Task(l.taskNo)
	if err != nil {
		return nil, err
	}
	if t.Attempt != l.attempt || t.LeaseToken != l.token {
		return t, fmt.Errorf("%w: attempt %d is current, not %d", errFenced, t.Attempt, l.attempt)
	}
	if t.Status != storeprint.StatusPrinting {
		return t, fmt.Errorf("%w: task is %s", errFenced, t.Status)
	}
	if checkExpiry && !g.now().Before(t.LeaseExpires) {
		return t, fmt.Errorf("%w: lease of attempt %d expired", errFenced, l.attempt)
	}
	return t, nil
}

// prepare is the final fence right before the first byte goes to the
// printer, and writes the prepared receipt durably in the same transaction.
func (g *Gateway) prepare(ctx context.Context, l *lease, payload []byte) error {
	sum := sha256.Sum256(payload)
	now := g.now()
	return g.store.Update(ctx, func(tx Tx) error {
		t, err := g.fence(tx, l, true)
		if err != nil {
			return err
		}
		if o, err := tx.Order(t.OrderID); err == nil && o.Voided {
			return fmt.Errorf("%w: order %s was voided", errFenced, t.OrderID)
		} else if err != nil && !isNotFound(err) {
			return err
		}
		if p, _ := g.route(t.Station); t.Station != "" && p != t.PrinterID {
			return fmt.Errorf("%w: station %s now prints on %s", errFenced, t.Station, p)
		}
		if _, err := tx.Receipt(l.taskNo, l.attempt); err == nil {
			return fmt.Errorf("%w: attempt %d already has a receipt", errFenced, l.attempt)
		} else if !isNotFound(err) {
			return err
		}
		return tx.PutReceipt(&Receipt{
			TaskNo: l.taskNo, Attempt: l.attempt, State: storeprint.ReceiptPrepared, PrinterID: l.printerID,
			PayloadSHA256: hex.EncodeToString(sum[:]), ProcessID: l.processID,
			Reprint: l.reprint, BackupFrom: l.backup, PreparedAt: now,
		})
	})
}

// submitted records that the bytes are out.
func (g *Gateway) submitted(ctx context.Context, l *lease, jobID string) error {
	now := g.now()
	return g.store.Update(ctx, func(tx Tx) error {
		r, err := tx.Receipt(l.taskNo, l.attempt)
		if err != nil {
			return err
		}
		if r.State != storeprint.ReceiptPrepared {
			return nil
		}
		r.State, r.SubmittedAt, r.JobID = storeprint.ReceiptSubmitted, &now, jobID
		return tx.PutReceipt(r)
	})
}

// complete records the printer's confirmation: the receipt becomes printed
// and, if the attempt is still current, the task done. A confirmation of a
// superseded attempt is kept in its receipt but changes no task state.
func (g *Gateway) complete(ctx context.Context, l *lease) error {
	now := g.now()
	var printedAfter time.Duration
	var printerID string
	err := g.store.Update(ctx, func(tx Tx) error {
		r, err := tx.Receipt(l.taskNo, l.attempt)
		if err != nil {
			return err
		}
		r.State, r.PrintedAt = storeprint.ReceiptPrinted, &now
		if err := tx.PutReceipt(r); err != nil {
			return err
		}
		t, err := g.fence(tx, l, false)
		if err != nil {
			g.log.Warn("confirmation of a superseded attempt", "task_no", l.taskNo, "attempt", l.attempt, "err", err)
			return nil
		}
		t.Status, t.PrintedAt, t.LastError, t.Reason = storeprint.StatusDone, &now, "", ""
		t.LeaseToken, t.LeaseExpires, t.Reprint = "", time.Time{}, false
		printedAfter, printerID = now.Sub(t.CreatedAt), t.PrinterID
		return tx.PutTask(t)
	})
	if err == nil && printerID != "" {
		g.obs.Printed(printerID, printedAfter)
	}
	return err
}

// release ends an attempt that did not print. A failure counts towards
// max_retries (then the task fails); a printer that was not ready does not.
// The task goes back to its station's current printer.
func (g *Gateway) release(ctx context.Context, l *lease, cause error, failure bool) error {
	now := g.now()
	var wake string
	err := g.store.Update(ctx, func(tx Tx) error {
		wake = ""
		if r, err := tx.Receipt(l.taskNo, l.attempt); err == nil && r.State == storeprint.ReceiptPrepared {
			// The driver proved no byte left: the prepared receipt is closed.
			r.State, r.Error = storeprint.ReceiptNotSent, cause.Error()
			if err := tx.PutReceipt(r); err != nil {
				return err
			}
		}
		t, err := g.fence(tx, l, false)
		if err != nil {
			return err
		}
		t.LeaseToken, t.LeaseExpires = "", time.Time{}
		t.LastError = cause.Error()
		if !failure {
			// Not ready is no failure: ask again after a status poll.
			t.Status = storeprint.StatusQueued
			if t.Failures > 0 {
				t.Status = storeprint.StatusRetryWait
			}
			t.NextAt = now.Add(g.opts.StatusPoll)
		} else {
			t.Failures++
			if t.Failures > *g.cfg.MaxRetries {
				t.Status, t.Reason = storeprint.StatusFailed, storeprint.ReasonRetries
				g.log.Warn("task failed: retries used up", "task_no", t.TaskNo, "err", cause)
				return tx.PutTask(t)
			}
			t.Status = storeprint.StatusRetryWait
			b := g.opts.Backoff
			t.NextAt = now.Add(jitter(b[min(t.Failures, len(b))-1]))
		}
		wake = g.reroute(t)
		return tx.PutTask(t)
	})
	if wake != "" {
		g.wake(wake)
	}
	return err
}

// uncertain ends an attempt whose bytes may have printed, following the
// printer's on_uncertain policy: hold flags it for a person; reprint queues
// another attempt whose ticket says REPRINT (and flags it once retries are
// used up).
func (g *Gateway) uncertain(ctx context.Context, l *lease, cause error) error {
	var wake string
	err := g.store.Update(ctx, func(tx Tx) error {
		wake = ""
		if r, err := tx.Receipt(l.taskNo, l.attempt); err == nil {
			r.Error = cause.Error()
			if err := tx.PutReceipt(r); err != nil {
				return err
			}
		} else if !isNotFound(err) {
			return err
		}
		t, err := g.fence(tx, l, false)
		if err != nil {
			return err
		}
		wake = g.applyUncertain(t, l.policy, cause.Error())
		return tx.PutTask(t)
	})
	if wake != "" {
		g.wake(wake)
	}
	return err
}

// applyUncertain sets an uncertain attempt's task state per policy and
// returns the printer to wake, if any.
func (g *Gateway) applyUncertain(t *Task, policy, cause string) string {
	t.LeaseToken, t.LeaseExpires = "", time.Time{}
	t.LastError = cause
	t.Failures++
	if policy == "reprint" && t.Failures <= *g.cfg.MaxRetries {
		t.Status, t.Reprint = storeprint.StatusRetryWait, true
		b := g.opts.Backoff
		t.NextAt = g.now().Add(jitter(b[min(t.Failures, len(b))-1]))
		g.log.Warn("uncertain outcome: reprinting with a REPRINT line", "task_no", t.TaskNo, "err", cause)
		return g.reroute(t)
	}
	t.Status, t.Reason = storeprint.StatusAttention, storeprint.ReasonUncertain
	g.log.Warn("uncertain outcome: needs a person", "task_no", t.TaskNo, "err", cause)
	return ""
}

// reroute points a waiting task at its station's current printer and
// returns that printer if it changed.
func (g *Gateway) reroute(t *Task) string {
	p, from := g.route(t.Station)
	if p == "" || p == t.PrinterID {
		return ""
	}
	t.PrinterID, t.BackupFrom = p, from
	return p
}

func (g *Gateway) staleAfter(station string) time.Duration {
	if st := g.stations[station]; st != nil {
		return st.StaleAfter.Duration
	}
	return DefaultStaleAfter
}

func (g *Gateway) isStale(t *Task, now time.Time) bool {
	return !t.StaleOK && now.Sub(t.CreatedAt) > g.staleAfter(t.Station)
}

func (g *Gateway) flagStale(tx Tx, t *Task, now time.Time) error {
	t.Status, t.Reason = storeprint.StatusAttention, storeprint.ReasonStale
	t.LastError = fmt.Sprintf("not printed within %s of acceptance", g.staleAfter(t.Station))
	g.log.Warn("stale ticket held back", "task_no", t.TaskNo, "age", now.Sub(t.CreatedAt).Round(time.Second))
	return tx.PutTask(t)
}

// staleScan bounds the waiting tasks one stale sweep reads: the oldest go
// stale first, and a sweep that flags them moves the queue on.
const staleScan = 1000

// sweepStale flags the printer's waiting tasks that went stale, so people
// see them before the printer comes back.
func (w *worker) sweepStale(ctx context.Context) error {
	g := w.g
	now := g.now()
	var any bool
	if err := g.store.View(ctx, func(tx ReadTx) error {
		open, err := tx.Open(w.id, staleScan)
		for _, t := range open {
			if t.Status != storeprint.StatusPrinting && g.isStale(t, now) {
				any = true
			}
		}
		return err
	}); err != nil || !any {
		return err
	}
	return g.store.Update(ctx, func(tx Tx) error {
		open, err := tx.Open(w.id, staleScan)
		if err != nil {
			return err
		}
		for _, t := range open {
			if t.Status != storeprint.StatusPrinting && g.isStale(t, now) {
				if err := g.flagStale(tx, t, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
