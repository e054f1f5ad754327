package gateway

import (
	"context"
	"fmt"
	"log/slog"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/backoff"
	"github.com/storeprint/storeprint/internal/clock"
)

// DefaultBackoff is the wait after each failed attempt known not to have
// printed; the last step repeats. Each wait gets the jitter of package
// backoff (±20%).
var DefaultBackoff = []time.Duration{5 * time.Second, 15 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute}

// Observer receives the gateway's measurements (gateway/prometheus).
type Observer interface {
	Printed(printerID string, timeToPaper time.Duration)
	Attempt(printerID, outcome string) // outcome: printed, not_sent, not_ready, uncertain, fenced
	Retry(printerID string)
}

// StoreObserver receives the store's disk timings (gateway/prometheus):
// each sync that made updates durable, with how many it covered, and each
// update from its call to its answer, the store's share of the wait of
// whoever asked (a POS posting an order, a printer's worker). Its methods
// run on the store's write path and must return at once.
type StoreObserver interface {
	Synced(d time.Duration, updates int)
	Updated(d time.Duration)
}

type nopObserver struct{}

func (nopObserver) Printed(string, time.Duration) {}
func (nopObserver) Attempt(string, string)        {}
func (nopObserver) Retry(string)                  {}

// Options are the gateway's run-time knobs; zero values mean the defaults.
type Options struct {
	Backoff []time.Duration
	// StatusPoll is how often a printer with waiting work or trouble is
	// asked for its status; IdlePoll how often an idle, healthy one is.
	StatusPoll time.Duration // default 1s
	IdlePoll   time.Duration // default 30s
	// SweepEvery is how often waiting tasks are checked for staleness.
	SweepEvery time.Duration // default 5s
	// LeaseMargin is added to a printer's connect and confirm timeouts to
	// make an attempt's lease; a driver still busy LeaseMargin/2 after
	// the lease expired is abandoned.
	LeaseMargin time.Duration // default 10s
	// StartupGrace bounds the start-up hold of a gateway with a [cloud]
	// link (see learn.go); default DefaultStartupGrace, negative: none.
	StartupGrace time.Duration
	// Clock tells the time and waits (default: the system's clock). Every
	// wait is measured on its monotonic reading; see times.
	Clock    clock.Clock
	Logger   *slog.Logger
	Observer Observer
	// Rand returns the random numbers in [0, 1) that spread the waits
	// after failed attempts (±20 %); nil means math/rand/v2. A test sets
	// it so that a run's waits replay.
	Rand func() float64
	// Failpoint, when set, is called at named points of an attempt (the
	// Failpoint* names). Production builds leave it nil; the gateway
	// binary's failpoints build tag sets it (cmd/storeprint-gateway).
	Failpoint func(name string)
}

// Gateway is the store daemon's core: it accepts orders into the durable
// store and drives each printer's queue to confirmed paper.
type Gateway struct {
	cfg      *Config
	store    Store
	printers map[string]Printer
	opts     Options
	log      *slog.Logger
	obs      Observer
	clock    clock.Clock
	now      func() time.Time // the wall clock, for what is stored and shown
	times    *times
	backoff  backoff.Backoff // waits after failed attempts

	stations map[string]*StationConfig
	pcfg     map[string]*PrinterConfig
	displays map[string]*displayState // kitchen screens (display.go)

	mu       stdsync.Mutex
	failover map[string]*Failover // by printer id; cached copy of the store's
	status   map[string]*printerStatus
	workers  map[string]*worker
	changes  changes
	startup  *startupHold // nil when standalone
	leader   LeaderFence  // nil unless the store is a cluster's

	wg stdsync.WaitGroup
}

// printerStatus is what the gateway last learned of a printer.
type printerStatus struct {
	State        storeprint.PrinterState
	PaperNearEnd bool
	CheckedAt    time.Time
	LastError    string
	Streak       int   // attempts in a row that did not print
	FailingSince since // unset when the last attempt or status was fine
	HealthySince since // since when it reports ready
	// NoBackupReady: it would fail over, but no printer along its chain
	// of backups is ready; its tickets wait.
	NoBackupReady bool
	Trouble       trouble
}

