package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// checkFailover moves the printer's stations to the first ready printer
// along its chain of backups once it has failed past its threshold: in
// trouble (at once), failover_attempts attempts in a row that did not
// print, or failover_after of continuous trouble (unreachable, offline,
// out of paper...) since the first reading that showed it. When no
// printer of the chain is ready the tickets wait where they are and the
// printer is shown with no backup ready; the check runs again at the next
// status poll.
func (w *worker) checkFailover(ctx context.Context) {
	g := w.g
	if w.cfg.Backup == "" || w.failedOver() {
		return
	}
	g.mu.Lock()
	s := *g.status[w.id]
	g.mu.Unlock()
	failing, ok := s.FailingSince.For(g.clock.Mono())
	if !ok && !s.Trouble.active {
		return
	}
	var reason string
	switch {
	case s.Trouble.active:
		reason = storeprint.Say(s.Trouble.word, "en")
	case s.Streak >= w.cfg.FailoverAttempts:
		reason = fmt.Sprintf("%d attempts in a row did not print", s.Streak)
	case failing+g.opts.StatusPoll >= w.cfg.FailoverAfter.Duration:
		// A printer with waiting tickets is read every StatusPoll: move
		// at the last reading before failover_after has passed, so that
		// its tickets wait no longer than that.
		reason = fmt.Sprintf("in trouble (%s) for %s", s.State, failing.Round(time.Second))
	default:
		return
	}
	if s.LastError != "" {
		reason += ": " + s.LastError
	}
	word := storeprint.PrinterWord(s.State)
	switch {
	case s.Trouble.active:
		word = s.Trouble.word
	case s.State == storeprint.PrinterReady:
		word = storeprint.WordPrinterOffline // it answers, but nothing it is sent gets through
	}
	target := g.readyBackup(ctx, w.id)
	if target == "" {
		w.setNoBackupReady(true)
		return
	}
	if err := g.startFailover(ctx, w.id, target, word, reason); err != nil {
		g.log.Error("fail over", "printer_id", w.id, "err", err)
	}
}

// setNoBackupReady records whether the printer would fail over but no
// printer along its chain of backups is ready to take its tickets.
func (w *worker) setNoBackupReady(stuck bool) {
	g := w.g
	g.mu.Lock()
	s := g.status[w.id]
	changed := s.NoBackupReady != stuck
	s.NoBackupReady = stuck
	g.mu.Unlock()
	if changed {
		g.changes.signal()
		if stuck {
			g.log.Warn("failover: no printer along the chain of backups is ready; the tickets wait", "printer_id", w.id)
		}
	}
}

// readyBackup returns the first printer along id's chain of backups that
// is ready to print now, or "" when none is. Each is read afresh unless
// its worker is busy with it; one that is in trouble, failed over itself,
// or whose last attempts did not print is passed over.
func (g *Gateway) readyBackup(ctx context.Context, id string) string {
	seen := map[string]bool{id: true}
	for p := g.pcfg[id].Backup; p != "" && !seen[p]; p = g.pcfg[p].Backup {
		seen[p] = true
		if g.readyNow(ctx, p) {
			return p
		}
	}
	return ""
}

