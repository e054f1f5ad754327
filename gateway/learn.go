package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

// DefaultStartupGrace bounds how long a linked gateway holds, at start,
// the tickets it carried over until its link tells it whether the cloud
// knows newer states of them (a data dir restored from an older copy).
// Past it, a store whose internet is down prints as usual.
const DefaultStartupGrace = 10 * time.Second

// startupHold keeps the dispatcher of a linked gateway from printing the
// tickets it carried over from before the start until the link has come
// up once (or the grace has passed).
type startupHold struct {
	done  chan struct{}
	once  stdsync.Once
	grace time.Duration
}

func newStartupHold(grace time.Duration) *startupHold {
	return &startupHold{done: make(chan struct{}), grace: grace}
}

func (h *startupHold) release() { h.once.Do(func() { close(h.done) }) }

// expire ends the hold after the grace.
func (h *startupHold) expire(ctx context.Context, g *Gateway) {
	t := g.clock.NewTimer(h.grace)
	defer t.Stop()
	select {
	case <-h.done:
	case <-ctx.Done():
	case <-t.C():
		g.log.Warn("no word from the cloud since start: printing the tickets held from before", "grace", h.grace)
		h.release()
	}
}

// holding reports whether the start-up hold keeps a task from printing:
// it holds the tickets carried over from before the start, not the ones
// accepted since (an order posted while the store is offline prints at
// once, unless older tickets wait ahead of it on the same printer).
func (g *Gateway) holding(t *Task) bool {
	if g.startup == nil || g.times.fresh(t.Seq) {
		return false
	}
	select {
	case <-g.startup.done:
		return false
	default:
		return true
	}
}

// Learned ends the start-up hold: the link came up and, if the gateway was
// behind the cloud, it has learned what it lost.
func (g *Gateway) Learned() {
	if g.startup != nil {
		g.startup.release()
	}
}

// ApplyStates applies the cloud's newer state of tasks this gateway holds,
// learned down the link when the gateway was behind the cloud (its data
// restored from an older copy, or wiped): a task the cloud has as done or
// cancelled is not printed again; one the cloud saw printing or needing a
// person is held for a person (reason recovered); one waiting in both
// takes the cloud's attempt number, so new attempts do not reuse old ones.
// It returns the states of the tasks it does not hold (yet: an order sent
// again brings them). One audit entry records what was learned.
func (g *Gateway) ApplyStates(ctx context.Context, states []sync.TaskEvent) ([]sync.TaskEvent, error) {
	if len(states) == 0 {
		return nil, nil
	}
	var rest []sync.TaskEvent
	var hold, learned []string
	err := g.store.Update(ctx, func(tx Tx) error {
		rest, hold, learned = nil, nil, nil
		for i := range states {
			st := &states[i]
			if sync.CheckTask(st, g.now()) != nil {
				continue
			}
			t, err := tx.Task(st.TaskNo)
			if isNotFound(err) {
				rest = append(rest, *st)
				continue
			}
			if err != nil {
				return err
			}
			attempt := t.Attempt
			switch g.learn(t, st) {
			case learnHold:
				hold = append(hold, t.TaskNo)
				if t.Attempt == attempt {
					continue
				}
				if err := tx.PutTask(t); err != nil {
					return err
				}
			case learnApply:
				if err := tx.PutTask(t); err != nil {
					return err
				}
				learned = append(learned, t.TaskNo)
			}
		}
		return auditLearned(tx, learned)
	})
	if err != nil {
		return nil, err
	}
	if len(learned) > 0 {
		g.log.Warn("learned newer ticket states from the cloud (this store's data was older)", "tasks", len(learned))
	}
	if len(hold) > 0 {
		if _, err := g.HoldRecovered(ctx, hold, "the cloud saw it being printed, or needing a person, after this store's data was saved"); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

type learning int

const (
	learnNothing learning = iota
	learnApply            // t was changed to the cloud's state
	learnHold             // hold t for a person
)

// learn decides what the cloud's state st means for the task t as held.
func (g *Gateway) learn(t *Task, st *sync.TaskEvent) learning {
	if t.Status.Final() || t.Status == storeprint.StatusPrinting {
		return learnNothing
	}
	switch st.Status {
	case storeprint.StatusDone:
		if !storeprint.CanTransition(t.Status, st.Status) {
			return learnNothing
		}
		t.Status, t.Reason, t.LastError, t.PrintedAt = storeprint.StatusDone, "", "", st.PrintedAt
		if t.PrintedAt == nil {
			now := g.now()
			t.PrintedAt = &now
		}
		t.Attempt = max(t.Attempt, st.Attempt)
		return learnApply
	case storeprint.StatusCancelled:
		if !storeprint.CanTransition(t.Status, st.Status) {
			return learnNothing
		}
		t.Status, t.LastError = storeprint.StatusCancelled, "its order was voided (the cloud knew it)"
		return learnApply
	case storeprint.StatusPrinting, storeprint.StatusAttention:
		if t.Status == storeprint.StatusQueued || t.Status == storeprint.StatusRetryWait {
			t.Attempt = max(t.Attempt, st.Attempt)
			return learnHold
		}
	}
	if st.Attempt > t.Attempt {
		t.Attempt = st.Attempt
		return learnApply
	}
	return learnNothing
}

func auditLearned(tx Tx, taskNos []string) error {
	if len(taskNos) == 0 {
		return nil
	}
	after, _ := json.Marshal(map[string]any{"task_nos": taskNos})
	return tx.AppendAudit(&AuditEntry{
		Action: storeprint.ActionLearnedFromCloud, Operator: "cloud", After: string(after),
		Reason: fmt.Sprintf("the cloud knew a newer state of %d tickets (this store's data was restored or reset)", len(taskNos)),
	})
}
