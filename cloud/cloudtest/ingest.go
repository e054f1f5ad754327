package cloudtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// Open implements cloud.Ingester: a gateway whose last seq is below the
// incarnation's cursor is behind and learns the cloud's state of the
// tasks of the events past its last seq (on every link until it says it
// learned them), and what it sends next is stored after what the cloud
// has; a cursor below what the gateway compacted asks for a snapshot.
func (c *Cloud) Open(ctx context.Context, gatewayID, storeID string, h cloud.LinkHello) (*cloud.LinkWelcome, error) {
	if h.Incarnation != "" {
		if err := storeprint.CheckID("incarnation", h.Incarnation); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.live(storeID, gatewayID)
	if err != nil {
		return nil, err
	}
	w := &cloud.LinkWelcome{DownAfter: h.DownCursor}
	s := c.store(storeID)
	inc := g.incarnations[h.Incarnation]
	if inc == nil {
		for _, other := range g.incarnations {
			w.Reset = w.Reset || len(other.arrived) > 0
		}
		s.ranks++
		inc = &incarnation{stored: map[uint64]sync.Event{}, rank: s.ranks}
		g.incarnations[h.Incarnation] = inc
	}
	if h.Resync && inc.wire() > h.LastSeq {
		inc.learn = inc.tasksAfter(h.LastSeq + inc.offset)
		inc.offset = inc.cursor - h.LastSeq
		s.ranks++
		inc.rank = s.ranks // its states win from now on
	}
	if h.Resync && len(inc.learn) > 0 {
		w.Behind = true
		for _, no := range inc.learn {
			if t, ok := s.tasks[no]; ok {
				w.States = append(w.States, t.TaskEvent)
			}
		}
	}
	w.Cursor = inc.wire()
	w.Snapshot = h.Resync && w.Cursor < h.Compacted
	c.signal()
	return w, nil
}

// wire is the cursor in the gateway's numbering.
func (inc *incarnation) wire() uint64 { return inc.cursor - inc.offset }

// tasksAfter lists the tasks of the events stored past seq (the cloud's
// numbering), once each.
func (inc *incarnation) tasksAfter(seq uint64) []string {
	var out []string
	for s, e := range inc.stored {
		if s > seq && e.TaskNo != "" && !slices.Contains(out, e.TaskNo) {
			out = append(out, e.TaskNo)
		}
	}
	slices.Sort(out)
	return out
}

// incarnation returns a live gateway's incarnation with a link open;
// c.mu is held.
func (c *Cloud) incarnation(storeID, gatewayID, name string) (*incarnation, error) {
	g, err := c.live(storeID, gatewayID)
	if err != nil {
		return nil, err
	}
	inc := g.incarnations[name]
	if inc == nil {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q has no link open for incarnation %q", gatewayID, storeID, name)
	}
	return inc, nil
}

// Ingest implements cloud.Ingester: events at or below the cursor, or
// stored before, are counted as replayed and change nothing; a seq past
// the cursor by more than sync.MaxWindow is neither stored nor claimed; a
// task event whose data is not a task is a dead letter. While the cloud
// is held (Hold) it waits first.
func (c *Cloud) Ingest(ctx context.Context, gatewayID, storeID, name string, events []sync.Event) (*cloud.IngestResult, error) {
	if len(events) > cloud.MaxIngestBatch {
		return nil, storeprint.Errorf(storeprint.EINVALID, "a batch holds at most %d events, got %d", cloud.MaxIngestBatch, len(events))
	}
	c.mu.Lock()
	gate := c.gate
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	inc, err := c.incarnation(storeID, gatewayID, name)
	if err != nil {
		return nil, err
	}
	res := &cloud.IngestResult{}
	s, limit := c.store(storeID), inc.wire()+sync.MaxWindow
	for _, e := range events {
		at := e.Seq + inc.offset
		if _, ok := inc.stored[at]; ok || at <= inc.cursor {
			inc.replayed++
			continue
		}
		if e.Seq > limit {
			continue
		}
		inc.stored[at] = e
		inc.arrived = append(inc.arrived, e)
		if reason := c.apply(s, gatewayID, inc.rank, e); reason != "" {
			res.DeadLetters = append(res.DeadLetters, sync.DeadLetter{Seq: e.Seq, Reason: reason})
		}
	}
	for _, ok := inc.stored[inc.cursor+1]; ok; _, ok = inc.stored[inc.cursor+1] {
		inc.cursor++
	}
	res.Cursor = inc.wire()
	c.signal()
	return res, nil
}

// apply applies an event by the rules the PostgreSQL cloud keeps and
// returns why it cannot, or "": a task's state moves only to a higher
// (rank, version), within sync.MaxVersionJump of the one held from the
// same incarnation and, where the state before it is known, by the
// transition table; a task or receipt of a task another live gateway of
// the store owns is refused. c.mu is held.
func (c *Cloud) apply(s *store, gatewayID string, rank int64, e sync.Event) string {
	d, err := sync.DecodeEvent(&e)
	switch {
	case err != nil:
		return "the event could not be read: " + err.Error()
	case d.Task != nil:
		return c.take(s, gatewayID, rank, *d.Task, true)
	case d.Receipt != nil:
		return c.own(s, gatewayID, d.Receipt.TaskNo)
	}
	return ""
}

// heldTask is the cloud's state of a task with what its rules need.
type heldTask struct {
	sync.TaskEvent
	rank  int64  // the rank of the incarnation whose state it is; 0 after a take-over
	owner string // the gateway that reported it first, or took it over
}

// take applies a task state if it is newer than the one held and
// returns why it is refused, if it is; checked applies the version bound
// and the transition table (events; a snapshot's states meet only
// ownership and order). c.mu is held.
func (c *Cloud) take(s *store, gatewayID string, rank int64, t sync.TaskEvent, checked bool) string {
	if reason := c.own(s, gatewayID, t.TaskNo); reason != "" {
		return reason
	}
	h, ok := s.tasks[t.TaskNo]
	if ok && (rank < h.rank || (rank == h.rank && t.Version <= h.Version)) {
		return "" // an older state, replayed late
	}
	if checked {
		var base uint64
		from := storeprint.StatusNew
		if ok && h.rank == rank {
			base, from = h.Version, h.Status
		}
		if t.Version-base > sync.MaxVersionJump {
			return fmt.Sprintf("task %s: version %d is more than %d past version %d, the last the cloud has from this gateway",
				t.TaskNo, t.Version, sync.MaxVersionJump, base)
		}
		if t.Version == base+1 {
			if err := storeprint.CheckTransition(from, t.Status); err != nil {
				return fmt.Sprintf("task %s, version %d: %v", t.TaskNo, t.Version, err)
			}
		}
	}
	s.tasks[t.TaskNo] = heldTask{TaskEvent: t, rank: rank, owner: gatewayID}
	return ""
}

// own applies the ownership rule and returns why the gateway may not
// change the task, if so. A task whose owner is revoked passes to the
// gateway, and its states count from then on. c.mu is held.
func (c *Cloud) own(s *store, gatewayID, taskNo string) string {
	h, ok := s.tasks[taskNo]
	if !ok || h.owner == gatewayID {
		return ""
	}
	if g := c.gateways[h.owner]; g != nil && g.RevokedAt == nil {
		return fmt.Sprintf("task %s belongs to gateway %s of this store, whose credential is live; gateway %s may not change it",
			taskNo, h.owner, gatewayID)
	}
	h.owner, h.rank, h.Version = gatewayID, 0, 0
	s.tasks[taskNo] = h
	return ""
}

// Snapshot implements cloud.Ingester: tasks version-forward; the final
// part moves the cursor to the seq the snapshot stands for.
func (c *Cloud) Snapshot(ctx context.Context, gatewayID, storeID, name string, p *cloud.SnapshotPart) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	inc, err := c.incarnation(storeID, gatewayID, name)
	if err != nil {
		return 0, err
	}
	s := c.store(storeID)
	for _, t := range p.Tasks {
		if sync.CheckTask(&t, time.Now()) == nil {
			c.take(s, gatewayID, inc.rank, t, false)
		}
	}
	inc.snapshot += len(p.Tasks)
	if p.Final {
		inc.cursor = max(inc.cursor, p.Through+inc.offset)
	}
	c.signal()
	return inc.wire(), nil
}

