package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	gosync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/sync"
)

// TestModel drives the real gateway (real Badger in a temporary directory,
// the real dispatcher stepped by hand) with random sequences of what a
// shift brings: orders (replays and conflicts among them), voids, make-up
// prints, copies, "it printed", stale prints, failover acknowledgements and
// moves back, printer faults, time passing, the wall clock stepping, a
// kitchen screen showing, bumping, recalling and going dark, and crashes
// at any point of an attempt followed by a restart. After every
// action it checks the promise:
//
//	(b) nothing of a voided order prints after the void answered;
//	(c) a task is done only on a confirmation, or a person's word;
//	(d) no second paper of a task without REPRINT;
//	(e) every change of a task's status is in the transition table;
//	(f) every outbox event passes the cloud's own validation;
//	(g) no ticket is flagged stale that did not wait stale_after;
//	(h) at most two tickets flagged per printer per trouble episode;
//	(i) a failover goes to a printer that is ready when it starts: the
//	    first of the chain hot-1 → pass-1 → expo-1 that is neither out of
//	    paper, offline, cover open, in trouble nor failed over itself;
//	(j) the kitchen screen shows the tickets recalled to it and not bumped
//	    again, across restarts, and counts those it showed;
//	(k) the screen is online only while it spoke within offline_after;
//
// and at the end (a) no stall: with every printer healthy for longer
// than the longest backoff, every waiting ticket prints or leaves its
// queue. A failure prints the shortest sequence of actions that breaks one.
//
// make test runs a bounded number of cases; make model runs many more
// (go test -run TestModel -rapid.checks=N -rapid.steps=M ./gateway/).
func TestModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel(rt, t.TempDir())
		defer m.close()
		rt.Repeat(map[string]func(*rapid.T){
			"post":        m.post,
			"void":        m.void,
			"retry":       m.retry,
			"reprint":     m.reprint,
			"resolve":     m.resolve,
			"print-stale": m.printStale,
			"acknowledge": m.acknowledge,
			"failback":    m.failback,
			"fault":       m.fault,
			"advance":     m.advance,
			"wall":        m.stepWall,
			"crash":       m.crash,
			"dispatch":    func(*rapid.T) { m.dispatch() },
			"show":        m.show,
			"bump":        m.bump,
			"recall":      m.recall,
			"":            m.check,
		})
		m.drain()
	})
}

// Faults a fake printer can have.
const (
	faultNone      = "ok"
	faultOffline   = "offline"
	faultPaperEnd  = "paper_end"
	faultCoverOpen = "cover_open"
	faultCut       = "cut"  // the connection drops mid-ticket
	faultLost      = "lost" // the ticket prints, its confirmation is lost
	faultSlow      = "slow" // the confirmation comes late, within the timeout
)

var (
	faults       = []string{faultNone, faultOffline, faultPaperEnd, faultCoverOpen, faultCut, faultLost, faultSlow}
	stations     = []string{"hot", "bar", "cold"}
	orderIDs     = []string{"o1", "o2", "o3", "o4", "o5", "o6"}
	failpoints   = []string{"", gateway.FailpointAfterPrepared, gateway.FailpointBeforeSubmitted, gateway.FailpointBeforePrinted}
	modelBackoff = []time.Duration{5 * time.Second, 15 * time.Second, time.Minute}
)

const (
	hotStale = 10 * time.Minute
	barStale = 30 * time.Minute
)

// paper is a ticket (or part of one) that came out of a printer.
type paper struct {
	taskNo  string
	reprint bool
	partial bool
	action  int // the number of the action during which it came out
}

type model struct {
	t     *rapid.T
	dir   string
	clock *clock.Fake
	cfg   *gateway.Config
	log   *slog.Logger

	db      *badger.DB
	g       *gateway.Gateway
	dead    atomic.Bool // the process died: nothing more becomes durable
	crashAt string      // the failpoint at which the next attempt dies

	printers map[string]*fakePrinter

	mu        gosync.Mutex
	papers    []paper
	confirmed map[string]bool // task_no/process id the printer confirmed
	bumped    map[string]bool // task_no a cook bumped on the screen
	recalled  map[string]bool // task_no recalled to the screen, not bumped again
	heard     time.Duration   // when the screen last spoke, on the monotonic clock
	heardSet  bool            // it spoke since the gateway's start
	action    int

	voidedAt map[string]int    // order id → action that voided it
	content  map[string]string // order id → content accepted
	born     map[string]born   // task_no → when it was accepted
	restarts []restart
	jitter   *rand.Rand // the backoff's jitter, seeded by the case so that it replays

	failovers map[string]bool // failovers seen start, by printer, backup and time
}

