package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

// A kitchen display is a station target whose "printed" is a bump. Its
// tickets live in the same queue as a printer's (a task's PrinterID is
// the display's id) and go through the same receipts:
//
//   - queued: accepted, not yet on the screen;
//   - printing, receipt prepared then submitted: the screen said it shows
//     the ticket (delivered);
//   - done, receipt printed with confirmed_by "bump": a cook bumped it.
//
// No worker drives a display: the screen reports what it shows and what
// is bumped. A screen silent for offline_after is offline: the station
// fails over to the display's backup printer as for a printer, and the
// tickets it held (waiting, and shown but not bumped, marked REPRINT since
// the screen showed them once) print there with BACKUP FROM <display id>.
// The failover stays until a person acknowledges it and the screen is
// back (or a person moves it back).

// ConfirmedByBump is a printed receipt's confirmed_by for a bump.
const ConfirmedByBump = storeprint.ConfirmBump

// displayState is what the gateway knows of a screen now. It lives in
// memory: after a restart a screen has offline_after to speak again.
// Which tickets are shown and which recalled is kept with the tasks
// (status printing, Task.RecalledAt); recalled indexes the latter, read
// back at start (loadRecalled).
type displayState struct {
	cfg      *DisplayConfig
	started  time.Duration // monotonic reading at start
	seen     since         // its last word
	dark     bool          // the watcher saw it silent past offline_after
	stale    int           // its stale tickets at the watcher's last look
	recalled []string      // bumped tickets shown again, oldest first
	bumped   []string      // its last bumps since the start, newest last (for R)
}

// metaRecalled counts the tickets recalled to a screen and not bumped
// again, so a start looks for them only when there are some.
const metaRecalled = "display_recalled"

// DisplayInfo is a display as GET /v1/displays shows it.
type DisplayInfo struct {
	ID       string          `json:"id"`
	State    string          `json:"state"` // online | offline
	Word     storeprint.Word `json:"word"`
	Stations []string        `json:"stations"`
	Backup   string          `json:"backup"`
	Open     int             `json:"open"` // tickets waiting or shown, not bumped
	// Shown counts the open tickets the screen shows (delivered), Stale
	// the open tickets older than their station's stale_after: a cook
	// forgot them, or the screen is not where anyone looks.
	Shown int `json:"shown"`
	Stale int `json:"stale"`
	// StaleTasks are the stale ones, oldest first: the LAN page marks
	// them in their station's queue.
	StaleTasks []string  `json:"stale_tasks"`
	Failover   *Failover `json:"failover"`
	// SilentS is how long the screen has been silent, in seconds.
	SilentS      int64 `json:"silent_s"`
	OfflineAfter int64 `json:"offline_after_s"`
	AmberAfter   int64 `json:"amber_after_s"`
	RedAfter     int64 `json:"red_after_s"`
}

// Display states.
const (
	DisplayOnline  = "online"
	DisplayOffline = "offline"
)

func (g *Gateway) initDisplays() {
	g.displays = map[string]*displayState{}
	for i := range g.cfg.Displays {
		d := &g.cfg.Displays[i]
		g.displays[d.ID] = &displayState{cfg: d, started: g.clock.Mono()}
	}
}

// isDisplay reports whether id names a display (not a printer).
func (g *Gateway) isDisplay(id string) bool { return g.displays[id] != nil }

func (g *Gateway) displayOf(id string) (*displayState, error) {
	d := g.displays[id]
	if d == nil {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "display %q not found", id)
	}
	return d, nil
}

// silentFor returns how long the screen has said nothing (since start when
// it never spoke), and whether it ever spoke. Call with g.mu held.
func (d *displayState) silentFor(now time.Duration) (time.Duration, bool) {
	if ago, ok := d.seen.For(now); ok {
		return ago, true
	}
	return now - d.started, false
}

// online reports whether the screen spoke within offline_after. Call with
// g.mu held.
func (d *displayState) online(now time.Duration) bool {
	ago, spoke := d.silentFor(now)
	return spoke && ago < d.cfg.OfflineAfter.Duration
}