// Learned implements cloud.Ingester.
func (c *Cloud) Learned(ctx context.Context, gatewayID, storeID, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	inc, err := c.incarnation(storeID, gatewayID, name)
	if err != nil {
		return err
	}
	inc.learn, inc.learned = nil, true
	c.signal()
	return nil
}

// Link is what the cloud holds of one incarnation of a gateway.
type Link struct {
	Cursor        uint64       // the highest contiguous seq stored, as the gateway numbers them
	Events        []sync.Event // the events stored, in the order they arrived, as sent
	Replayed      int          // events received again, which changed nothing
	SnapshotTasks int          // tasks received in snapshots
	Learned       bool         // the gateway said it learned the states it was sent
}

// Link returns what the cloud holds of an incarnation of a gateway (the
// zero Link before its first link).
func (c *Cloud) Link(gatewayID, name string) Link {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gateways[gatewayID]
	if g == nil || g.incarnations[name] == nil {
		return Link{}
	}
	inc := g.incarnations[name]
	return Link{Cursor: inc.wire(), Events: slices.Clone(inc.arrived), Replayed: inc.replayed,
		SnapshotTasks: inc.snapshot, Learned: inc.learned}
}

// Task returns the cloud's state of a task of the store.
func (c *Cloud) Task(storeID, taskNo string) (sync.TaskEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.store(storeID).tasks[taskNo]
	return t.TaskEvent, ok
}