type born struct {
	mono time.Duration
	wall time.Time
}

type restart struct {
	mono time.Duration
	wall time.Time
	from uint64 // the last outbox event before it
	to   uint64 // the last outbox event of its recovery
}

func newModel(t *rapid.T, dir string) *model {
	m := &model{
		t: t, dir: dir, clock: clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)),
		log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		printers:  map[string]*fakePrinter{},
		confirmed: map[string]bool{}, bumped: map[string]bool{}, recalled: map[string]bool{},
		voidedAt: map[string]int{}, content: map[string]string{}, born: map[string]born{},
		failovers: map[string]bool{},
		jitter:    rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "jitter seed"), 0)),
	}
	m.cfg = &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
		Printers: []gateway.PrinterConfig{
			{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9", OnUncertain: "hold", Backup: "pass-1"},
			{ID: "pass-1", Driver: "tcp", Address: "127.0.0.1:9", OnUncertain: "reprint", Backup: "expo-1"},
			{ID: "expo-1", Driver: "tcp", Address: "127.0.0.1:9", OnUncertain: "hold"},
		},
		// Station cold shows on a kitchen screen; pass-1 prints its
		// tickets while the screen is dark.
		Displays: []gateway.DisplayConfig{{ID: "kds-cold", Backup: "pass-1"}},
		Stations: []gateway.StationConfig{
			{Name: "hot", Printer: "hot-1", StaleAfter: gateway.Duration{Duration: hotStale}},
			{Name: "bar", Printer: "pass-1", StaleAfter: gateway.Duration{Duration: barStale}},
			{Name: "cold", Display: "kds-cold", StaleAfter: gateway.Duration{Duration: barStale}},
		},
	}
	m.cfg.SetDefaults()
	if err := m.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, pc := range m.cfg.Printers {
		m.printers[pc.ID] = &fakePrinter{m: m, id: pc.ID, fault: faultNone}
	}
	m.open()
	return m
}

// open starts the gateway on the data dir, as the binary does at start.
func (m *model) open() {
	db, err := badger.Open(m.dir, badger.Options{MinFreeBytes: 1, Logger: m.log, Now: m.clock.Now})
	if err != nil {
		m.t.Fatalf("open store: %v", err)
	}
	m.db = db
	m.dead.Store(false)
	printers := map[string]gateway.Printer{}
	for id, p := range m.printers {
		printers[id] = p
	}
	g, err := gateway.New(m.cfg, mortalStore{Store: db, dead: &m.dead}, printers, gateway.Options{
		Clock: m.clock, Logger: m.log, Backoff: modelBackoff, Rand: m.jitter.Float64,
		Failpoint: func(name string) {
			if name == m.crashAt {
				m.crashAt = ""
				m.dead.Store(true)
			}
		},
	})
	if err != nil {
		m.t.Fatal(err)
	}
	m.g = g
	m.heardSet = false // a start forgets when the screen last spoke
	r := restart{mono: m.clock.Mono(), wall: m.clock.Now(), from: m.lastSeq()}
	if err := g.Boot(context.Background()); err != nil {
		m.t.Fatalf("boot: %v", err)
	}
	// Recovery at boot flags what the crash left uncertain by its own rule;
	// trouble episodes start after it.
	r.to = m.lastSeq()
	m.restarts = append(m.restarts, r)
}

