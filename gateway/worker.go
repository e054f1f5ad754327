package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	stdsync "sync"
	"sync/atomic"
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

	// io is held while the worker reads its printer's status or probes
	// it, and printing counts (raised under io) the tickets with the
	// driver: another worker looking for a ready backup reads the printer
	// only when it is free.
	io       stdsync.Mutex
	printing atomic.Int32

	swept      since // last stale sweep, on the monotonic clock
	lastStatus since // last status read
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
	for ctx.Err() == nil {
		if d := w.step(ctx); d > 0 {
			w.pause(ctx, d)
		}
	}
}

// step does one piece of the queue's work and returns how long to wait
// before the next one; 0 means go on at once.
func (w *worker) step(ctx context.Context) time.Duration {
	g := w.g
	poll := g.opts.StatusPoll
	if err := g.store.Health(); err != nil {
		// Storage trouble: take no ticket to the printer whose outcome
		// could not be recorded. The store probes and recovers.
		return poll
	}
	if ago, ok := w.swept.For(g.clock.Mono()); !ok || ago >= g.opts.SweepEvery {
		w.swept = since{at: g.clock.Mono(), set: true}
		if err := w.sweepStale(ctx); err != nil {
			g.log.Error("stale sweep", "printer_id", w.id, "err", err)
		}
		w.maybeFailback(ctx)
	}
	head, err := w.head(ctx)
	if err != nil {
		g.log.Error("read queue", "printer_id", w.id, "err", err)
		return poll
	}
	if head == nil {
		return w.idle(ctx)
	}
	if g.holding(head) {
		// A linked gateway first hears from the cloud whether it knows
		// newer states of the tickets carried over (learn.go).
		return poll
	}
	if head.Status == storeprint.StatusPrinting {
		// An attempt this process no longer drives (see Recover).
		if err := g.recoverTask(ctx, head.TaskNo, nil); err != nil {
			g.log.Error("recover attempt", "task_no", head.TaskNo, "err", err)
			return poll
		}
		return 0
	}
	recovered := false
	if g.PrinterState(w.id) != storeprint.PrinterReady {
		// Not read yet, or the printer says it cannot print (offline,
		// paper end, cover open): send nothing and ask again soon. A
		// printer in trouble costs nothing while it waits: no lease, no
		// attempt, nothing durable, nothing sent to the cloud.
		troubled := w.troubled()
		if w.pollStatus(ctx) != storeprint.PrinterReady {
			w.checkFailover(ctx)
			return poll
		}
		recovered = troubled // it answers ready again: retry at once
	}
	switch w.troubleState() {
	case inTrouble:
		// No ticket goes to a printer in trouble by itself: it fails over,
		// or holds its queue and probes without paper (see trouble.go).
		// What a person asks for (a test page, a make-up print, a copy)
		// goes through: its confirmation brings the printer back.
		w.checkFailover(ctx)
		asked, err := w.askedFor(ctx)
		if err != nil {
			g.log.Error("read queue", "printer_id", w.id, "err", err)
			return poll
		}
		if asked == nil {
			wait := w.probe(ctx)
			if w.noBackupReady() {
				wait = min(wait, poll) // look for a ready backup again soon
			}
			return wait
		}
		head = asked
	case suspect:
		// After an uncertain outcome the next ticket waits for the
		// cool-down and a clean status round trip.
		if wait := w.coolDown(); wait > 0 {
			w.checkFailover(ctx)
			return wait
		}
		if w.pollStatus(ctx) != storeprint.PrinterReady {
			return poll
		}
	}
	if wait := g.times.wait(head); wait > 0 && !recovered {
		// Back off after a failure; a printer that was in trouble and
		// answers ready again retries at once (above).
		return wait
	}
	w.attempt(ctx, head)
	return 0
}

// pause waits for d, a wake-up or the end of ctx.
func (w *worker) pause(ctx context.Context, d time.Duration) {
	t := w.g.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-t.C():
	}
}