// readyNow reports whether printer p can take tickets now.
func (g *Gateway) readyNow(ctx context.Context, p string) bool {
	w := g.workers[p]
	if w == nil {
		return false
	}
	if w.io.TryLock() {
		if w.printing.Load() == 0 {
			// Not busy: ask it now rather than trust a reading that may
			// be an idle poll old.
			w.readStatus(ctx)
		}
		w.io.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.status[p]
	f := g.failover[p]
	return s.State == storeprint.PrinterReady && !s.Trouble.active && s.Streak == 0 && (f == nil || !f.Active)
}

func (g *Gateway) startFailover(ctx context.Context, id, backup string, word storeprint.Word, reason string) error {
	f := &Failover{PrinterID: id, Active: true, Backup: backup, Since: g.now(), Word: word, Reason: reason}
	g.mu.Lock()
	old := g.failover[id]
	g.failover[id] = f
	g.mu.Unlock()
	var wake []string
	err := g.store.Update(ctx, func(tx Tx) error {
		if err := tx.PutFailover(f); err != nil {
			return err
		}
		var err error
		wake, err = g.rerouteAll(tx)
		return err
	})
	if err != nil {
		g.mu.Lock()
		g.failover[id] = old
		g.mu.Unlock()
		return err
	}
	g.mu.Lock()
	changed := g.status[id].NoBackupReady
	g.status[id].NoBackupReady = false
	g.mu.Unlock()
	if changed {
		g.changes.signal()
	}
	g.log.Warn("failover: stations moved to the backup printer", "printer_id", id, "backup", backup, "reason", reason)
	for _, p := range wake {
		g.wake(p)
	}
	return nil
}

// rerouteAll points every waiting task at its station's current printer.
func (g *Gateway) rerouteAll(tx Tx) ([]string, error) {
	var wake []string
	for _, pc := range g.cfg.Printers {
		open, err := tx.Open(pc.ID, 0)
		if err != nil {
			return nil, err
		}
		for _, t := range open {
			if t.Status == storeprint.StatusPrinting {
				continue // its attempt finishes where it started; the fence sees the move
			}
			if p := g.reroute(t); p != "" {
				if err := tx.PutTask(t); err != nil {
					return nil, err
				}
				wake = append(wake, p)
			}
		}
	}
	return wake, nil
}

// maybeFailback moves the stations back after the printer has been healthy
// for failback_after, when that is configured.
func (w *worker) maybeFailback(ctx context.Context) {
	g := w.g
	if w.cfg.FailbackAfter.Duration <= 0 || !w.failedOver() {
		return
	}
	g.mu.Lock()
	s := *g.status[w.id]
	g.mu.Unlock()
	healthy, ok := s.HealthySince.For(g.clock.Mono())
	if s.State != storeprint.PrinterReady || !ok || healthy < w.cfg.FailbackAfter.Duration {
		return
	}
	reason := fmt.Sprintf("healthy for %s", healthy.Round(time.Second))
	if _, err := g.Failback(ctx, w.id, "gateway", reason, false); err != nil {
		g.log.Error("fail back", "printer_id", w.id, "err", err)
	}
}

// AckFailover records that a person saw the printer's failover. The
// failover stays shown until acknowledged; routing does not change.
func (g *Gateway) AckFailover(ctx context.Context, id, operator, reason string) (*Failover, error) {
	return g.changeFailover(ctx, id, storeprint.ActionAcknowledgeFailover, operator, reason, func(f *Failover) error {
		if f.Acknowledged {
			return nil
		}
		now := g.now()
		f.Acknowledged, f.AckBy, f.AckAt = true, operator, &now
		return nil
	})
}

// Failback moves the printer's stations back from its backup. While the
// printer still reports trouble (not ready, or cutting off or not
// confirming its prints) it is refused with the reason, unless forced.
func (g *Gateway) Failback(ctx context.Context, id, operator, reason string, force bool) (*Failover, error) {
	if w := g.workers[id]; w != nil && !force {
		if word, bad := w.troubleWord(); bad {
			return nil, storeprint.Errorf(storeprint.ECONFLICT, "printer %s still reports trouble (%s): move back once it prints again, or force it", id, storeprint.Say(word, "en"))
		}
	}
	if d := g.displays[id]; d != nil && !force {
		g.mu.Lock()
		online := d.online(g.clock.Mono())
		g.mu.Unlock()
		if !online {
			return nil, storeprint.Errorf(storeprint.ECONFLICT, "display %s is still silent: move back once the screen is on again, or force it", id)
		}
	}
	return g.changeFailover(ctx, id, storeprint.ActionFailback, operator, reason, func(f *Failover) error {
		if !f.Active {
			return storeprint.Errorf(storeprint.ECONFLICT, "printer %q is not failed over", id)
		}
		f.Active = false
		return nil
	})
}

func (g *Gateway) changeFailover(ctx context.Context, id string, action storeprint.AuditAction, operator, reason string, change func(*Failover) error) (*Failover, error) {
	if g.pcfg[id] == nil && !g.isDisplay(id) {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "printer %q not found", id)
	}
	if operator == "" {
		return nil, storeprint.Errorf(storeprint.EINVALID, "operator is required")
	}
	var out *Failover
	var wake []string
	err := g.store.Update(ctx, func(tx Tx) error {
		f, err := tx.Failover(id)
		if err != nil {
			return err
		}
		if f == nil {
			return storeprint.Errorf(storeprint.ECONFLICT, "printer %q has no failover", id)
		}
		before := *f
		if err := change(f); err != nil {
			return err
		}
		if err := tx.PutFailover(f); err != nil {
			return err
		}
		g.mu.Lock()
		prev := g.failover[id]
		g.failover[id] = f
		g.mu.Unlock()
		if wake, err = g.rerouteAll(tx); err != nil {
			g.mu.Lock()
			g.failover[id] = prev
			g.mu.Unlock()
			return err
		}
		out = f
		return tx.AppendAudit(&AuditEntry{
			Action: action, Operator: operator, Reason: reason,
			Before: snapshot(before), After: snapshot(*f),
		})
	})
	if err != nil {
		// The cache may hold the change of an update that failed to commit.
		if lerr := g.loadFailovers(context.WithoutCancel(ctx)); lerr != nil {
			g.log.Error("reload failovers", "err", lerr)
		}
		return nil, err
	}
	for _, p := range wake {
		g.wake(p)
	}
	g.wake(id)
	return out, nil
}