func (m *model) lastSeq() uint64 {
	st, err := m.g.SyncState(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	return st.Last
}

// restart stops the gateway as a crash would and starts it again.
func (m *model) restart() {
	if err := m.db.Close(); err != nil {
		m.t.Fatalf("close store: %v", err)
	}
	m.clock.Advance(2 * time.Second) // the service manager starts it again
	m.open()
}

func (m *model) close() {
	if m.db != nil {
		m.db.Close()
	}
}

// mortalStore refuses every write once the process it belongs to died.
// It also runs every update's function twice, throwing the first run
// away, as Store.Update may: a caller that counts or appends across runs
// shows up as a broken invariant.
type mortalStore struct {
	gateway.Store
	dead *atomic.Bool
}

var errRunAgain = errors.New("run again")

func (s mortalStore) Update(ctx context.Context, fn func(gateway.Tx) error) error {
	if s.dead.Load() {
		return errors.New("the process died")
	}
	err := s.Store.Update(ctx, func(tx gateway.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errRunAgain
	})
	if !errors.Is(err, errRunAgain) {
		return err
	}
	return s.Store.Update(ctx, fn)
}

// fakePrinter is a printer whose behaviour the model scripts. It renders
// each ticket with the real encoder and keeps the rules every driver keeps:
// no byte before Prepare, uncertain from the first byte, success only on
// the printer's own answer.
type fakePrinter struct {
	m     *model
	id    string
	fault string
}

var (
	_ gateway.Printer = (*fakePrinter)(nil)
	_ gateway.Prober  = (*fakePrinter)(nil)
)

func (p *fakePrinter) Status(context.Context) (storeprint.PrinterStatus, error) {
	switch p.fault {
	case faultOffline:
		return storeprint.PrinterStatus{State: storeprint.PrinterOffline}, nil
	case faultPaperEnd:
		return storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd}, nil
	case faultCoverOpen:
		return storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen}, nil
	}
	return storeprint.PrinterStatus{State: storeprint.PrinterReady}, nil
}

func (p *fakePrinter) Print(ctx context.Context, job *gateway.PrintJob) error {
	m := p.m
	switch p.fault {
	case faultOffline:
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, State: storeprint.PrinterOffline, Err: errors.New("connection refused")}
	case faultPaperEnd, faultCoverOpen:
		st, _ := p.Status(ctx)
		return &gateway.PrintError{Outcome: gateway.PrintNotReady, State: st.State}
	}
	payload, err := escpos.Encode(job.Ticket, gateway.DefaultEncoding, 48, time.UTC)
	if err != nil {
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, Err: err}
	}
	if err := job.Prepare(ctx, payload); err != nil {
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, Err: err}
	}
	if m.dead.Load() {
		return errors.New("the process died before the first byte")
	}
	m.mu.Lock()
	m.papers = append(m.papers, paper{taskNo: job.Ticket.TaskNo, reprint: job.Ticket.Reprint, partial: p.fault == faultCut, action: m.action})
	m.mu.Unlock()
	if p.fault == faultCut {
		return &gateway.PrintError{Outcome: gateway.PrintUncertain, Err: fmt.Errorf("mid-ticket: %w", syscall.ECONNRESET)}
	}
	job.Submitted(ctx, "")
	if m.dead.Load() {
		return errors.New("the process died after the bytes went out")
	}
	if p.fault == faultLost {
		return &gateway.PrintError{Outcome: gateway.PrintUncertain, Err: fmt.Errorf("no confirmation within the timeout: %w", context.DeadlineExceeded)}
	}
	if p.fault == faultSlow {
		m.clock.Advance(3 * time.Second)
	}
	m.mu.Lock()
	m.confirmed[job.Ticket.TaskNo+"/"+job.ProcessID] = true
	m.mu.Unlock()
	return nil
}

// Probe answers a confirmation request sent alone, as an ESC/POS printer
// does when it is online: one that cuts off mid-ticket answers it (there
// is no ticket text to cut off), one that loses confirmations does not.
func (p *fakePrinter) Probe(context.Context) error {
	switch p.fault {
	case faultNone, faultSlow, faultCut:
		return nil
	}
	return errors.New("no answer to the confirmation request")
}

func (p *fakePrinter) Close() error { return nil }