// idle polls the printer slowly while its queue is empty (or at the
// trouble rate while it is failed over, to learn when it is healthy again)
// and returns how long to wait for work.
func (w *worker) idle(ctx context.Context) time.Duration {
	g := w.g
	w.setNoBackupReady(false) // no tickets wait for a backup any more
	poll := g.opts.IdlePoll
	if g.PrinterState(w.id) != storeprint.PrinterReady || w.failedOver() {
		poll = g.opts.StatusPoll
	}
	if ago, ok := w.lastStatus.For(g.clock.Mono()); !ok || ago >= poll {
		w.pollStatus(ctx)
	}
	return min(poll, g.opts.SweepEvery)
}

// troubled reports whether the printer was last read in trouble (not
// merely never read yet, as at start).
func (w *worker) troubled() bool {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	s := w.g.status[w.id]
	return s.State != storeprint.PrinterReady && !s.CheckedAt.IsZero()
}

// noBackupReady reports whether the printer waits for a ready backup.
func (w *worker) noBackupReady() bool {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	return w.g.status[w.id].NoBackupReady
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
	w.io.Lock()
	defer w.io.Unlock()
	st := w.readStatus(ctx)
	w.lastStatus = since{at: w.g.clock.Mono(), set: true}
	return st
}

// readStatus reads the printer's status and records it; the caller holds
// w.io.
func (w *worker) readStatus(ctx context.Context) storeprint.PrinterState {
	sctx, cancel := context.WithTimeout(ctx, w.cfg.ConnectTimeout.Duration+3*time.Second)
	defer cancel()
	st, err := w.printer.Status(sctx)
	if err != nil {
		if ctx.Err() != nil {
			return w.g.PrinterState(w.id)
		}
		w.setStatus(storeprint.PrinterStatus{State: storeprint.PrinterUnknown}, err.Error())
		return storeprint.PrinterUnknown
	}
	w.setStatus(st, "")
	return st.State
}

func (w *worker) setStatus(st storeprint.PrinterStatus, lastErr string) {
	g := w.g
	mono := g.clock.Mono()
	g.mu.Lock()
	s := g.status[w.id]
	changed := s.State != st.State
	s.State, s.PaperNearEnd, s.CheckedAt = st.State, st.PaperNearEnd, g.now()
	if lastErr != "" {
		s.LastError = lastErr
	}
	if st.State == storeprint.PrinterReady {
		s.HealthySince.mark(mono)
		if s.NoBackupReady && !s.Trouble.active {
			s.NoBackupReady, changed = false, true
		}
	} else {
		s.HealthySince = since{}
		s.FailingSince.mark(mono)
	}
	g.mu.Unlock()
	if changed {
		g.changes.signal()
		g.log.Info("printer status", "printer_id", w.id, "status", st.State)
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
		s.Streak, s.FailingSince, s.LastError = 0, since{}, ""
		return
	}
	if countAttempt {
		s.Streak++
	}
	s.FailingSince.mark(g.clock.Mono())
}