// since is a moment on the monotonic clock, or none.
type since struct {
	at  time.Duration
	set bool
}

// mark sets s to now unless it is set already.
func (s *since) mark(now time.Duration) {
	if !s.set {
		*s = since{at: now, set: true}
	}
}

// For returns how long ago s was set, and false when it is not.
func (s since) For(now time.Duration) (time.Duration, bool) { return now - s.at, s.set }

// PrinterInfo is a printer's state as shown to people.
type PrinterInfo struct {
	ID           string                  `json:"id"`
	Status       storeprint.PrinterState `json:"status"`
	PaperNearEnd bool                    `json:"paper_near_end"`
	Stations     []string                `json:"stations"`
	Backup       string                  `json:"backup"`
	Failover     *Failover               `json:"failover"`
	Queue        int                     `json:"queue"`
	LastError    string                  `json:"last_error,omitempty"`
	// Word is what people read about the printer now: its trouble when it
	// is in trouble (cuts off, does not confirm), else its state.
	Word      storeprint.Word `json:"word"`
	InTrouble bool            `json:"in_trouble,omitempty"`
	// Confirms says how the printer confirms its prints now: process_id,
	// transmit_status, status (tcp and serial; "auto" until it was first
	// reached), or the driver's own word (job_log, epos, cloudprnt,
	// spooler). ConfirmsNote is the line people read where that is weaker
	// than the printer's own answer for each ticket.
	Confirms     string          `json:"confirms,omitempty"`
	ConfirmsNote storeprint.Word `json:"confirms_note,omitempty"`
	// NoBackupReady: the printer should hand its tickets to a backup,
	// but no printer along its chain of backups is ready to take them.
	NoBackupReady bool       `json:"no_backup_ready,omitempty"`
	CheckedAt     *time.Time `json:"checked_at,omitempty"`
	Storage       string     `json:"storage_error,omitempty"`
}

// New returns a gateway over a validated configuration, its store and one
// open Printer per configured printer id.
func New(cfg *Config, store Store, printers map[string]Printer, opts Options) (*Gateway, error) {
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	if opts.StatusPoll == 0 {
		opts.StatusPoll = time.Second
	}
	if opts.IdlePoll == 0 {
		opts.IdlePoll = 30 * time.Second
	}
	if opts.SweepEvery == 0 {
		opts.SweepEvery = 5 * time.Second
	}
	if opts.LeaseMargin == 0 {
		opts.LeaseMargin = 10 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	g := &Gateway{
		cfg: cfg, store: store, printers: printers, opts: opts,
		log: opts.Logger, obs: opts.Observer, clock: opts.Clock, now: opts.Clock.Now,
		stations: map[string]*StationConfig{},
		pcfg:     map[string]*PrinterConfig{},
		failover: map[string]*Failover{},
		status:   map[string]*printerStatus{},
		workers:  map[string]*worker{},
	}
	g.backoff = backoff.Backoff{Steps: opts.Backoff, Rand: opts.Rand}
	g.times = newTimes(opts.Clock, g.backoff.Longest()+opts.StatusPoll)
	g.leader, _ = store.(LeaderFence)
	g.store = notifyingStore{Store: store, c: &g.changes, times: g.times, now: g.now}
	if opts.StartupGrace == 0 {
		opts.StartupGrace = DefaultStartupGrace
	}
	if cfg.Cloud != nil && opts.StartupGrace > 0 {
		g.startup = newStartupHold(opts.StartupGrace)
	}
	for i := range cfg.Stations {
		g.stations[cfg.Stations[i].Name] = &cfg.Stations[i]
	}
	g.initDisplays()
	for i := range cfg.Printers {
		p := &cfg.Printers[i]
		g.pcfg[p.ID] = p
		if printers[p.ID] == nil {
			return nil, fmt.Errorf("no driver opened for printer %q", p.ID)
		}
		g.status[p.ID] = &printerStatus{State: storeprint.PrinterUnknown}
		g.workers[p.ID] = &worker{g: g, id: p.ID, printer: printers[p.ID], cfg: p, wake: make(chan struct{}, 1)}
	}
	return g, nil
}

// Config returns the gateway's configuration.
func (g *Gateway) Config() *Config { return g.cfg }

// Store returns the gateway's store.
func (g *Gateway) Store() Store { return g.store }

// Run recovers interrupted attempts, then drives every printer's queue
// until ctx is done.
func (g *Gateway) Run(ctx context.Context) error {
	if err := g.boot(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting: nothing half done, boot runs again next time
		}
		return err
	}
	if g.startup != nil {
		go g.startup.expire(ctx, g)
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.watchDisplays(ctx)
	}()
	for _, w := range g.workers {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			w.run(ctx)
		}()
	}
	<-ctx.Done()
	g.wg.Wait()
	return nil
}

