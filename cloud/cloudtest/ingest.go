package cloudtest

import (
	"context"
	"encoding/json"
	"slices"

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
	inc := g.incarnations[h.Incarnation]
	if inc == nil {
		for _, other := range g.incarnations {
			w.Reset = w.Reset || len(other.arrived) > 0
		}
		inc = &incarnation{stored: map[uint64]sync.Event{}}
		g.incarnations[h.Incarnation] = inc
	}
	if h.Resync && inc.wire() > h.LastSeq {
		inc.learn = append(inc.learn, inc.tasksAfter(h.LastSeq+inc.offset)...)
		inc.offset = inc.cursor - h.LastSeq
	}
	if h.Resync && len(inc.learn) > 0 {
		w.Behind = true
		s := c.store(storeID)
		for _, no := range inc.learn {
			if t, ok := s.tasks[no]; ok {
				w.States = append(w.States, t)
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
		return nil, cloud.Errorf(cloud.EUNAUTHORIZED, "gateway %q of store %q has no link open for incarnation %q", gatewayID, storeID, name)
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
		return nil, cloud.Errorf(cloud.EINVALID, "a batch holds at most %d events, got %d", cloud.MaxIngestBatch, len(events))
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
		if reason := s.apply(e); reason != "" {
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

// apply applies a task event version-forward and returns why it cannot,
// or "".
func (s *store) apply(e sync.Event) string {
	if e.Kind != sync.KindTask {
		return ""
	}
	var t sync.TaskEvent
	if err := json.Unmarshal(e.Data, &t); err != nil || t.TaskNo == "" {
		return "malformed task event"
	}
	s.take(t)
	return ""
}

// take keeps a task's state if it is newer than the one held.
func (s *store) take(t sync.TaskEvent) {
	if held, ok := s.tasks[t.TaskNo]; !ok || t.Version > held.Version {
		s.tasks[t.TaskNo] = t
	}
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
		s.take(t)
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
	return t, ok
}