// attempt leases the head task, prints it and records the outcome.
func (w *worker) attempt(ctx context.Context, head *Task) {
	g := w.g
	lease, err := g.lease(ctx, w, head.TaskNo)
	if err != nil {
		if !errors.Is(err, errFenced) && ctx.Err() == nil {
			g.log.Error("lease task", "task_no", head.TaskNo, "err", err)
		}
		return
	}
	if lease == nil {
		return // flagged stale
	}
	job := &PrintJob{
		Ticket:    lease.ticket,
		Attempt:   lease.attempt,
		ProcessID: lease.processID,
		Prepare: func(pctx context.Context, payload []byte) error {
			confirmed, err := g.prepare(pctx, lease, payload)
			if err != nil {
				return err
			}
			w.failpoint(FailpointAfterPrepared)
			return g.stillLeads(confirmed)
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
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease.length-g.opts.LeaseMargin/2)
	defer cancel()
	done := make(chan error, 1)
	w.io.Lock()
	w.printing.Add(1)
	w.io.Unlock()
	go func() {
		err := w.printer.Print(pctx, job)
		w.printing.Add(-1)
		done <- err
	}()
	overrun := g.clock.NewTimer(lease.length + g.opts.LeaseMargin/2)
	defer overrun.Stop()
	var perr error
	select {
	case perr = <-done:
		lease.confirms = job.Confirms // the driver is done with job
	case <-overrun.C():
		g.log.Error("printer driver overran its lease; attempt abandoned", "printer_id", w.id, "task_no", lease.taskNo, "attempt", lease.attempt)
		w.noteOutcome(false, true)
		g.obs.Attempt(w.id, "abandoned")
		if err := g.recoverTask(context.WithoutCancel(ctx), lease.taskNo, nil); err != nil {
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
		w.troubleOver()
		w.setStatus(storeprint.PrinterStatus{State: storeprint.PrinterReady}, "")
		g.obs.Attempt(w.id, "printed")
		if err := g.complete(ctx, lease); err != nil {
			g.log.Error("store printed", "task_no", lease.taskNo, "err", err)
		}
		return
	case errors.Is(perr, errFenced):
		g.obs.Attempt(w.id, "fenced")
		if err := g.settleFenced(ctx, lease, perr); err != nil && !errors.Is(err, errFenced) {
			g.log.Error("settle fenced attempt", "task_no", lease.taskNo, "err", err)
		}
		return
	}
	var pe *PrintError
	if !errors.As(perr, &pe) {
		pe = &PrintError{Outcome: PrintUncertain, Err: perr}
	}
	g.obs.Attempt(w.id, pe.Outcome.String())
	if pe.State != "" {
		w.setStatus(storeprint.PrinterStatus{State: pe.State}, perr.Error())
	} else if pe.Outcome == PrintNotSent {
		w.setStatus(storeprint.PrinterStatus{State: storeprint.PrinterOffline}, perr.Error())
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
		if w.settleUncertain(ctx, lease, perr) {
			return // the printer said what became of it (settle.go)
		}
		w.noteOutcome(false, true)
		mayFlag := w.uncertainOutcome(perr, lease.confirms)
		err = g.uncertain(ctx, lease, perr, mayFlag)
	}
	if err != nil && !errors.Is(err, errFenced) {
		g.log.Error("store attempt outcome", "task_no", lease.taskNo, "err", err)
	}
	w.checkFailover(ctx)
}

// lease is one attempt's claim on a task. It lives only in memory: its
// expiry is on the monotonic clock, and a restart ends every lease.
type lease struct {
	taskNo    string
	printerID string
	attempt   int
	token     string
	expires   time.Duration // monotonic reading at which the lease ends
	length    time.Duration // how long it was granted for
	processID string
	reprint   bool
	backup    string
	ticket    storeprint.Ticket
	policy    string             // on_uncertain of the printer
	confirms  storeprint.Confirm // how the printer confirmed it, or was to (PrintJob.Confirms)
}

// lease starts a new attempt of a task: the attempt number grows by one
// and a fresh token is issued. A task past its station's stale_after is
// flagged instead and nil is returned.
func (g *Gateway) lease(ctx context.Context, w *worker, taskNo string) (*lease, error) {
	var l *lease
	now := g.now()
	length := w.cfg.ConnectTimeout.Duration + w.cfg.ConfirmTimeout.Duration + g.opts.LeaseMargin
	// The lease needs no sync of its own: the prepared receipt's sync,
	// before the first byte, makes it durable with the receipt. Lost in a
	// power cut before that, nothing was sent and the task is still
	// waiting under its last attempt.
	err := g.store.Update(WithoutSync(ctx), func(tx Tx) error {
		l = nil
		t, err := tx.Task(taskNo)
		if err != nil {
			return err
		}
		if t.PrinterID != w.id || (t.Status != storeprint.StatusQueued && t.Status != storeprint.StatusRetryWait) {
			return errFenced
		}
		if g.isStale(t) {
			return g.flagStale(tx, t)
		}
		t.Attempt++
		t.Status = storeprint.StatusPrinting
		t.LeaseToken = newToken()
		t.LeaseExpires = now.Add(length) // for people; the lease itself is l.expires
		if err := tx.PutTask(t); err != nil {
			return err
		}
		l = &lease{
			taskNo: t.TaskNo, printerID: w.id, attempt: t.Attempt, token: t.LeaseToken,
			expires: g.clock.Mono() + length, length: length, processID: storeprint.NewProcessID(),
			reprint: t.Reprint, backup: t.BackupFrom, policy: w.cfg.OnUncertain,
			ticket: storeprint.Ticket{
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
		return t, &fenceError{superseded, fmt.Sprintf("attempt %d is current, not %d", t.Attempt, l.attempt)}
	}
	if t.Status != storeprint.StatusPrinting {
		return t, &fenceError{superseded, fmt.Sprintf("task is %s", t.Status)}
	}
	if checkExpiry && g.clock.Mono() >= l.expires {
		return t, &fenceError{expired, fmt.Sprintf("lease of attempt %d expired before the first byte", l.attempt)}
	}
	return t, nil
}

// prepare is the final fence right before the first byte goes to the
// printer, and writes the prepared receipt durably in the same transaction.
// On a cluster it returns when the check of the leadership that lets the
// first byte out began (see stillLeads).
func (g *Gateway) prepare(ctx context.Context, l *lease, payload []byte) (confirmed time.Time, err error) {
	sum := sha256.Sum256(payload)
	if g.leader != nil {
		// On a cluster only the leader prints: a node that knows it no
		// longer leads writes no receipt, and the task goes back to its
		// queue under the new leader.
		if err := g.leader.CheckLeader(ctx); err != nil {
			return time.Time{}, &fenceError{superseded, "this node no longer leads the cluster: " + err.Error()}
		}
	}
	now := g.now()
	err = g.store.Update(ctx, func(tx Tx) error {
		t, err := g.fence(tx, l, true)
		if err != nil {
			return err
		}
		if err := g.mayPrint(tx, t); err != nil {
			return err
		}
		if _, err := tx.Receipt(l.taskNo, l.attempt); err == nil {
			return &fenceError{superseded, fmt.Sprintf("attempt %d already has a receipt", l.attempt)}
		} else if !isNotFound(err) {
			return err
		}
		return tx.PutReceipt(&Receipt{
			TaskNo: l.taskNo, Attempt: l.attempt, State: storeprint.ReceiptPrepared, PrinterID: l.printerID,
			PayloadSHA256: hex.EncodeToString(sum[:]), ProcessID: l.processID,
			Reprint: l.reprint, BackupFrom: l.backup, PreparedAt: now,
		})
	})
	if err == nil && g.leader != nil {
		// The final fence, last before the first byte: a leader deposed
		// (or frozen) since the check above sends nothing. Nothing left:
		// the attempt is released as one whose lease ran out, which a
		// deposed node cannot record; then its prepared attempt is
		// uncertain for the new leader and follows on_uncertain, never
		// printed silently twice.
		confirmed = time.Now()
		if err := g.leader.CheckLeader(ctx); err != nil {
			return time.Time{}, &fenceError{expired, "this node no longer leads the cluster: " + err.Error()}
		}
	}
	return confirmed, err
}

// stillLeads is the last word before the first byte on a cluster: the
// leadership the final fence confirmed, from the moment its check began,
// holds for the fence's lease only. A node stopped or starved since (a
// frozen box, woken while another node leads) sends nothing: without
// this, the fence would confirm a leadership that had passed by the time
// the byte goes out.
func (g *Gateway) stillLeads(confirmed time.Time) error {
	if g.leader == nil {
		return nil
	}
	if took := time.Since(confirmed); took >= g.leader.LeaderLease() {
		return &fenceError{expired, fmt.Sprintf("the leadership confirmed %s before the first byte may have passed to another node (the fence holds %s): nothing sent",
			took.Round(time.Millisecond), g.leader.LeaderLease())}
	}
	return nil
}

// submitted records that the bytes are out. It needs no sync of its own:
// from the prepared receipt on the attempt is uncertain until the printer
// confirms it, and the confirmation's sync makes this durable too.
func (g *Gateway) submitted(ctx context.Context, l *lease, jobID string) error {
	now := g.now()
	return g.store.Update(WithoutSync(ctx), func(tx Tx) error {
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
		printerID = ""
		r, err := tx.Receipt(l.taskNo, l.attempt)
		if err != nil {
			return err
		}
		r.State, r.PrintedAt, r.ConfirmedBy = storeprint.ReceiptPrinted, &now, l.confirms
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
		printedAfter, printerID = g.times.age(t), t.PrinterID
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
			t.NextAt = now.Add(g.backoff.Wait(t.Failures))
		}
		wake = g.reroute(t)
		return tx.PutTask(t)
	})
	if wake != "" {
		g.wake(wake)
	}
	return err
}

// uncertain ends an attempt whose bytes may have printed; see
// applyUncertain.
func (g *Gateway) uncertain(ctx context.Context, l *lease, cause error, mayFlag bool) error {
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
		wake = g.applyUncertain(t, l.policy, cause.Error(), mayFlag)
		return tx.PutTask(t)
	})
	if wake != "" {
		g.wake(wake)
	}
	return err
}

// applyUncertain sets the state of a task whose attempt may have printed,
// and returns the printer to wake, if any. Its printer's on_uncertain
// decides: reprint prints it again once, with a REPRINT line; hold (or a
// second uncertain outcome under reprint) flags it for a person. A printer
// in trouble that has had its share of flagged tickets (mayFlag false, see
// trouble.go) keeps the ticket in its queue instead, marked REPRINT, to
// print once the printer works again.
func (g *Gateway) applyUncertain(t *Task, policy, cause string, mayFlag bool) string {
	t.LeaseToken, t.LeaseExpires = "", time.Time{}
	t.LastError = cause
	switch {
	case policy == "reprint" && t.AutoReprints == 0:
		t.AutoReprints++
		t.Status, t.Reprint = storeprint.StatusRetryWait, true
		t.NextAt = g.now().Add(g.backoff.Wait(1))
		g.log.Warn("uncertain outcome: reprinting with a REPRINT line", "task_no", t.TaskNo, "err", cause)
		return g.reroute(t)
	case mayFlag:
		t.Status, t.Reason = storeprint.StatusAttention, storeprint.ReasonUncertain
		g.log.Warn("uncertain outcome: needs a person", "task_no", t.TaskNo, "err", cause)
		return ""
	}
	t.Status, t.Reprint = storeprint.StatusRetryWait, true
	t.NextAt = g.now().Add(g.backoff.Wait(1))
	g.log.Warn("uncertain outcome on a printer in trouble: the ticket waits, marked REPRINT", "task_no", t.TaskNo, "err", cause)
	return g.reroute(t)
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

// isStale reports whether a task waited longer than its station's
// stale_after since it was accepted, on the monotonic clock.
func (g *Gateway) isStale(t *Task) bool {
	return !t.StaleOK && g.times.age(t) > g.staleAfter(t.Station)
}

func (g *Gateway) flagStale(tx Tx, t *Task) error {
	t.Status, t.Reason = storeprint.StatusAttention, storeprint.ReasonStale
	t.LastError = fmt.Sprintf("not printed within %s of acceptance", g.staleAfter(t.Station))
	g.log.Warn("stale ticket held back", "task_no", t.TaskNo, "age", g.times.age(t).Round(time.Second))
	return tx.PutTask(t)
}

// staleScan bounds the waiting tasks one stale sweep reads: the oldest go
// stale first, and a sweep that flags them moves the queue on.
const staleScan = 1000

// sweepStale flags the printer's waiting tasks that went stale, so people
// see them before the printer comes back.
func (w *worker) sweepStale(ctx context.Context) error {
	g := w.g
	var any bool
	if err := g.store.View(ctx, func(tx ReadTx) error {
		open, err := tx.Open(w.id, staleScan)
		for _, t := range open {
			if t.Status != storeprint.StatusPrinting && g.isStale(t) {
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
			if t.Status != storeprint.StatusPrinting && g.isStale(t) {
				if err := g.flagStale(tx, t); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
