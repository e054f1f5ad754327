package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
	"github.com/storeprint/storeprint/sync/client"
)

var _ client.Gateway = (*memGateway)(nil)

// memGateway is the store's gateway in memory, as the link sees it: an
// outbox, the down cursor, the tasks it holds and its printers. It records
// what the link did with it and signals every change (Wait).
type memGateway struct {
	mu      stdsync.Mutex
	changed chan struct{}
	subs    map[chan struct{}]struct{}

	hello       sync.Hello
	outbox      []sync.Event // events not compacted, in seq order
	served      uint64       // highest seq OutboxEvents returned
	compactions []uint64     // every OutboxAcked cursor
	commands    []sync.Command
	tasks       map[string]sync.TaskEvent // held
	learned     int                       // Learned calls
	printers    []sync.PrinterStatus

	// onRead, when set, sees every OutboxEvents call before it is served.
	onRead func(after uint64, limit int)
}

func newGateway(incarnation string) *memGateway {
	return &memGateway{changed: make(chan struct{}), subs: map[chan struct{}]struct{}{},
		hello: sync.Hello{Incarnation: incarnation}, tasks: map[string]sync.TaskEvent{}}
}

// taskEvent is an outbox event of a task's state.
func taskEvent(seq uint64, t sync.TaskEvent) sync.Event {
	b, _ := json.Marshal(t)
	return sync.Event{Seq: seq, Kind: sync.KindTask, TaskNo: t.TaskNo, At: t.UpdatedAt, Data: b}
}

func task(n int, version uint64, status storeprint.Status) sync.TaskEvent {
	return sync.TaskEvent{TaskNo: fmt.Sprintf("order_%04d_station_hot", n), Version: version, OrderID: fmt.Sprintf("%04d", n),
		Station: "hot", PrinterID: "hot-1", Status: status, CreatedAt: time.Unix(0, 0).UTC(), UpdatedAt: time.Unix(0, 0).UTC()}
}

// Append writes n new tasks, an event each, and signals the link.
func (g *memGateway) Append(n int) {
	g.mu.Lock()
	for range n {
		g.hello.LastSeq++
		t := task(int(g.hello.LastSeq), 1, storeprint.StatusQueued)
		g.tasks[t.TaskNo] = t
		g.outbox = append(g.outbox, taskEvent(g.hello.LastSeq, t))
	}
	g.mu.Unlock()
	g.Notify()
}

// SetPrinters changes the printers and signals the link.
func (g *memGateway) SetPrinters(ps ...sync.PrinterStatus) {
	g.mu.Lock()
	g.printers = slices.Clone(ps)
	g.mu.Unlock()
	g.Notify()
}

// Notify signals the link as a change would, and wakes Wait.
func (g *memGateway) Notify() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for ch := range g.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	g.signal()
}

func (g *memGateway) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Wait returns once cond holds, checked after every change.
func (g *memGateway) Wait(ctx context.Context, cond func() bool) error {
	for {
		g.mu.Lock()
		ch := g.changed
		g.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Served returns the highest seq OutboxEvents returned.
func (g *memGateway) Served() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.served
}

// with runs f under the gateway's lock.
func (g *memGateway) with(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
}

func (g *memGateway) OutboxEvents(ctx context.Context, after uint64, limit int) ([]sync.Event, error) {
	if g.onRead != nil {
		g.onRead(after, limit)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []sync.Event
	for _, e := range g.outbox {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	if len(out) > 0 {
		g.served = max(g.served, out[len(out)-1].Seq)
		g.signal()
	}
	return out, nil
}

func (g *memGateway) OutboxAcked(ctx context.Context, cursor uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.compactions = append(g.compactions, cursor)
	g.outbox = slices.DeleteFunc(g.outbox, func(e sync.Event) bool { return e.Seq <= cursor })
	g.hello.Compacted = max(g.hello.Compacted, cursor)
	g.signal()
	return nil
}

func (g *memGateway) Hello(ctx context.Context) (sync.Hello, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hello, nil
}

func (g *memGateway) ApplyDown(ctx context.Context, cmds []sync.Command, through uint64) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range cmds {
		if c.Seq > g.hello.DownCursor {
			g.commands = append(g.commands, c)
			g.hello.DownCursor = c.Seq
		}
	}
	g.hello.DownCursor = max(g.hello.DownCursor, through)
	g.signal()
	return g.hello.DownCursor, nil
}

func (g *memGateway) ApplyStates(ctx context.Context, states []sync.TaskEvent) ([]sync.TaskEvent, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var rest []sync.TaskEvent
	for _, t := range states {
		held, ok := g.tasks[t.TaskNo]
		switch {
		case !ok:
			rest = append(rest, t)
		case t.Version > held.Version:
			g.tasks[t.TaskNo] = t
		}
	}
	g.signal()
	return rest, nil
}

func (g *memGateway) Learned() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.learned++
	g.signal()
}

func (g *memGateway) Snapshot(ctx context.Context, after string, limit int) ([]sync.TaskEvent, []sync.ReceiptEvent, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []sync.TaskEvent
	for _, t := range g.tasks {
		if t.TaskNo > after {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b sync.TaskEvent) int { return strings.Compare(a.TaskNo, b.TaskNo) })
	return out[:min(len(out), limit)], nil, nil
}

func (g *memGateway) PrinterStatuses(ctx context.Context) ([]sync.PrinterStatus, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.printers), nil
}

func (g *memGateway) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.subs[ch] = struct{}{}
	return ch, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.subs, ch)
	}
}