// Displays returns every display's state.
func (g *Gateway) Displays(ctx context.Context) ([]DisplayInfo, error) {
	out := []DisplayInfo{}
	err := g.store.View(ctx, func(tx ReadTx) error {
		out = out[:0]
		for _, dc := range g.cfg.Displays {
			open, err := tx.Open(dc.ID, 0)
			if err != nil {
				return err
			}
			info := g.displayInfo(dc.ID, len(open))
			info.Shown, info.StaleTasks = g.countShown(open)
			info.Stale = len(info.StaleTasks)
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

// countShown counts a display's open tickets on the screen, and lists
// those older than their station's stale_after: on a screen as on paper,
// a ticket that waited that long needs someone to look (a cook forgot to
// bump it, or nobody watches the screen). They stay on the screen.
func (g *Gateway) countShown(open []*Task) (shown int, stale []string) {
	stale = []string{}
	for _, t := range open {
		if t.Status == storeprint.StatusPrinting {
			shown++
		}
		if g.isStale(t) {
			stale = append(stale, t.TaskNo)
		}
	}
	return shown, stale
}

func (g *Gateway) displayInfo(id string, open int) DisplayInfo {
	d := g.displays[id]
	info := DisplayInfo{
		ID: id, Backup: d.cfg.Backup, Open: open, Stations: []string{}, StaleTasks: []string{},
		OfflineAfter: int64(d.cfg.OfflineAfter.Seconds()), AmberAfter: int64(d.cfg.AmberAfter.Seconds()), RedAfter: int64(d.cfg.RedAfter.Seconds()),
	}
	for _, st := range g.cfg.Stations {
		if st.Display == id {
			info.Stations = append(info.Stations, st.Name)
		}
	}
	now := g.clock.Mono()
	g.mu.Lock()
	defer g.mu.Unlock()
	silent, _ := d.silentFor(now)
	info.SilentS = int64(silent / time.Second)
	info.State, info.Word = DisplayOffline, storeprint.WordDisplayOffline
	if d.online(now) {
		info.State, info.Word = DisplayOnline, storeprint.WordDisplayOnline
	}
	if f := g.failover[id]; f != nil && (f.Active || !f.Acknowledged) {
		c := *f
		info.Failover = &c
	}
	return info
}

// DisplayTickets is what a screen shows.
type DisplayTickets struct {
	Display DisplayInfo `json:"display"`
	// Open are the display's tickets waiting or shown, oldest first.
	Open []*Task `json:"open"`
	// Recalled are bumped tickets a cook called back, oldest first.
	Recalled []*Task `json:"recalled"`
	// LastBumped is the ticket R recalls, if any.
	LastBumped string `json:"last_bumped,omitempty"`
	// PrintsOn is where the display's stations print while it is failed
	// over, empty while tickets come to the screen.
	PrintsOn string `json:"prints_on,omitempty"`
}

// maxDisplayTickets bounds the tickets a screen is sent at once.
const maxDisplayTickets = 200

// DisplayHeard records a word from a screen (every request it makes), and
// moves its stations back when it returns to an acknowledged failover.
func (g *Gateway) DisplayHeard(ctx context.Context, id string) error {
	d, err := g.displayOf(id)
	if err != nil {
		return err
	}
	now := g.clock.Mono()
	g.mu.Lock()
	was := d.online(now)
	d.seen = since{at: now, set: true}
	d.dark = false
	f := g.failover[id]
	back := f != nil && f.Active && f.Acknowledged
	g.mu.Unlock()
	if !was {
		g.log.Info("display online", "display", id)
		g.changes.signal()
	}
	if back {
		if _, err := g.Failback(ctx, id, "gateway", "the screen is back and its failover was acknowledged", true); err != nil && storeprint.ErrorCode(err) != storeprint.ECONFLICT {
			return err
		}
	}
	return nil
}

// ShowTickets reads what a screen shows now.
func (g *Gateway) ShowTickets(ctx context.Context, id string) (*DisplayTickets, error) {
	d, err := g.displayOf(id)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	recalled := slices.Clone(d.recalled)
	var last string
	if n := len(d.bumped); n > 0 {
		last = d.bumped[n-1]
	}
	g.mu.Unlock()
	out := &DisplayTickets{Open: []*Task{}, Recalled: []*Task{}, LastBumped: last}
	err = g.store.View(ctx, func(tx ReadTx) error {
		open, err := tx.Open(id, maxDisplayTickets)
		if err != nil {
			return err
		}
		out.Open = out.Open[:0]
		for _, t := range open {
			// A ticket carried over from before a start waits until the
			// cloud said whether it knows newer (learn.go), as on paper.
			if t.Status == storeprint.StatusPrinting || !g.holding(t) {
				out.Open = append(out.Open, t)
			}
		}
		n, err := tx.CountOpen(id)
		if err != nil {
			return err
		}
		out.Recalled = out.Recalled[:0]
		for _, no := range recalled {
			t, err := tx.Task(no)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			if t.RecalledAt != nil {
				out.Recalled = append(out.Recalled, t)
			}
		}
		out.Display = g.displayInfo(id, n)
		out.Display.Shown, out.Display.StaleTasks = g.countShown(open)
		out.Display.Stale = len(out.Display.StaleTasks)
		return nil
	})
	if p, from := g.route(g.displayStation(id)); from != "" {
		out.PrintsOn = p
	}
	return out, err
}

// displayStation is one station of the display, or "".
func (g *Gateway) displayStation(id string) string {
	for _, st := range g.cfg.Stations {
		if st.Display == id {
			return st.Name
		}
	}
	return ""
}

// Shown records that a screen shows tickets: each that was waiting for it
// is delivered (a new attempt, its receipt prepared and submitted). Tickets
// no longer on the display are ignored.
func (g *Gateway) Shown(ctx context.Context, id string, taskNos []string) (int, error) {
	if _, err := g.displayOf(id); err != nil {
		return 0, err
	}
	if len(taskNos) > maxDisplayTickets {
		return 0, storeprint.Errorf(storeprint.EINVALID, "shown: %d tickets; a screen reports at most %d at once", len(taskNos), maxDisplayTickets)
	}
	var any bool
	if err := g.store.View(ctx, func(tx ReadTx) error {
		any = false
		for _, no := range taskNos {
			t, err := tx.Task(no)
			if err == nil && t.PrinterID == id && (t.Status == storeprint.StatusQueued || t.Status == storeprint.StatusRetryWait) {
				any = true
			}
		}
		return nil
	}); err != nil || !any {
		return 0, err
	}
	var n int
	err := g.store.Update(ctx, func(tx Tx) error {
		n = 0
		for _, no := range taskNos {
			t, err := tx.Task(no)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			if t.PrinterID != id || (t.Status != storeprint.StatusQueued && t.Status != storeprint.StatusRetryWait) || g.holding(t) {
				continue
			}
			if err := g.deliver(tx, t, id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// deliver starts the attempt of a ticket the screen shows: printing, with
// its receipt prepared and submitted in the same transaction.
func (g *Gateway) deliver(tx Tx, t *Task, id string) error {
	now := g.now()
	t.Attempt++
	t.Status = storeprint.StatusPrinting
	t.LeaseToken, t.LeaseExpires = newToken(), time.Time{}
	if err := tx.PutTask(t); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(snapshot(map[string]any{"task_no": t.TaskNo, "table": t.Table, "note": t.Note, "items": t.Items})))
	r := &Receipt{
		TaskNo: t.TaskNo, Attempt: t.Attempt, State: storeprint.ReceiptPrepared, PrinterID: id,
		PayloadSHA256: hex.EncodeToString(sum[:]), ProcessID: storeprint.NewProcessID(),
		Reprint: t.Reprint, PreparedAt: now,
	}
	if err := tx.PutReceipt(r); err != nil {
		return err
	}
	r.State, r.SubmittedAt = storeprint.ReceiptSubmitted, &now
	return tx.PutReceipt(r)
}

// DisplayAction is who bumps or recalls, on which display.
type DisplayAction struct {
	DisplayID string
	Operator  string // the principal: "device:<id>" or "admin"
	Device    string // the device id, when a paired device
}

// Bump is a cook's confirmation on a screen: the ticket is done, its
// receipt printed with confirmed_by "bump", audited with the display and
// the device. A ticket bumped before the screen reported it shown is
// delivered and bumped at once. Bumping a recalled ticket puts it away
// again; bumping a done ticket once more changes nothing.
func (g *Gateway) Bump(ctx context.Context, taskNo string, a DisplayAction) (*Task, error) {
	d, err := g.displayOf(a.DisplayID)
	if err != nil {
		return nil, err
	}
	var out *Task
	var recalled, changed bool
	now := g.now()
	var age time.Duration
	err = g.store.Update(ctx, func(tx Tx) error {
		out, changed, recalled = nil, false, false
		t, err := tx.Task(taskNo)
		if err != nil {
			return err
		}
		out = t
		if t.Status == storeprint.StatusDone {
			if t.RecalledAt == nil || t.PrinterID != a.DisplayID {
				return nil // bumped already: nothing changes
			}
			recalled, changed = true, true
			t.RecalledAt = nil
			if err := tx.PutTask(t); err != nil {
				return err
			}
			if err := countRecalled(tx, -1); err != nil {
				return err
			}
			return tx.AppendAudit(&AuditEntry{
				Action: storeprint.ActionBump, Operator: a.Operator, TaskNo: t.TaskNo,
				Reason: "bumped again on display " + a.DisplayID + " after a recall", After: g.bumpSnapshot(t, a),
			})
		}
		if t.PrinterID != a.DisplayID {
			where := "printer " + t.PrinterID
			if g.isDisplay(t.PrinterID) {
				where = "display " + t.PrinterID
			}
			return storeprint.Errorf(storeprint.ECONFLICT, "task %s is not on display %s (it is on %s, %s)", t.TaskNo, a.DisplayID, where, t.Status)
		}
		switch t.Status {
		case storeprint.StatusQueued, storeprint.StatusRetryWait:
			if err := g.deliver(tx, t, a.DisplayID); err != nil {
				return err
			}
		case storeprint.StatusPrinting:
		default:
			return storeprint.Errorf(storeprint.ECONFLICT, "task %s is %s; only a ticket on the screen can be bumped", t.TaskNo, t.Status)
		}
		before := taskSnapshot(t)
		r, err := tx.Receipt(t.TaskNo, t.Attempt)
		if err != nil {
			return err
		}
		r.State, r.PrintedAt, r.ConfirmedBy = storeprint.ReceiptPrinted, &now, ConfirmedByBump
		if err := tx.PutReceipt(r); err != nil {
			return err
		}
		t.Status, t.PrintedAt, t.LastError, t.Reason = storeprint.StatusDone, &now, "", ""
		t.LeaseToken, t.LeaseExpires, t.Reprint = "", time.Time{}, false
		if err := tx.PutTask(t); err != nil {
			return err
		}
		age, changed = g.times.age(t), true
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionBump, Operator: a.Operator, TaskNo: t.TaskNo,
			Reason: "bumped on display " + a.DisplayID, Before: before, After: g.bumpSnapshot(t, a),
		})
	})
	if err != nil {
		return nil, err
	}
	if changed {
		g.mu.Lock()
		d.recalled = slices.DeleteFunc(d.recalled, func(s string) bool { return s == taskNo })
		d.bumped = append(slices.DeleteFunc(d.bumped, func(s string) bool { return s == taskNo }), taskNo)
		if len(d.bumped) > 20 {
			d.bumped = d.bumped[len(d.bumped)-20:]
		}
		g.mu.Unlock()
		if !recalled {
			g.obs.Printed(a.DisplayID, age)
		}
		g.changes.signal()
	}
	return out, nil
}

func (g *Gateway) bumpSnapshot(t *Task, a DisplayAction) string {
	return snapshot(map[string]any{
		"status": t.Status, "attempt": t.Attempt, "printer_id": t.PrinterID,
		"display_id": a.DisplayID, "device_id": a.Device,
	})
}

// Recall shows a bumped ticket on its screen again, audited. The task
// stays done (its bump confirmed it); the screen lists it among the
// recalled until it is bumped again. The recall is kept with the task
// (RecalledAt): a restart keeps it on the screen.
func (g *Gateway) Recall(ctx context.Context, taskNo string, a DisplayAction) (*Task, error) {
	d, err := g.displayOf(a.DisplayID)
	if err != nil {
		return nil, err
	}
	var out *Task
	now := g.now()
	err = g.store.Update(ctx, func(tx Tx) error {
		out = nil
		t, err := tx.Task(taskNo)
		if err != nil {
			return err
		}
		out = t
		if t.Status != storeprint.StatusDone || t.PrinterID != a.DisplayID {
			return storeprint.Errorf(storeprint.ECONFLICT, "task %s was not bumped on display %s (it is %s on %s); only a bumped ticket can be recalled", t.TaskNo, a.DisplayID, t.Status, t.PrinterID)
		}
		if t.RecalledAt == nil {
			t.RecalledAt = &now
			if err := tx.PutTask(t); err != nil {
				return err
			}
			if err := countRecalled(tx, 1); err != nil {
				return err
			}
		}
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionRecall, Operator: a.Operator, TaskNo: t.TaskNo,
			Reason: "recalled on display " + a.DisplayID, After: g.bumpSnapshot(t, a),
		})
	})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	if !slices.Contains(d.recalled, taskNo) {
		d.recalled = append(d.recalled, taskNo)
	}
	g.mu.Unlock()
	g.changes.signal()
	return out, nil
}

// countRecalled moves the count of recalled tickets by delta, never
// below zero.
func countRecalled(tx Tx, delta int) error {
	n, err := tx.Meta(metaRecalled)
	if err != nil {
		return err
	}
	tx.SetMeta(metaRecalled, uint64(max(int64(n)+int64(delta), 0)))
	return nil
}

// recalledScan is the page of tasks loadRecalled reads at once.
const recalledScan = 1000

// loadRecalled reads back at start the tickets recalled to a screen and
// not bumped again. It reads the tasks only when the count says there are
// some, and sets the count to what it found (a recalled ticket that
// retention deleted is no longer counted).
func (g *Gateway) loadRecalled(ctx context.Context) error {
	var n uint64
	if err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		n, err = tx.Meta(metaRecalled)
		return err
	}); err != nil || n == 0 {
		return err
	}
	var found []*Task
	for after := ""; ; {
		var page []*Task
		if err := g.store.View(ctx, func(tx ReadTx) error {
			var err error
			page, err = tx.TasksAfter(after, recalledScan)
			return err
		}); err != nil {
			return err
		}
		for _, t := range page {
			if t.RecalledAt != nil && t.Status == storeprint.StatusDone && g.isDisplay(t.PrinterID) {
				found = append(found, t)
			}
		}
		if len(page) < recalledScan {
			break
		}
		after = page[len(page)-1].TaskNo
	}
	slices.SortStableFunc(found, func(a, b *Task) int { return a.RecalledAt.Compare(*b.RecalledAt) })
	g.mu.Lock()
	for _, t := range found {
		d := g.displays[t.PrinterID]
		d.recalled = append(d.recalled, t.TaskNo)
	}
	g.mu.Unlock()
	if uint64(len(found)) == n {
		return nil
	}
	return g.store.Update(ctx, func(tx Tx) error {
		tx.SetMeta(metaRecalled, uint64(len(found)))
		return nil
	})
}

// CheckDisplays fails over every display that has been silent for its
// offline_after, and says when the next one could be due.
func (g *Gateway) checkDisplays(ctx context.Context) time.Duration {
	next := time.Second
	for _, dc := range g.cfg.Displays {
		d := g.displays[dc.ID]
		now := g.clock.Mono()
		g.mu.Lock()
		// A screen not heard from since the start has been silent since
		// the start: offline_after covers a restart's reconnection.
		silent, _ := d.silentFor(now)
		f := g.failover[dc.ID]
		active := f != nil && f.Active
		left := dc.OfflineAfter.Duration - silent
		newlyDark := left <= 0 && !d.dark
		if newlyDark {
			d.dark = true
		}
		g.mu.Unlock()
		g.watchStale(ctx, d)
		if left > 0 {
			next = min(next, left)
			continue
		}
		if newlyDark {
			g.log.Warn("display silent", "display", dc.ID, "silent", silent.Round(time.Second))
			g.changes.signal() // the LAN page and HQ show it red
		}
		if active || dc.Backup == "" {
			continue
		}
		reason := fmt.Sprintf("no word from the screen for %s", silent.Round(time.Second))
		if err := g.displayFailover(ctx, dc.ID, reason); err != nil {
			g.log.Error("fail over display", "display", dc.ID, "err", err)
		}
	}
	return max(next, 10*time.Millisecond)
}

// watchStale tells the LAN page and HQ when a display's stale tickets
// change: a ticket goes stale with time passing, which no other change
// announces.
func (g *Gateway) watchStale(ctx context.Context, d *displayState) {
	var stale []string
	if err := g.store.View(ctx, func(tx ReadTx) error {
		open, err := tx.Open(d.cfg.ID, maxDisplayTickets)
		_, stale = g.countShown(open)
		return err
	}); err != nil {
		g.log.Error("read display tickets", "display", d.cfg.ID, "err", err)
		return
	}
	g.mu.Lock()
	was := d.stale
	d.stale = len(stale)
	g.mu.Unlock()
	if len(stale) == was {
		return
	}
	if len(stale) > was {
		g.log.Warn("tickets on a screen too long, not bumped", "display", d.cfg.ID, "stale", len(stale), "oldest", stale[0])
	}
	g.changes.signal()
}

// watchDisplays runs checkDisplays until ctx is done.
func (g *Gateway) watchDisplays(ctx context.Context) {
	for ctx.Err() == nil {
		t := g.clock.NewTimer(g.checkDisplays(ctx))
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
	}
}

// displayFailover moves a silent display's stations to its backup: its
// waiting tickets, and the ones it showed that nobody bumped, print there
// with BACKUP FROM the display. The shown ones carry REPRINT: the screen
// showed them once.
func (g *Gateway) displayFailover(ctx context.Context, id, reason string) error {
	dc := g.displays[id].cfg
	f := &Failover{PrinterID: id, Active: true, Backup: dc.Backup, Since: g.now(), Word: storeprint.WordDisplayOffline, Reason: reason}
	g.mu.Lock()
	old := g.failover[id]
	g.failover[id] = f
	g.mu.Unlock()
	var wake []string
	err := g.store.Update(ctx, func(tx Tx) error {
		wake = nil
		if err := tx.PutFailover(f); err != nil {
			return err
		}
		open, err := tx.Open(id, 0)
		if err != nil {
			return err
		}
		for _, t := range open {
			if t.Status == storeprint.StatusPrinting {
				r, err := tx.Receipt(t.TaskNo, t.Attempt)
				if err != nil && !isNotFound(err) {
					return err
				}
				if r != nil {
					r.Error = "shown on display " + id + ", not bumped; the screen went silent (" + reason + ")"
					if err := tx.PutReceipt(r); err != nil {
						return err
					}
				}
				t.Status, t.Reprint = storeprint.StatusQueued, true
				t.LeaseToken, t.LeaseExpires = "", time.Time{}
				t.LastError = "shown on display " + id + ", not bumped, when the screen went silent"
				t.NextAt = g.now()
			}
			if p := g.reroute(t); p != "" {
				wake = append(wake, p)
			}
			if err := tx.PutTask(t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.mu.Lock()
		g.failover[id] = old
		g.mu.Unlock()
		return err
	}
	g.log.Warn("display offline: its stations print on the backup printer", "display", id, "backup", dc.Backup, "reason", reason)
	for _, p := range wake {
		g.wakeForWork(p)
	}
	return nil
}

// DisplayInfo returns one display's state without reading the store
// (open is left 0); ENOTFOUND for an unknown id.
func (g *Gateway) DisplayInfo(id string) (DisplayInfo, error) {
	if _, err := g.displayOf(id); err != nil {
		return DisplayInfo{}, err
	}
	return g.displayInfo(id, 0), nil
}

// displayStatuses reports the displays to HQ beside the printers, in the
// printers' words: ready while the screen speaks, offline while it is
// silent, failover while its stations print on the backup. They carry
// their stations, so the cloud knows those stations exist.
func (g *Gateway) displayStatuses(ctx context.Context) []sync.PrinterStatus {
	ds, err := g.Displays(ctx)
	if err != nil {
		g.log.Error("read displays", "err", err)
		return nil
	}
	out := make([]sync.PrinterStatus, 0, len(ds))
	for _, d := range ds {
		s := sync.PrinterStatus{ID: d.ID, Status: storeprint.PrinterOffline, Stations: d.Stations, Backup: d.Backup, At: g.now(),
			Kind: storeprint.TargetDisplay, Open: d.Open, Shown: d.Shown, Stale: d.Stale}
		if d.State == DisplayOnline {
			s.Status = storeprint.PrinterReady
		}
		s.Failover = d.Failover != nil && d.Failover.Active
		out = append(out, s)
	}
	return out
}