// dispatch runs every printer's queue until each waits for time to pass.
func (m *model) dispatch() {
	ctx := context.Background()
	ids := []string{"hot-1", "pass-1", "expo-1"}
	m.g.CheckDisplays(ctx) // a screen silent for offline_after goes dark
	if m.dead.Load() {
		m.restart()
	}
	for round := 0; ; round++ {
		if round > 400 {
			m.t.Fatalf("no stall: the dispatcher keeps working without time passing (a ticket re-leased for ever?)")
		}
		busy := false
		for _, id := range ids {
			if m.g.Step(ctx, id) == 0 {
				busy = true
			}
			m.checkFailovers()
			if m.dead.Load() {
				m.restart()
				busy = true
			}
		}
		if !busy {
			return
		}
	}
}

func (m *model) next() {
	m.mu.Lock()
	m.action++
	m.mu.Unlock()
}

// Actions.

func (m *model) post(t *rapid.T) {
	m.next()
	id := rapid.SampledFrom(orderIDs).Draw(t, "order")
	sts := rapid.SliceOfNDistinct(rapid.SampledFrom(stations), 1, 2, rapid.ID[string]).Draw(t, "stations")
	variant := rapid.IntRange(0, 1).Draw(t, "variant")
	o := &storeprint.Order{OrderID: id, Table: "A1"}
	for _, s := range sts {
		o.Items = append(o.Items, storeprint.Item{Name: fmt.Sprintf("dish %d", variant), Qty: 1, Station: s})
	}
	res, created, err := m.g.AcceptOrder(context.Background(), o, storeprint.SourcePOS)
	prev, seen := m.content[id]
	switch {
	case err != nil && storeprint.ErrorCode(err) == storeprint.ECONFLICT:
		if !seen || prev == o.Digest() {
			t.Fatalf("post %s: got conflict for %s", id, map[bool]string{false: "a new order", true: "the same content"}[seen])
		}
	case err != nil:
		if !m.dead.Load() {
			t.Fatalf("post %s: %v", id, err)
		}
	case created:
		if seen {
			t.Fatalf("post %s: accepted twice", id)
		}
		m.content[id] = o.Digest()
		for _, tr := range res.Tasks {
			m.born[tr.TaskNo] = born{mono: m.clock.Mono(), wall: m.clock.Now()}
		}
	default:
		if !seen || prev != o.Digest() {
			t.Fatalf("post %s: answered as a replay", id)
		}
	}
}

