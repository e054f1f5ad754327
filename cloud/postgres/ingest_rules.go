package postgres

import (
	"fmt"
	"sort"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// The rules a gateway's events meet before they change what the cloud
// holds, decided in Go on the task rows locked for the batch:
//
//   - ownership: a task belongs to the gateway that first reported it. An
//     event of it from another gateway of the store is dead-lettered while
//     the owner's credential is live; once it is revoked (a box replaced
//     under a new credential) the reporting gateway takes the task over,
//     audited, and its states count from then on. A new incarnation of the
//     same gateway keeps its tasks.
//   - order: a state applies only over a lower (rank, version). The rank
//     is the incarnation's: a new incarnation's state wins for the tasks
//     it reports, whatever its versions. An older state replayed late
//     changes nothing and is no error.
//   - bounds: a version more than sync.MaxVersionJump past the one held
//     from the same incarnation is dead-lettered.
//   - transitions: where the previous state is known (the next version of
//     the same incarnation, or a task's first), a move the transition
//     table does not allow is dead-lettered.

// heldTask is what the rules need of a task the cloud holds.
type heldTask struct {
	rank, version int64
	status        storeprint.Status // StatusNew for a cloud order not yet reported
	owner         string            // "" for a cloud order not yet reported
	ownerGone     bool              // the owner's credential is revoked (or gone)
}

// plan is what a batch (or a snapshot part) changes.
type plan struct {
	tasks    map[string]*sync.TaskEvent // the newest accepted state of each task
	receipts []receiptRow               // a snapshot's, for the receipts table
	audits   []auditRow
	dead     []deadLetter
	takeover map[string][]string // previous owner → the task_nos taken from it
	learned  int                 // task states applied
}

type receiptRow struct {
	seq int64
	ev  *sync.ReceiptEvent
}

type auditRow struct {
	seq int64
	ev  *sync.AuditEvent
}

type deadLetter struct {
	it     *item
	reason string
}

func newPlan() *plan {
	return &plan{tasks: map[string]*sync.TaskEvent{}, takeover: map[string][]string{}}
}

// planEvents decides every fresh event of a batch, in seq order.
func (c *cursorRow) planEvents(items []*item, held map[string]*heldTask) *plan {
	p := newPlan()
	for _, it := range items {
		switch {
		case it.invalid != "":
			p.dead = append(p.dead, deadLetter{it, it.invalid})
		case it.d.Task != nil:
			if reason := p.task(c, held, it.d.Task, true); reason != "" {
				p.dead = append(p.dead, deadLetter{it, reason})
			}
		case it.d.Receipt != nil:
			// An accepted receipt is read from its event (see receiptReader).
			if reason := p.own(c, held[it.d.Receipt.TaskNo], it.d.Receipt.TaskNo); reason != "" {
				p.dead = append(p.dead, deadLetter{it, reason})
			}
		case it.d.Audit != nil:
			p.audits = append(p.audits, auditRow{it.seq, it.d.Audit})
		}
	}
	return p
}

// task decides one task state and returns why it is refused, if it is.
// checked applies the bounds and transitions (events); a snapshot's states
// only meet ownership and order.
func (p *plan) task(c *cursorRow, held map[string]*heldTask, ev *sync.TaskEvent, checked bool) string {
	h := held[ev.TaskNo]
	if reason := p.own(c, h, ev.TaskNo); reason != "" {
		return reason
	}
	v := int64(ev.Version)
	if h != nil && (c.rank < h.rank || (c.rank == h.rank && v <= h.version)) {
		return "" // an older state, replayed late
	}
	if checked {
		if reason := checkStep(c, h, ev); reason != "" {
			return reason
		}
	}
	held[ev.TaskNo] = &heldTask{rank: c.rank, version: v, status: ev.Status, owner: c.gatewayID}
	p.tasks[ev.TaskNo] = ev
	p.learned++
	return ""
}

// checkStep applies the version bound and, where the previous state is
// known, the transition table.
func checkStep(c *cursorRow, h *heldTask, ev *sync.TaskEvent) string {
	v := int64(ev.Version)
	var base int64
	from := storeprint.StatusNew
	if h != nil && h.rank == c.rank {
		base, from = h.version, h.status
	}
	if v-base > sync.MaxVersionJump {
		return fmt.Sprintf("task %s: version %d is more than %d past version %d, the last the cloud has from this gateway",
			ev.TaskNo, v, sync.MaxVersionJump, base)
	}
	if v != base+1 {
		return "" // the state before it is not known here
	}
	if err := storeprint.CheckTransition(from, ev.Status); err != nil {
		return fmt.Sprintf("task %s, version %d: %v", ev.TaskNo, v, err)
	}
	return ""
}

// own applies the ownership rule for a task of the batch and returns why
// the gateway may not change it, if so. A task whose owner is revoked
// passes to this gateway.
func (p *plan) own(c *cursorRow, h *heldTask, taskNo string) string {
	if h == nil || h.owner == "" || h.owner == c.gatewayID {
		return ""
	}
	if !h.ownerGone {
		return fmt.Sprintf("task %s belongs to gateway %s of this store, whose credential is live; gateway %s may not change it",
			taskNo, h.owner, c.gatewayID)
	}
	p.takeover[h.owner] = append(p.takeover[h.owner], taskNo)
	// The new owner's states count from here, whatever their rank.
	h.owner, h.ownerGone, h.rank, h.version, h.status = c.gatewayID, false, 0, 0, storeprint.StatusNew
	return ""
}

// sortedTasks returns the accepted task states in task_no order: rows are
// locked in one order, so two gateways of a store cannot deadlock.
func (p *plan) sortedTasks() []*sync.TaskEvent {
	out := make([]*sync.TaskEvent, 0, len(p.tasks))
	for _, t := range p.tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskNo < out[j].TaskNo })
	return out
}

// deadLetters returns the refused events as the gateway numbers them.
func (p *plan) deadLetters() []sync.DeadLetter {
	out := make([]sync.DeadLetter, 0, len(p.dead))
	for _, d := range p.dead {
		out = append(out, sync.DeadLetter{Seq: d.it.wire, Reason: d.reason})
	}
	return out
}

// heldStatus is a stored status in the words of the transition table.
func heldStatus(s storeprint.Status) storeprint.Status {
	if s == cloud.StatusPendingDelivery {
		return storeprint.StatusNew
	}
	return s
}