// boot loads the failovers and settles the attempts a previous run left
// open, before any printer is driven.
func (g *Gateway) boot(ctx context.Context) error {
	if err := g.loadFailovers(ctx); err != nil {
		return err
	}
	if err := g.Recover(ctx); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	if err := g.loadRecalled(ctx); err != nil {
		return fmt.Errorf("read recalled tickets: %w", err)
	}
	return nil
}

func (g *Gateway) loadFailovers(ctx context.Context) error {
	return g.store.View(ctx, func(tx ReadTx) error {
		ids := make([]string, 0, len(g.pcfg)+len(g.displays))
		for id := range g.pcfg {
			ids = append(ids, id)
		}
		for id := range g.displays {
			ids = append(ids, id)
		}
		for _, id := range ids {
			f, err := tx.Failover(id)
			if err != nil {
				return err
			}
			if f != nil {
				g.mu.Lock()
				g.failover[id] = f
				g.mu.Unlock()
			}
		}
		return nil
	})
}

// wake tells a printer's worker that its queue changed.
func (g *Gateway) wake(printerID string) {
	g.mu.Lock()
	w := g.workers[printerID]
	g.mu.Unlock()
	if w != nil {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// wakeForWork wakes a printer's worker for new tickets, unless the printer
// was last read in trouble (paper end, cover open, offline): its worker
// reads it again at the trouble rate (Options.StatusPoll) and prints them
// once it is ready. So a busy counter does not have a printer that is out
// of paper asked for its status once an order.
func (g *Gateway) wakeForWork(printerID string) {
	switch g.PrinterState(printerID) {
	case storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen, storeprint.PrinterOffline:
		return
	}
	g.wake(printerID)
}

// route returns the printer a station's tickets go to now, following
// active failovers (the configuration has no backup cycles).
func (g *Gateway) route(station string) (printerID, backupFrom string) {
	st := g.stations[station]
	if st == nil {
		return "", ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	p := st.Printer
	if st.Display != "" {
		p = st.Display
	}
	for i := 0; i <= len(g.pcfg); i++ {
		f := g.failover[p]
		if f == nil || !f.Active {
			break
		}
		if backupFrom == "" {
			backupFrom = p
		}
		p = f.Backup
	}
	return p, backupFrom
}

// Health reports why the gateway cannot accept work, or nil.
func (g *Gateway) Health() error { return g.store.Health() }

// Printers returns every printer's state.
func (g *Gateway) Printers(ctx context.Context) ([]PrinterInfo, error) {
	var out []PrinterInfo
	storage := ""
	if err := g.store.Health(); err != nil {
		storage = storeprint.ErrorMessage(err)
	}
	err := g.store.View(ctx, func(tx ReadTx) error {
		for _, pc := range g.cfg.Printers {
			queue, err := tx.CountOpen(pc.ID)
			if err != nil {
				return err
			}
			info := PrinterInfo{ID: pc.ID, Backup: pc.Backup, Queue: queue, Stations: []string{}, Storage: storage}
			for _, st := range g.cfg.Stations {
				if st.Printer == pc.ID {
					info.Stations = append(info.Stations, st.Name)
				}
			}
			g.mu.Lock()
			s := g.status[pc.ID]
			info.Status, info.PaperNearEnd, info.LastError = s.State, s.PaperNearEnd, s.LastError
			info.Word, info.InTrouble = storeprint.PrinterWord(s.State), s.Trouble.active
			info.NoBackupReady = s.NoBackupReady
			if s.Trouble.active {
				info.Word = s.Trouble.word
			}
			if !s.CheckedAt.IsZero() {
				t := s.CheckedAt
				info.CheckedAt = &t
			}
			info.Confirms, info.ConfirmsNote = g.confirms(&pc)
			if f := g.failover[pc.ID]; f != nil && (f.Active || !f.Acknowledged) {
				c := *f
				info.Failover = &c
			}
			g.mu.Unlock()
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

// confirms returns how a printer confirms its prints and, where that is
// weaker than its own answer for each ticket, the line people read.
func (g *Gateway) confirms(pc *PrinterConfig) (string, storeprint.Word) {
	r, ok := g.printers[pc.ID].(ConfirmsReporter)
	if !ok {
		return "", ""
	}
	c := r.Confirms()
	if n, ok := pc.Options.(ConfirmsNoter); ok {
		if show, note := n.NoteConfirms(c); show != "" {
			return show, note
		}
	}
	switch c {
	case storeprint.ConfirmStatus:
		return string(c), storeprint.WordConfirmsStatus
	case storeprint.ConfirmSpooler:
		return string(c), storeprint.WordConfirmsByWindows
	}
	return string(c), ""
}

// Waited returns how long a task has waited since it was accepted, on the
// monotonic clock (see times).
func (g *Gateway) Waited(t *Task) time.Duration { return g.times.age(t) }

// PrinterState returns the printer's last known state.
func (g *Gateway) PrinterState(id string) storeprint.PrinterState {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.status[id]; s != nil {
		return s.State
	}
	return storeprint.PrinterUnknown
}

// Task returns one task.
func (g *Gateway) Task(ctx context.Context, taskNo string) (*Task, error) {
	var t *Task
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		t, err = tx.Task(taskNo)
		return err
	})
	return t, err
}

// Tasks lists tasks in a status (every task when status is empty).
func (g *Gateway) Tasks(ctx context.Context, status storeprint.Status, limit int) ([]*Task, error) {
	if status != "" && !status.Valid() {
		return nil, storeprint.Errorf(storeprint.EINVALID, "status %q is not one of queued, printing, retry_wait, done, failed, attention_required, cancelled", status)
	}
	var out []*Task
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		out, err = tx.ByStatus(status, limit)
		return err
	})
	return out, err
}

// TasksAfter pages through every task in task_no order: up to limit tasks
// whose task_no sorts after the given one.
func (g *Gateway) TasksAfter(ctx context.Context, after string, limit int) ([]*Task, error) {
	var out []*Task
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		out, err = tx.TasksAfter(after, limit)
		return err
	})
	return out, err
}

// Receipts returns the receipts of a task's attempts.
func (g *Gateway) Receipts(ctx context.Context, taskNo string) ([]*Receipt, error) {
	var out []*Receipt
	err := g.store.View(ctx, func(tx ReadTx) error {
		if _, err := tx.Task(taskNo); err != nil {
			return err
		}
		var err error
		out, err = tx.Receipts(taskNo)
		return err
	})
	return out, err
}

func newToken() string { return storeprint.RandomHex(16) }

func isNotFound(err error) bool { return storeprint.ErrorCode(err) == storeprint.ENOTFOUND }

// Audit returns audit entries after seq.
func (g *Gateway) Audit(ctx context.Context, after uint64, limit int) ([]*AuditEntry, error) {
	var out []*AuditEntry
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		out, err = tx.Audit(after, limit)
		return err
	})
	return out, err
}

// CountByStatus counts tasks in each status.
func (g *Gateway) CountByStatus(ctx context.Context) (map[storeprint.Status]int, error) {
	out := map[storeprint.Status]int{}
	err := g.store.View(ctx, func(tx ReadTx) error {
		for _, s := range storeprint.Statuses {
			n, err := tx.Count(s)
			if err != nil {
				return err
			}
			out[s] = n
		}
		return nil
	})
	return out, err
}
