package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/backoff"
)

// Trouble per printer, not per ticket.
//
// A printer whose attempt ended uncertain (the connection dropped mid-ticket,
// or the ticket went out and no confirmation came) is suspect: its next
// ticket waits for a cool-down (1 s, doubling to 30 s with every uncertain
// outcome in a row) and a clean status round trip. After suspect_after
// uncertain outcomes in a row it is in trouble, for a reason in words (it
// cuts off while printing, or it does not confirm prints): no ticket goes
// to it by itself any more. Its stations fail over where it has a backup;
// otherwise its queue holds, and once per cool-down it is probed without
// paper (a status round trip, then a confirmation request alone, see
// Prober). A probe answered makes it suspect again, so that the next
// ticket is tried; what a person asks for (a test page, a make-up print, a
// copy) goes to it even in trouble. The episode ends with the first
// confirmed print.
//
// Within one episode at most maxFlagsPerEpisode tickets are flagged for a
// person, whatever the printer's policy: a printer that cuts every ticket
// is one problem, not a ticket each. A later uncertain ticket of the same
// episode waits in the queue marked REPRINT instead, so that it prints with
// a visible REPRINT line once the printer works again. With on_uncertain =
// "reprint" a ticket gets at most one automatic reprint.
const maxFlagsPerEpisode = 2

// coolDowns is the wait before a suspect printer's next ticket, and between
// the probes of one in trouble.
var coolDowns = backoff.Backoff{Min: time.Second, Max: 30 * time.Second, Jitter: -1}

// trouble is a printer's uncertain-outcome episode, in memory.
type trouble struct {
	streak  int           // uncertain outcomes in a row
	probes  int           // probes that failed since it got in trouble
	until   time.Duration // no attempt or probe before this monotonic reading
	flagged int           // tickets flagged for a person in this episode
	active  bool          // streak reached suspect_after
	word    storeprint.Word
	method  storeprint.Confirm // how the printer was to confirm the tickets of the streak
}

// troubleKind is where a printer stands in its episode.
type troubleKind int

const (
	clean     troubleKind = iota // no uncertain outcome since the last confirmed print
	suspect                      // its last ticket ended uncertain
	inTrouble                    // suspect_after in a row: it gets no ticket by itself
)

func (w *worker) troubleState() troubleKind {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	switch tr := w.g.status[w.id].Trouble; {
	case tr.active:
		return inTrouble
	case tr.streak > 0:
		return suspect
	}
	return clean
}

// Prober is a printer that can prove its print path without paper: it
// sends a confirmation request alone (for ESC/POS, GS ( H with no ticket
// before it) and returns nil only when the printer answers it. A printer
// in trouble comes back through it; one whose driver cannot probe comes
// back when a person's test page or make-up print is confirmed.
type Prober interface {
	Probe(ctx context.Context) error
}

// probe tries a printer in trouble without paper, once per cool-down, and
// returns how long to wait before the next step.
func (w *worker) probe(ctx context.Context) time.Duration {
	g := w.g
	if wait := w.coolDown(); wait > 0 {
		return wait
	}
	prober, ok := w.printer.(Prober)
	if !ok || w.pollStatus(ctx) != storeprint.PrinterReady {
		return w.probeFailed()
	}
	pctx, cancel := context.WithTimeout(ctx, w.cfg.ConnectTimeout.Duration+w.cfg.ConfirmTimeout.Duration)
	defer cancel()
	w.io.Lock()
	err := prober.Probe(pctx)
	w.io.Unlock()
	if err != nil {
		g.log.Info("probe of a printer in trouble: no answer", "printer_id", w.id, "err", err)
		return w.probeFailed()
	}
	g.mu.Lock()
	tr := &g.status[w.id].Trouble
	tr.active, tr.probes = false, 0
	tr.streak = max(w.cfg.SuspectAfter-1, 1) // one more uncertain ticket and it is in trouble again
	g.mu.Unlock()
	g.changes.signal()
	g.log.Info("printer in trouble answered a probe: trying the next ticket", "printer_id", w.id)
	return 0
}

// probeFailed doubles the cool-down before the next probe.
func (w *worker) probeFailed() time.Duration {
	g := w.g
	g.mu.Lock()
	defer g.mu.Unlock()
	tr := &g.status[w.id].Trouble
	tr.probes++
	wait := coolDowns.Base(tr.streak + tr.probes)
	tr.until = g.clock.Mono() + wait
	return wait
}

