package gateway

import (
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
// cuts off while printing, or it does not confirm prints): its stations
// fail over where it has a backup, and otherwise its queue holds, one probe
// ticket per cool-down. The episode ends with the first confirmed print.
//
// Within one episode at most maxFlagsPerEpisode tickets are flagged for a
// person, whatever the printer's policy: a printer that cuts every ticket
// is one problem, not a ticket each. A later uncertain ticket of the same
// episode waits in the queue marked REPRINT instead, so that it prints with
// a visible REPRINT line once the printer works again. With on_uncertain =
// "reprint" a ticket gets at most one automatic reprint.
const maxFlagsPerEpisode = 2

// coolDowns is the wait before a suspect printer's next ticket.
var coolDowns = backoff.Backoff{Min: time.Second, Max: 30 * time.Second, Jitter: -1}

// trouble is a printer's uncertain-outcome episode, in memory.
type trouble struct {
	streak  int           // uncertain outcomes in a row
	until   time.Duration // no attempt before this monotonic reading
	flagged int           // tickets flagged for a person in this episode
	active  bool          // streak reached suspect_after
	word    storeprint.Word
}

// suspect records an uncertain outcome at mono; cut tells whether the
// ticket was cut off before all its bytes went out.
func (t *trouble) suspect(mono time.Duration, cut bool, suspectAfter int) {
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

// suspect reports whether the printer's last attempt ended uncertain.
func (w *worker) suspect() bool {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	return w.g.status[w.id].Trouble.streak > 0
}

// uncertainOutcome records an uncertain outcome on the printer and returns
// whether the ticket may be flagged for a person.
func (w *worker) uncertainOutcome(cut bool) (mayFlag bool) {
	g := w.g
	g.mu.Lock()
	tr := &g.status[w.id].Trouble
	was := tr.active
	tr.suspect(g.clock.Mono(), cut, w.cfg.SuspectAfter)
	mayFlag = tr.mayFlag()
	now := tr.active && !was
	word := tr.word
	g.mu.Unlock()
	if now {
		g.changes.signal()
		g.log.Warn("printer in trouble", "printer", w.id, "trouble", storeprint.Say(word, "en"))
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
	g.mu.Unlock()
	if was {
		g.changes.signal()
		g.log.Info("printer out of trouble: a ticket printed and was confirmed", "printer", w.id)
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