func (m *model) void(t *rapid.T) {
	m.next()
	id := rapid.SampledFrom(orderIDs).Draw(t, "order")
	_, err := m.g.Void(context.Background(), id, gateway.Actor{Operator: "amy", Reason: "guest left"})
	if _, seen := m.content[id]; !seen {
		if storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
			t.Fatalf("void of an unknown order: got %v, want not found", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("void %s: %v", id, err)
	}
	if _, ok := m.voidedAt[id]; !ok {
		m.voidedAt[id] = m.action
	}
}

// someTask draws one of the tasks the store holds.
func (m *model) someTask(t *rapid.T) (*gateway.Task, bool) {
	all, err := m.g.Tasks(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		return nil, false
	}
	nos := make([]string, len(all))
	for i, task := range all {
		nos[i] = task.TaskNo
	}
	i := slices.Index(nos, rapid.SampledFrom(nos).Draw(t, "task"))
	return all[i], true
}

func (m *model) retry(t *rapid.T) {
	m.next()
	task, ok := m.someTask(t)
	if !ok {
		return
	}
	res, err := m.g.Retry(context.Background(), task.TaskNo, gateway.Actor{Operator: "amy", Reason: "make-up"})
	_, voided := m.voidedAt[task.OrderID]
	if err == nil && res.Changed && voided {
		t.Fatalf("make-up print of %s accepted although order %s was voided", task.TaskNo, task.OrderID)
	}
	if err != nil && storeprint.ErrorCode(err) != storeprint.ECONFLICT {
		t.Fatalf("retry %s: %v", task.TaskNo, err)
	}
}

func (m *model) reprint(t *rapid.T) {
	m.next()
	task, ok := m.someTask(t)
	if !ok || task.Source == storeprint.SourceTestPage {
		return
	}
	cp, err := m.g.Reprint(context.Background(), task.TaskNo, gateway.Actor{Operator: "amy", Reason: "dropped it"})
	if _, voided := m.voidedAt[task.OrderID]; voided {
		if storeprint.ErrorCode(err) != storeprint.ECONFLICT || !strings.Contains(storeprint.ErrorMessage(err), "voided") {
			t.Fatalf("copy of %s of voided order %s: got %v, want a conflict naming the void", task.TaskNo, task.OrderID, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("copy of %s: %v", task.TaskNo, err)
	}
	m.born[cp.TaskNo] = born{mono: m.clock.Mono(), wall: m.clock.Now()}
}

func (m *model) resolve(t *rapid.T) {
	m.next()
	task, ok := m.someTask(t)
	if !ok {
		return
	}
	_, err := m.g.Resolve(context.Background(), task.TaskNo, "printed", gateway.Actor{Operator: "amy", Reason: "saw it"})
	if (err == nil) != (task.Status == storeprint.StatusAttention) {
		t.Fatalf("resolve %s (%s): %v", task.TaskNo, task.Status, err)
	}
}

func (m *model) printStale(t *rapid.T) {
	m.next()
	st := rapid.SampledFrom(stations).Draw(t, "station")
	if _, err := m.g.PrintStale(context.Background(), st, gateway.Actor{Operator: "amy", Reason: "late"}); err != nil && storeprint.ErrorCode(err) != storeprint.ECONFLICT {
		t.Fatalf("print stale %s: %v", st, err)
	}
}

func (m *model) acknowledge(t *rapid.T) {
	m.next()
	id := rapid.SampledFrom([]string{"hot-1", "pass-1", "kds-cold"}).Draw(t, "printer")
	if _, err := m.g.AckFailover(context.Background(), id, "amy", "seen"); err != nil && storeprint.ErrorCode(err) != storeprint.ECONFLICT {
		t.Fatalf("acknowledge: %v", err)
	}
}

func (m *model) failback(t *rapid.T) {
	m.next()
	id := rapid.SampledFrom([]string{"hot-1", "pass-1", "kds-cold"}).Draw(t, "printer")
	force := rapid.Bool().Draw(t, "force")
	if _, err := m.g.Failback(context.Background(), id, "amy", "fixed", force); err != nil && storeprint.ErrorCode(err) != storeprint.ECONFLICT {
		t.Fatalf("failback: %v", err)
	}
}

func (m *model) fault(t *rapid.T) {
	m.next()
	id := rapid.SampledFrom([]string{"hot-1", "pass-1", "expo-1"}).Draw(t, "printer")
	m.printers[id].fault = rapid.SampledFrom(faults).Draw(t, "fault")
}

func (m *model) advance(t *rapid.T) {
	m.next()
	d := rapid.SampledFrom([]time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute, 11 * time.Minute}).Draw(t, "by")
	m.clock.Advance(d)
	m.dispatch()
}

func (m *model) stepWall(t *rapid.T) {
	m.next()
	m.clock.StepWall(rapid.SampledFrom([]time.Duration{-10 * time.Minute, 10 * time.Minute, 31 * time.Minute}).Draw(t, "by"))
}

func (m *model) crash(t *rapid.T) {
	m.next()
	if at := rapid.SampledFrom(failpoints).Draw(t, "at"); at != "" {
		m.crashAt = at // the next attempt dies there
		return
	}
	m.restart() // now, between two attempts
}

// show is the kitchen screen's poll: it speaks (a dark screen comes back)
// and shows every ticket waiting for it. A ticket shown is delivered, as
// paper is: (b) and (d) count it.
func (m *model) show(t *rapid.T) {
	m.next()
	ctx := context.Background()
	if err := m.g.DisplayHeard(ctx, "kds-cold"); err != nil {
		if m.dead.Load() {
			return
		}
		t.Fatalf("screen heard: %v", err)
	}
	m.heard, m.heardSet = m.clock.Mono(), true
	st, err := m.g.ShowTickets(ctx, "kds-cold")
	if err != nil {
		t.Fatal(err)
	}
	var nos []string
	var fresh []*gateway.Task
	for _, task := range st.Open {
		nos = append(nos, task.TaskNo)
		if task.Status != storeprint.StatusPrinting {
			fresh = append(fresh, task)
		}
	}
	n, err := m.g.Shown(ctx, "kds-cold", nos)
	if err != nil || n != len(fresh) {
		t.Fatalf("shown %v: got %d %v, want %d delivered", nos, n, err, len(fresh))
	}
	m.mu.Lock()
	for _, task := range fresh {
		m.papers = append(m.papers, paper{taskNo: task.TaskNo, reprint: task.Reprint, action: m.action})
	}
	m.mu.Unlock()
}

// bump is a cook's bump of any ticket on the screen: done, confirmed by
// the bump; a ticket elsewhere or not open is refused.
func (m *model) bump(t *rapid.T) {
	m.next()
	task, ok := m.someTask(t)
	if !ok {
		return
	}
	got, err := m.g.Bump(context.Background(), task.TaskNo, gateway.DisplayAction{DisplayID: "kds-cold", Operator: "device:dev-1", Device: "dev-1"})
	switch {
	case err == nil:
		if got.Status != storeprint.StatusDone {
			t.Fatalf("bump %s: got %s, want done", task.TaskNo, got.Status)
		}
		if task.Status == storeprint.StatusQueued || task.Status == storeprint.StatusRetryWait {
			// Bumped before the screen said it showed it: shown now.
			m.mu.Lock()
			m.papers = append(m.papers, paper{taskNo: task.TaskNo, reprint: task.Reprint, action: m.action})
			m.mu.Unlock()
		}
		if task.Status != storeprint.StatusDone {
			m.bumped[task.TaskNo] = true
		}
		delete(m.recalled, task.TaskNo) // a recalled ticket bumped again is put away
	case storeprint.ErrorCode(err) == storeprint.ECONFLICT:
		if task.PrinterID == "kds-cold" && task.Status.Open() {
			t.Fatalf("bump of %s (%s on the screen) refused: %v", task.TaskNo, task.Status, err)
		}
	default:
		t.Fatalf("bump %s: %v", task.TaskNo, err)
	}
}

// recall shows a bumped ticket again; it stays done.
func (m *model) recall(t *rapid.T) {
	m.next()
	task, ok := m.someTask(t)
	if !ok {
		return
	}
	got, err := m.g.Recall(context.Background(), task.TaskNo, gateway.DisplayAction{DisplayID: "kds-cold", Operator: "device:dev-1"})
	switch {
	case err == nil:
		if !m.bumped[task.TaskNo] || got.Status != storeprint.StatusDone {
			t.Fatalf("recall of %s (%s, bumped %t) accepted", task.TaskNo, got.Status, m.bumped[task.TaskNo])
		}
		m.recalled[task.TaskNo] = true
	case storeprint.ErrorCode(err) != storeprint.ECONFLICT:
		t.Fatalf("recall %s: %v", task.TaskNo, err)
	}
}

// Invariants.

// checkFailovers checks (i) for every failover that started since the
// last look: its backup could print when it started. Faults change only
// between dispatches, so the printer's fault now is its fault then.
func (m *model) checkFailovers() {
	if m.dead.Load() {
		return
	}
	ps, err := m.g.Printers(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	byID := map[string]gateway.PrinterInfo{}
	for _, p := range ps {
		byID[p.ID] = p
	}
	for _, p := range ps {
		f := p.Failover
		if f == nil || !f.Active {
			continue
		}
		key := fmt.Sprintf("%s→%s@%d", p.ID, f.Backup, f.Since.UnixNano())
		if m.failovers[key] {
			continue
		}
		m.failovers[key] = true
		b := byID[f.Backup]
		switch fault := m.printers[f.Backup].fault; {
		case fault == faultOffline || fault == faultPaperEnd || fault == faultCoverOpen:
			m.t.Fatalf("(i) %s failed over onto %s, which is %s", p.ID, f.Backup, fault)
		case b.InTrouble:
			m.t.Fatalf("(i) %s failed over onto %s, which is in trouble (%s)", p.ID, f.Backup, b.Word)
		case b.Failover != nil && b.Failover.Active:
			m.t.Fatalf("(i) %s failed over onto %s, which is failed over itself", p.ID, f.Backup)
		}
	}
}

func (m *model) check(t *rapid.T) {
	ctx := context.Background()
	tasks, err := m.g.Tasks(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	byNo := map[string]*gateway.Task{}
	for _, task := range tasks {
		byNo[task.TaskNo] = task
	}
	audit, err := m.g.Audit(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	resolved := map[string]bool{}
	for _, a := range audit {
		if a.Action == storeprint.ActionResolve {
			resolved[a.TaskNo] = true
		}
	}

	m.mu.Lock()
	papers := slices.Clone(m.papers)
	confirmed := m.confirmed
	bumped := m.bumped
	m.mu.Unlock()

	// (j) the screen shows every ticket recalled and not bumped again, and
	// no other, across restarts; each of its open tickets it showed counts
	// as shown.
	show, err := m.g.ShowTickets(ctx, "kds-cold")
	if err != nil {
		t.Fatal(err)
	}
	var onScreen, want []string
	for _, task := range show.Recalled {
		onScreen = append(onScreen, task.TaskNo)
	}
	for no := range m.recalled {
		want = append(want, no)
	}
	slices.Sort(onScreen)
	slices.Sort(want)
	if !slices.Equal(onScreen, want) {
		t.Fatalf("(j) the screen shows %v recalled, want %v", onScreen, want)
	}
	shown := 0
	for _, task := range tasks {
		if task.PrinterID == "kds-cold" && task.Status == storeprint.StatusPrinting {
			shown++
		}
	}
	if show.Display.Shown != shown {
		t.Fatalf("(j) the screen counts %d shown, want %d", show.Display.Shown, shown)
	}

	// (k) the screen is online while it spoke within offline_after since
	// the start, and offline (red) otherwise.
	online := m.heardSet && m.clock.Mono()-m.heard < m.cfg.Displays[0].OfflineAfter.Duration
	if got := show.Display.State == gateway.DisplayOnline; got != online {
		t.Fatalf("(k) the screen is %s, want online %t (spoke %t, %s ago)", show.Display.State, online, m.heardSet, m.clock.Mono()-m.heard)
	}
	// (g) on the screen too: no ticket is stale there before it waited
	// stale_after.
	for _, no := range show.Display.StaleTasks {
		if byNo[no] == nil {
			t.Fatalf("(g) %s stale on the screen, a task the store does not hold", no)
		}
		if waited, limit := m.waited(byNo[no]), staleFor("cold"); waited < limit {
			t.Fatalf("(g) %s stale on the screen after waiting %s, under its %s", no, waited, limit)
		}
	}

	// (b) nothing of a voided order prints after the void answered.
	plain := map[string]int{}
	for _, p := range papers {
		task := byNo[p.taskNo]
		if task == nil {
			t.Fatalf("paper for %s, a task the store does not hold", p.taskNo)
		}
		if at, ok := m.voidedAt[task.OrderID]; ok && p.action > at {
			t.Fatalf("(b) %s printed at action %d, after its order %s was voided at action %d", p.taskNo, p.action, task.OrderID, at)
		}
		// (d) no second paper without REPRINT.
		if !p.reprint {
			if plain[p.taskNo]++; plain[p.taskNo] > 1 {
				t.Fatalf("(d) %s came out twice without REPRINT", p.taskNo)
			}
		}
	}

	for _, task := range tasks {
		// (c) done only on the printer's confirmation or a person's word.
		if task.Status == storeprint.StatusDone && !resolved[task.TaskNo] {
			rs, err := m.g.Receipts(ctx, task.TaskNo)
			if err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, r := range rs {
				if (r.State == storeprint.ReceiptPrinted || r.State == storeprint.ReceiptConfirmed) && confirmed[task.TaskNo+"/"+r.ProcessID] {
					ok = true
				}
				if r.State == storeprint.ReceiptPrinted && r.ConfirmedBy == gateway.ConfirmedByBump && bumped[task.TaskNo] && r.PrinterID == "kds-cold" {
					ok = true // a cook's bump on the screen that showed it
				}
			}
			if !ok {
				t.Fatalf("(c) %s is done without a confirmation or a person's word (receipts %+v)", task.TaskNo, rs)
			}
		}
		// (g) not flagged stale before it waited stale_after.
		if task.Status == storeprint.StatusAttention && task.Reason == storeprint.ReasonStale {
			if waited, limit := m.waited(task), staleFor(task.Station); waited < limit {
				t.Fatalf("(g) %s flagged stale after waiting %s, under its %s", task.TaskNo, waited, limit)
			}
		}
	}

	// (e) every status change is in the table, (f) every event passes
	// the cloud's validation.
	events, err := m.g.OutboxEvents(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]storeprint.Status{}
	flagged := map[string]int{} // printer → tickets flagged uncertain in its episode
	restarts := slices.Clone(m.restarts)
	for i := range events {
		d, err := sync.DecodeEvent(&events[i])
		if err != nil {
			t.Fatalf("(f) the cloud refuses outbox event %d: %v", events[i].Seq, err)
		}
		for len(restarts) > 0 && events[i].Seq > restarts[0].from {
			// A restart begins new episodes, after its recovery (which
			// flags what the crash left uncertain by its own rule).
			clear(flagged)
			if events[i].Seq <= restarts[0].to {
				break
			}
			restarts = restarts[1:]
		}
		recovering := len(restarts) > 0 && events[i].Seq > restarts[0].from && events[i].Seq <= restarts[0].to
		if d.Receipt != nil && d.Receipt.State == storeprint.ReceiptPrinted {
			delete(flagged, d.Receipt.PrinterID) // a confirmed print ends the episode
		}
		if d.Task == nil {
			continue
		}
		if !recovering && d.Task.Status == storeprint.StatusAttention && d.Task.Reason == storeprint.ReasonUncertain && last[d.Task.TaskNo] == storeprint.StatusPrinting {
			if flagged[d.Task.PrinterID]++; flagged[d.Task.PrinterID] > 2 {
				t.Fatalf("(h) printer %s flagged a third ticket (%s) in one trouble episode", d.Task.PrinterID, d.Task.TaskNo)
			}
		}
		from, ok := last[d.Task.TaskNo]
		if !ok {
			from = storeprint.StatusNew
		}
		if !storeprint.CanTransition(from, d.Task.Status) {
			t.Fatalf("(e) %s moved from %q to %q, not in the transition table", d.Task.TaskNo, from, d.Task.Status)
		}
		last[d.Task.TaskNo] = d.Task.Status
	}
}

// waited returns the longest a task can be said to have waited: on the
// monotonic clock since it was accepted, or, after a restart that the
// gateway re-based it across, what the wall clock said at that restart.
func (m *model) waited(task *gateway.Task) time.Duration {
	b := m.born[task.TaskNo]
	w := m.clock.Mono() - b.mono
	for _, r := range m.restarts {
		if r.mono > b.mono {
			w = max(w, r.wall.Sub(task.CreatedAt)+m.clock.Mono()-r.mono)
		}
	}
	return w
}

func staleFor(station string) time.Duration {
	if station == "hot" {
		return hotStale
	}
	return barStale
}

// drain heals every printer and lets time pass beyond the longest backoff:
// (a) every waiting ticket then prints or leaves its queue.
func (m *model) drain() {
	m.next()
	for _, p := range m.printers {
		p.fault = faultNone
	}
	m.crashAt = ""
	m.dispatch()
	longest := modelBackoff[len(modelBackoff)-1]
	for waited := time.Duration(0); waited <= 2*longest; waited += 5 * time.Second {
		m.clock.Advance(5 * time.Second)
		m.dispatch()
	}
	m.check(m.t)
	tasks, err := m.g.Tasks(context.Background(), "", 0)
	if err != nil {
		m.t.Fatal(err)
	}
	var open []string
	for _, task := range tasks {
		if task.Status.Open() {
			open = append(open, fmt.Sprintf("%s (%s on %s: %s)", task.TaskNo, task.Status, task.PrinterID, task.LastError))
		}
	}
	sort.Strings(open)
	if len(open) > 0 {
		m.t.Fatalf("(a) stalled: with every printer healthy for %s these still wait: %s", 2*longest, strings.Join(open, "; "))
	}
}