// askedFor returns the first ticket of the printer's queue a person asked
// for (a test page, a make-up print, a copy) that is due, or nil. One that
// ended uncertain waits its backoff before it is tried again.
func (w *worker) askedFor(ctx context.Context) (*Task, error) {
	var asked *Task
	err := w.g.store.View(ctx, func(tx ReadTx) error {
		asked = nil
		open, err := tx.Open(w.id, maxBoardTasks)
		for _, t := range open {
			if t.Status != storeprint.StatusPrinting && (t.StaleOK || t.Source == storeprint.SourceTestPage) && w.g.times.wait(t) == 0 {
				asked = t
				break
			}
		}
		return err
	})
	return asked, err
}

// suspect records an uncertain outcome at mono of a ticket to be
// confirmed by method; cut tells whether the ticket was cut off before all
// its bytes went out. The streak counts per confirmation method: uncertain
// outcomes under another method (before confirm = "auto" found how the
// printer confirms, or under a method it no longer uses) do not add up
// with this one's.
func (t *trouble) suspect(mono time.Duration, cut bool, suspectAfter int, method storeprint.Confirm) {
	if method != t.method {
		t.streak, t.active, t.method = 0, false, method
	}
	t.streak++
	t.until = mono + coolDowns.Base(t.streak)
	t.active = t.streak >= suspectAfter
	t.word = storeprint.WordPrinterNoConfirm
	if cut {
		t.word = storeprint.WordPrinterCutsOff
	}
}

// mayFlag reports whether one more ticket of this episode may be flagged
// for a person, and counts it.
func (t *trouble) mayFlag() bool {
	if t.flagged >= maxFlagsPerEpisode {
		return false
	}
	t.flagged++
	return true
}

// coolDown returns how long the printer's next ticket must still wait.
func (w *worker) coolDown() time.Duration {
	g := w.g
	g.mu.Lock()
	defer g.mu.Unlock()
	tr := &g.status[w.id].Trouble
	if tr.streak == 0 {
		return 0
	}
	return max(tr.until-g.clock.Mono(), 0)
}

// cutOff tells the two kinds of uncertain outcome apart: a connection
// closed or reset under the ticket cut it off while printing; anything
// else (no answer within the timeout, a spooler job gone without a word)
// means the printer does not confirm its prints.
func cutOff(err error) bool {
	for _, cut := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNABORTED, net.ErrClosed} {
		if errors.Is(err, cut) {
			return true
		}
	}
	return false
}

// uncertainOutcome records an uncertain outcome on the printer (its error
// kept for the printer's details) and returns whether the ticket may be
// flagged for a person.
func (w *worker) uncertainOutcome(cause error, method storeprint.Confirm) (mayFlag bool) {
	g := w.g
	cut := cutOff(cause)
	g.mu.Lock()
	g.status[w.id].LastError = cause.Error()
	tr := &g.status[w.id].Trouble
	was := tr.active
	tr.suspect(g.clock.Mono(), cut, w.cfg.SuspectAfter, method)
	mayFlag = tr.mayFlag()
	now := tr.active && !was
	word := tr.word
	g.mu.Unlock()
	if now {
		g.changes.signal()
		g.log.Warn("printer in trouble", "printer_id", w.id, "trouble", storeprint.Say(word, "en"))
	}
	return mayFlag
}

// troubleOver ends the printer's episode after a confirmed print.
func (w *worker) troubleOver() {
	g := w.g
	g.mu.Lock()
	tr := &g.status[w.id].Trouble
	was := tr.active
	*tr = trouble{}
	stuck := g.status[w.id].NoBackupReady
	g.status[w.id].NoBackupReady = false
	g.mu.Unlock()
	if was || stuck {
		g.changes.signal()
		g.log.Info("printer out of trouble: a ticket printed and was confirmed", "printer_id", w.id)
	}
}

// troubleWord returns the words for the trouble the printer reports, if
// any: its state when not ready, or its trouble episode.
func (w *worker) troubleWord() (storeprint.Word, bool) {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	s := w.g.status[w.id]
	switch {
	case s.Trouble.active:
		return s.Trouble.word, true
	case s.State != storeprint.PrinterReady:
		return storeprint.PrinterWord(s.State), true
	}
	return "", false
}
