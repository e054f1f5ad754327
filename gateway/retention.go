package gateway

import (
	"context"
	"math"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/clock"
)

// Sweeper deletes what retention no longer keeps: done and cancelled tasks
// with their receipts, and audit entries, once they are older than
// `retention` and the cloud has stored them (at once when the gateway runs
// standalone); the compact records of orders older than
// `order_ids_retention`; and, standalone, the outbox, which nobody reads.
// After a sweep that deleted something it has the store give the space
// back.
//
// "The cloud has stored it" is the sync link's acknowledged cursor
// (metaAcked): a task or audit entry goes only when the outbox event of
// its latest state is at or below it.
type Sweeper struct {
	g    *Gateway
	opts SweeperOptions
}

// SweeperOptions configure a Sweeper; zero values mean the defaults.
type SweeperOptions struct {
	Clock clock.Clock // default: the gateway's
	// Every is the time between sweeps; default a quarter of the
	// retention, at least 1 s and at most 1 h.
	Every time.Duration
	// Batch bounds the records looked at in one transaction (halved when
	// that is too large for one); default 1024.
	Batch int
	// Reclaim gives the deleted data's space back (the store's GC); run
	// after a sweep that deleted something.
	Reclaim func() error
	// Swept, when set, is told of every sweep (tests wait on it).
	Swept func(SweepResult)
}

// SweepResult is what one sweep deleted.
type SweepResult struct {
	Tasks  int `json:"tasks"`
	Audit  int `json:"audit"`
	Orders int `json:"orders"` // compact order records past order_ids_retention
	Events int `json:"events"` // outbox events trimmed (standalone)
	Err    error
}

func (r SweepResult) deleted() bool { return r.Tasks+r.Audit+r.Orders+r.Events > 0 }

// NewSweeper returns the gateway's retention sweeper.
func (g *Gateway) NewSweeper(o SweeperOptions) *Sweeper {
	if o.Clock == nil {
		o.Clock = g.clock
	}
	if o.Every == 0 {
		o.Every = min(max(g.cfg.Retention.Duration/4, time.Second), time.Hour)
	}
	if o.Batch == 0 {
		o.Batch = 1024
	}
	return &Sweeper{g: g, opts: o}
}

// Run sweeps every Every until ctx is done.
func (s *Sweeper) Run(ctx context.Context) {
	for clock.Sleep(ctx, s.opts.Clock, s.opts.Every) {
		res := s.Sweep(ctx)
		if res.Err != nil && ctx.Err() == nil {
			s.g.log.Error("retention sweep", "err", res.Err)
		} else if res.deleted() {
			s.g.log.Info("retention sweep", "tasks", res.Tasks, "audit", res.Audit, "orders", res.Orders, "events", res.Events)
		}
		if s.opts.Swept != nil {
			s.opts.Swept(res)
		}
	}
}

// Sweep deletes, in small transactions, everything retention no longer
// keeps as of now.
func (s *Sweeper) Sweep(ctx context.Context) SweepResult {
	var res SweepResult
	res.Err = s.sweep(ctx, &res)
	if res.Err == nil && res.deleted() && s.opts.Reclaim != nil {
		res.Err = s.opts.Reclaim()
	}
	return res
}

func (s *Sweeper) sweep(ctx context.Context, res *SweepResult) error {
	g := s.g
	now := s.opts.Clock.Now()
	before := now.Add(-g.cfg.Retention.Duration)
	standalone := g.cfg.Cloud == nil
	// What the cloud has stored, read in each step's own transaction: an
	// acknowledgement rides on a later sync (see OutboxAcked), and a step
	// that deletes on its word is synced with it or after it.
	ackedIn := func(tx ReadTx) (uint64, error) {
		if standalone {
			return math.MaxUint64, nil
		}
		return tx.Meta(metaAcked)
	}
	// One step per transaction; a step too large for one halves the batch.
	batch := s.opts.Batch
	step := func(fn func(tx Tx, batch int) (PurgeResult, error), n *int) error {
		for {
			var r PurgeResult
			err := g.store.Update(ctx, func(tx Tx) error {
				var err error
				r, err = fn(tx, batch)
				return err
			})
			if storeprint.ErrorCode(err) == storeprint.ETOOLARGE && batch > 1 {
				batch /= 2
				continue
			}
			if err != nil {
				return err
			}
			*n += r.Purged
			if r.Done {
				return nil
			}
		}
	}
	for _, st := range []storeprint.Status{storeprint.StatusDone, storeprint.StatusCancelled} {
		after := uint64(0)
		err := step(func(tx Tx, batch int) (PurgeResult, error) {
			acked, err := ackedIn(tx)
			if err != nil {
				return PurgeResult{}, err
			}
			r, err := tx.PurgeTasks(st, before, acked, after, batch)
			if err == nil {
				after = r.Last
			}
			return r, err
		}, &res.Tasks)
		if err != nil {
			return err
		}
	}
	if err := step(func(tx Tx, batch int) (PurgeResult, error) {
		acked, err := ackedIn(tx)
		if err != nil {
			return PurgeResult{}, err
		}
		return tx.PurgeAudit(before, acked, batch)
	}, &res.Audit); err != nil {
		return err
	}
	if err := step(func(tx Tx, batch int) (PurgeResult, error) {
		return tx.PurgeOrders(now.Add(-g.cfg.OrderIDsRetention.Duration), batch)
	}, &res.Orders); err != nil {
		return err
	}
	if standalone {
		return step(func(tx Tx, batch int) (PurgeResult, error) { return trimOutbox(tx, 4*batch) }, &res.Events)
	}
	return nil
}

// trimOutbox deletes up to limit outbox events: standalone, nobody will
// read them.
func trimOutbox(tx Tx, limit int) (PurgeResult, error) {
	last, err := tx.LastEventSeq()
	if err != nil {
		return PurgeResult{}, err
	}
	r, err := tx.PurgeOutbox(last, limit)
	if err == nil && r.Purged > 0 {
		if from, err := tx.Meta(metaCompacted); err == nil && r.Last > from {
			tx.SetMeta(metaCompacted, r.Last)
		}
	}
	return r, err
}
