package client_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/cloudtest"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/sync"
	"github.com/storeprint/storeprint/sync/client"
	"github.com/storeprint/storeprint/sync/server"
)

// The link's timings in these tests, on the fake clock. The ping is long so
// that a test sees it only when it moves the clock.
const (
	pingEvery   = time.Minute
	minBackoff  = time.Second
	maxBackoff  = 8 * time.Second
	batch       = 10
	window      = 50
	storeID     = "s1"
	incarnation = "inc-1"
)

// timerClock is a fake clock that says when a timer is made, and for how
// long: the client's only timers are its ping and its reconnect backoff.
type timerClock struct {
	*clock.Fake
	made chan time.Duration
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.Fake.NewTimer(d)
	c.made <- d
	return t
}

// harness is a real sync server on the in-memory cloud over httptest, and
// the real client on an in-memory gateway, over real websockets.
type harness struct {
	t        *testing.T
	ctx      context.Context // ends the test if a wait takes too long
	cloud    *cloudtest.Cloud
	gw       *memGateway
	clock    *timerClock
	client   *client.Client
	gateway  *cloud.Gateway
	requests atomic.Int32 // link upgrades asked of the server

	mu    stdsync.Mutex
	conns []net.Conn // the client's connections, newest last
	first *http.Request

	writes, written atomic.Int64 // the client's writes to its sockets, and their bytes
}

// setup makes the harness; opts change the server before it serves.
func setup(t *testing.T, gw *memGateway, opts ...func(*server.Server)) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, cloud: cloudtest.New(), gw: gw,
		clock: &timerClock{Fake: clock.NewFake(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)), made: make(chan time.Duration, 1000)}}
	var token string
	var err error
	if h.gateway, token, err = h.cloud.CreateGateway(ctx, storeID, cloud.Note{}); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := &server.Server{Gateways: h.cloud, Ingester: h.cloud, Commands: h.cloud, Notifier: h.cloud, Logger: logger,
		Poll: time.Hour, PingWait: 10 * time.Minute}
	for _, o := range opts {
		o(srv)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.requests.Add(1) == 1 {
			h.mu.Lock()
			h.first = r
			h.mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	dialer := client.NewDialer()
	dialer.Proxy, dialer.NetDialContext = nil, h.dial
	h.client = &client.Client{
		URL: "ws" + strings.TrimPrefix(hs.URL, "http") + sync.Path, GatewayID: h.gateway.ID, Token: token, StoreID: storeID,
		Gateway: gw, Logger: logger, Dialer: dialer, Clock: h.clock,
		BatchSize: batch, Window: window, PingEvery: pingEvery, MinBackoff: minBackoff, MaxBackoff: maxBackoff,
	}
	return h
}

func (h *harness) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	counted := &countingConn{Conn: conn, h: h}
	h.mu.Lock()
	h.conns = append(h.conns, counted)
	h.mu.Unlock()
	return counted, nil
}

// countingConn counts the writes to a connection of the client's.
type countingConn struct {
	net.Conn
	h *harness
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.h.writes.Add(1)
	c.h.written.Add(int64(len(b)))
	return c.Conn.Write(b)
}

// run runs the client until the test ends.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.client.Run(ctx); close(done) }()
	h.t.Cleanup(func() { cancel(); <-done })
}

// cut breaks the client's connection, as a network failure would.
func (h *harness) cut() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns[len(h.conns)-1].Close()
}

// waitCloud waits until cond holds of the cloud.
func (h *harness) waitCloud(what string, cond func() bool) {
	h.t.Helper()
	if err := h.cloud.Wait(h.ctx, cond); err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitGateway waits until cond holds of the gateway.
func (h *harness) waitGateway(what string, cond func() bool) {
	h.t.Helper()
	if err := h.gw.Wait(h.ctx, cond); err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// timer returns the duration of the next timer the client makes.
func (h *harness) timer() time.Duration {
	h.t.Helper()
	select {
	case d := <-h.clock.made:
		return d
	case <-h.ctx.Done():
		h.t.Fatal("waiting for the client's next timer: timed out")
		return 0
	}
}

// backoff returns the next reconnect wait the client makes, skipping pings.
func (h *harness) backoff() time.Duration {
	h.t.Helper()
	for {
		if d := h.timer(); d != pingEvery {
			return d
		}
	}
}

// link returns what the cloud holds of the gateway's incarnation.
func (h *harness) link() cloudtest.Link { return h.cloud.Link(h.gateway.ID, incarnation) }

// cursorAt returns a condition: the cloud's cursor reached seq.
func (h *harness) cursorAt(seq uint64) func() bool {
	return func() bool { return h.link().Cursor >= seq }
}

// wantEvents checks the cloud stored events from..to, each once, in seq
// order.
func wantEvents(t *testing.T, l cloudtest.Link, from, to uint64) {
	t.Helper()
	var got []uint64
	for _, e := range l.Events {
		got = append(got, e.Seq)
	}
	var want []uint64
	for s := from; s <= to; s++ {
		want = append(want, s)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got events %v stored, want %d..%d once each in seq order", got, from, to)
	}
}

// wantWait checks a jittered wait is within ±20% of base.
func wantWait(t *testing.T, got, base time.Duration) {
	t.Helper()
	if got < base*8/10 || got > base*12/10 {
		t.Fatalf("got a wait of %v, want %v ±20%%", got, base)
	}
}

func TestClient_Run(t *testing.T) {
	t.Parallel()

	// The outbox goes up in seq order, never more than the window ahead
	// of the cloud's acknowledgement.
	t.Run("Replay", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(205)
		h := setup(t, gw)
		var ahead atomic.Uint64
		gw.onRead = func(after uint64, limit int) {
			if n := after + uint64(limit) - h.link().Cursor; n > ahead.Load() {
				ahead.Store(n)
			}
		}
		release := h.cloud.Hold()
		h.run()
		h.waitGateway("a window of events sent", func() bool { return gw.Served() >= window })
		if served := gw.Served(); served != window {
			t.Fatalf("got %d events sent while the cloud acknowledged none, want the window, %d", served, window)
		}
		release()
		h.waitCloud("every event stored", h.cursorAt(205))
		l := h.link()
		wantEvents(t, l, 1, 205)
		if l.Replayed != 0 {
			t.Fatalf("got %d events sent twice, want none", l.Replayed)
		}
		if got := ahead.Load(); got > window {
			t.Fatalf("got a read of the outbox %d events ahead of the cloud's cursor, want at most the window, %d", got, window)
		}
		if st := h.client.State(); !st.Connected || st.Incarnation != "inc-1" {
			t.Fatalf("got state %+v, want connected with the incarnation", st)
		}
	})

	// A frame of the default batch goes out in a few writes of up to
	// client.WriteBufferSize each, not in one for every 4 KiB: each write
	// is a system call here and a websocket frame with its header for the
	// cloud to read.
	t.Run("FewWrites", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(500)
		h := setup(t, gw)
		h.client.BatchSize, h.client.Window = 500, 500
		h.run()
		h.waitCloud("every event stored", h.cursorAt(500))
		// The handshake, the hello and the printers' status are a write
		// each; the events frame takes the rest.
		writes, written := h.writes.Load(), h.written.Load()
		if want := written/client.WriteBufferSize + 4; writes > want {
			t.Fatalf("got %d writes for %d bytes, want at most %d", writes, written, want)
		}
	})

	// Acks are taken together and the outbox is compacted every
	// 4×BatchSize acknowledged events or on the ping, not on every ack.
	t.Run("Compaction", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(205)
		h := setup(t, gw)
		h.run()
		if d := h.timer(); d != pingEvery {
			t.Fatalf("got a first timer of %v, want the ping, %v", d, pingEvery)
		}
		h.waitCloud("every event stored", h.cursorAt(205))
		pings := 0
		for compacted := uint64(0); compacted < 205; pings++ {
			// Each ping compacts what is acked; the ack of the last
			// events may still be on its way.
			h.clock.Advance(pingEvery)
			if d := h.timer(); d != pingEvery {
				t.Fatalf("got a timer of %v, want the next ping", d)
			}
			gw.with(func() { compacted = gw.hello.Compacted })
		}
		var got []uint64
		gw.with(func() { got = slices.Clone(gw.compactions) })
		if len(got) > 1+205/(4*batch)+pings || got[0] != 0 || got[len(got)-1] != 205 {
			t.Fatalf("got compactions %v for 21 acks and %d pings, want from 0 to 205, every %d events or on a ping", got, pings, 4*batch)
		}
		short := 0 // compactions less than 4×BatchSize after the last: the pings'
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("got compactions %v, want each past the last", got)
			}
			if got[i]-got[i-1] < 4*batch {
				short++
			}
		}
		if short > pings {
			t.Fatalf("got compactions %v, want %d events apart but for the %d pings'", got, 4*batch, pings)
		}
		if c := h.client.State().Cursor; c != 205 {
			t.Fatalf("got cursor %d, want 205", c)
		}
	})

	// Every change people see (up, the cursor, down) is announced, after
	// it shows in State: the LAN page follows the link with it.
	t.Run("OnChange", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(100)
		h := setup(t, gw)
		seen := make(chan client.State, 1000)
		h.client.OnChange = func() { seen <- h.client.State() }
		h.run()
		next := func(what string, ok func(client.State) bool) {
			t.Helper()
			for {
				select {
				case st := <-seen:
					if ok(st) {
						return
					}
				case <-h.ctx.Done():
					t.Fatalf("no change announced with %s", what)
				}
			}
		}
		next("the link up", func(st client.State) bool { return st.Connected })
		next("every event acknowledged", func(st client.State) bool { return st.Connected && st.Cursor == 100 })
		h.cut()
		next("the link down", func(st client.State) bool { return !st.Connected && st.LastError != "" })
	})

	// A cut link comes back after the shortest backoff and resumes from
	// the acknowledged cursor: nothing lost, nothing sent twice.
	t.Run("Reconnect", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(100)
		h := setup(t, gw)
		h.run()
		h.waitCloud("the first events stored", h.cursorAt(100))
		h.cut()
		wait := h.backoff()
		wantWait(t, wait, minBackoff)
		if st := h.client.State(); st.Connected || st.LastError == "" {
			t.Fatalf("got state %+v, want down with why", st)
		}
		gw.Append(50)
		h.clock.Advance(wait)
		h.waitCloud("the events written while down stored", h.cursorAt(150))
		l := h.link()
		wantEvents(t, l, 1, 150)
		if l.Replayed != 0 || h.cloud.Links(h.gateway.ID) != 2 {
			t.Fatalf("got %d events sent twice over %d links, want none over 2", l.Replayed, h.cloud.Links(h.gateway.ID))
		}
	})

	// Events in flight when the link breaks are sent again; the cloud
	// stores each once.
	t.Run("ReconnectInFlight", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(30)
		h := setup(t, gw)
		release := h.cloud.Hold()
		h.run()
		h.waitGateway("every event sent", func() bool { return gw.Served() == 30 })
		h.cut()
		h.clock.Advance(h.backoff())
		h.waitCloud("the second link", func() bool { return h.cloud.Links(h.gateway.ID) == 2 })
		release()
		h.waitCloud("every event stored", h.cursorAt(30))
		wantEvents(t, h.link(), 1, 30)
	})

	// Commands from the cloud are applied and acknowledged, and not sent
	// again on the next link.
	t.Run("Commands", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		h := setup(t, gw)
		h.run()
		h.waitCloud("the link", func() bool { return h.cloud.Links(h.gateway.ID) == 1 })
		order := &storeprint.Order{OrderID: "web-1", Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}
		h.cloud.Queue(storeID, cloud.Command{Kind: storeprint.CommandOrder, Order: order, CreatedBy: "test"})
		if _, _, err := h.cloud.Submit(h.ctx, storeID, &cloud.CommandRequest{Kind: storeprint.CommandRetry, TaskNo: "order_1_station_hot"}); err != nil {
			t.Fatal(err)
		}
		h.waitCloud("the commands acknowledged", func() bool { return h.cloud.DownAcked(storeID) == 2 })
		var cmds []sync.Command
		gw.with(func() { cmds = slices.Clone(gw.commands) })
		if len(cmds) != 2 || cmds[0].Kind != storeprint.CommandOrder || cmds[1].Kind != storeprint.CommandRetry || cmds[1].Seq != 2 {
			t.Fatalf("got commands %+v applied, want the order then the retry", cmds)
		}
		var got storeprint.Order
		if err := json.Unmarshal(cmds[0].Order, &got); err != nil || got.OrderID != "web-1" {
			t.Fatalf("got order %s (%v), want web-1", cmds[0].Order, err)
		}
		h.cut()
		h.clock.Advance(h.backoff())
		h.cloud.Queue(storeID, cloud.Command{Kind: storeprint.CommandFailoverAck, PrinterID: "hot-1", CreatedBy: "test"})
		h.waitCloud("the third command acknowledged", func() bool { return h.cloud.DownAcked(storeID) == 3 })
		gw.with(func() { cmds = slices.Clone(gw.commands) })
		if len(cmds) != 3 || cmds[2].Kind != storeprint.CommandFailoverAck {
			t.Fatalf("got commands %+v applied, want each once", cmds)
		}
	})

	// Printers are reported on the link's start, when they change, and
	// after statusEvery anyway; a signal without a change sends nothing.
	t.Run("Status", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		p := sync.PrinterStatus{ID: "hot-1", Status: storeprint.PrinterReady, Stations: []string{"hot"}}
		gw.SetPrinters(p)
		h := setup(t, gw)
		h.run()
		status := func(want storeprint.PrinterState) func() bool {
			return func() bool {
				ps := h.cloud.Printers(storeID)
				return len(ps) == 1 && ps[0].Status == want
			}
		}
		h.waitCloud("the first report", status(storeprint.PrinterReady))
		gw.Notify()
		p.Status = storeprint.PrinterPaperEnd
		gw.SetPrinters(p)
		h.waitCloud("the change reported", status(storeprint.PrinterPaperEnd))
		if n := h.cloud.PrinterReports(storeID); n != 2 {
			t.Fatalf("got %d reports, want 2: the start and the change", n)
		}
		h.clock.Advance(pingEvery)
		h.waitCloud("the report again", func() bool { return h.cloud.PrinterReports(storeID) == 3 })
		if ps := h.cloud.Printers(storeID); ps[0].Status != storeprint.PrinterPaperEnd || !slices.Equal(ps[0].Stations, []string{"hot"}) {
			t.Fatalf("got printers %+v, want hot-1 out of paper", ps)
		}
	})

	// On a cluster each report carries the cluster as the node sees it;
	// a member's state changes with no word from the gateway, so it is
	// read again at each ping and reported when it changed.
	t.Run("Cluster", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.SetPrinters(sync.PrinterStatus{ID: "hot-1", Status: storeprint.PrinterReady, Stations: []string{"hot"}})
		h := setup(t, gw)
		var b, w atomic.Value
		b.Store("up")
		w.Store("follower")
		h.client.Cluster = func() *sync.ClusterStatus {
			return &sync.ClusterStatus{NodeID: "gw-a", Role: "leader", Leader: "gw-a", Term: 2,
				Members: []sync.ClusterMember{{NodeID: "gw-a", State: "up", Role: "leader"}, {NodeID: "gw-b", State: b.Load().(string), Role: "follower"},
					{NodeID: "wit", State: "up", Role: w.Load().(string)}}}
		}
		h.client.PingEvery = 10 * time.Second // well within statusEvery
		h.run()
		member := func(want, witness string) func() bool {
			return func() bool {
				c := h.cloud.Gateway(h.gateway.ID).Cluster
				return c != nil && c.Role == "leader" && c.Term == 2 && len(c.Members) == 3 && c.Members[1].State == want &&
					c.Members[2].Role == witness
			}
		}
		h.waitCloud("the cluster in the first report", member("up", "follower"))
		// The hello named the node and the term it leads in: the cloud
		// tells a takeover from a credential shared by two boxes.
		if got, want := h.cloud.LinkHolder(h.gateway.ID), (cloud.LinkHolder{Node: "gw-a", Term: 2, Incarnation: incarnation}); got != want {
			t.Errorf("the link's holder: got %+v, want %+v", got, want)
		}
		b.Store("down")
		h.clock.Advance(h.client.PingEvery)
		h.waitCloud("gw-b down at the next ping", member("down", "follower"))
		// The leader learns which node is the witness: reported at the
		// next ping.
		w.Store("witness")
		h.clock.Advance(h.client.PingEvery)
		h.waitCloud("wit the witness at the next ping", member("down", "witness"))
	})

	// A cloud behind what the outbox compacted gets a snapshot of every
	// task, then the events after it.
	t.Run("Snapshot", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(600)
		gw.OutboxAcked(context.Background(), 580)
		h := setup(t, gw)
		h.run()
		h.waitCloud("the events after the snapshot", h.cursorAt(600))
		l := h.link()
		wantEvents(t, l, 581, 600)
		if l.SnapshotTasks != 600 {
			t.Fatalf("got %d tasks in the snapshot, want 600", l.SnapshotTasks)
		}
		if r := h.client.State().Resync; r == nil || r.Kind != client.ResyncSnapshot || r.Tasks != 600 {
			t.Fatalf("got resync %+v, want a snapshot of 600 tasks", r)
		}
	})

	// A gateway behind the cloud learns the cloud's newer states before it
	// prints what it held, says so, and its next events are stored after
	// what the cloud has.
	t.Run("Learned", func(t *testing.T) {
		t.Parallel()
		gw := newGateway(incarnation)
		gw.Append(10)
		h := setup(t, gw)
		// The cloud has the 10 events and the tasks done; the gateway
		// comes back from a copy with the first 5.
		if _, err := h.cloud.Open(h.ctx, h.gateway.ID, storeID, cloud.LinkHello{Incarnation: "inc-1", Resync: true}); err != nil {
			t.Fatal(err)
		}
		var done []sync.Event
		for i := range 10 {
			done = append(done, taskEvent(uint64(i+1), task(i+1, 2, storeprint.StatusDone)))
		}
		if _, err := h.cloud.Ingest(h.ctx, h.gateway.ID, storeID, "inc-1", done); err != nil {
			t.Fatal(err)
		}
		gw.with(func() {
			gw.hello.LastSeq, gw.outbox = 5, gw.outbox[:5]
		})
		h.run()
		h.waitCloud("the gateway learned", func() bool { return h.link().Learned })
		gw.with(func() {
			if gw.learned != 1 {
				t.Errorf("got %d Learned calls, want 1 after the final states", gw.learned)
			}
			for i := range 10 {
				want := storeprint.StatusQueued
				if i >= 5 {
					want = storeprint.StatusDone
				}
				if tk := task(i+1, 0, "").TaskNo; gw.tasks[tk].Status != want {
					t.Errorf("got %s %s, want %s", tk, gw.tasks[tk].Status, want)
				}
			}
		})
		if r := h.client.State().Resync; r == nil || r.Kind != client.ResyncLearned || r.Tasks != 5 {
			t.Fatalf("got resync %+v, want 5 states learned", r)
		}
		gw.Append(1)
		h.waitCloud("the next event stored", h.cursorAt(6))
		if l := h.link(); len(l.Events) != 11 || l.Events[10].Seq != 6 || l.Replayed != 0 {
			t.Fatalf("got %d events, %d replayed, want the 11th stored as seq 6 and none replayed", len(l.Events), l.Replayed)
		}
	})

	// A refused credential is retried with a backoff doubling from
	// MinBackoff to MaxBackoff, ±20%; the link shows why, and sends its
	// credentials in headers, never in the URL.
	t.Run("ErrRefused", func(t *testing.T) {
		t.Parallel()
		h := setup(t, newGateway(incarnation))
		h.client.Token = "secret-token"
		h.run()
		for i, base := range []time.Duration{minBackoff, 2 * minBackoff, 4 * minBackoff, maxBackoff, maxBackoff} {
			wait := h.backoff()
			wantWait(t, wait, base)
			if n := h.requests.Load(); n != int32(i+1) {
				t.Fatalf("got %d attempts before wait %d, want %d", n, i+1, i+1)
			}
			h.clock.Advance(wait)
		}
		if st := h.client.State(); st.Connected || !strings.Contains(st.LastError, "refused") {
			t.Fatalf("got state %+v, want not connected with the refusal", st)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if r := h.first; r.Header.Get("Authorization") != "Bearer secret-token" || r.Header.Get(sync.HeaderGateway) != h.gateway.ID {
			t.Fatalf("got headers %v, want the gateway id and bearer token", r.Header)
		} else if strings.Contains(r.URL.String(), "secret") {
			t.Fatalf("the token is in the URL: %s", r.URL)
		}
	})

	// A gateway revoked while linked is cut at once, and its retries back
	// off as a refused one's, without the quick comeback of a cut link.
	t.Run("ErrRevoked", func(t *testing.T) {
		t.Parallel()
		h := setup(t, newGateway(incarnation))
		h.run()
		h.waitCloud("the link", func() bool { return h.cloud.Links(h.gateway.ID) == 1 })
		if _, err := h.cloud.RevokeGateway(h.ctx, h.gateway.ID, cloud.Note{}); err != nil {
			t.Fatal(err)
		}
		wantWait(t, h.backoff(), minBackoff)
		if st := h.client.State(); !strings.Contains(st.LastError, "revoked") {
			t.Fatalf("got state %+v, want the revocation", st)
		}
		h.clock.Advance(maxBackoff)
		wantWait(t, h.backoff(), 2*minBackoff)
	})

	// A gateway revoked once its link is up (its printers' report
	// accepted), before the link listens for revocations, is cut all the
	// same, without waiting for the server's poll (an hour here).
	t.Run("ErrRevokedBeforeWatch", func(t *testing.T) {
		t.Parallel()
		h := setup(t, newGateway(incarnation), func(s *server.Server) {
			r := &revokeBeforeWatch{GatewayService: s.Gateways, Notifier: s.Notifier, revoked: make(chan struct{})}
			s.Gateways, s.Notifier = r, r
		})
		h.run()
		wantWait(t, h.backoff(), minBackoff)
		if st := h.client.State(); !strings.Contains(st.LastError, "revoked") {
			t.Fatalf("got state %+v, want the revocation", st)
		}
	})
}

// revokeBeforeWatch revokes a gateway once the first report of its
// printers is stored, and holds the link's subscription to revocations
// until then: the revocation notifies nobody.
type revokeBeforeWatch struct {
	cloud.GatewayService
	server.Notifier
	once    stdsync.Once
	revoked chan struct{}
}

func (r *revokeBeforeWatch) UpdatePrinters(ctx context.Context, storeID, gatewayID string, ps []*cloud.Printer) error {
	err := r.GatewayService.UpdatePrinters(ctx, storeID, gatewayID, ps)
	if err == nil {
		r.once.Do(func() {
			_, err = r.RevokeGateway(ctx, gatewayID, cloud.Note{Reason: "box replaced"})
			close(r.revoked)
		})
	}
	return err
}

func (r *revokeBeforeWatch) Subscribe(channel, payload string) (<-chan struct{}, func()) {
	if channel == cloud.RevokedChannel {
		<-r.revoked
	}
	return r.Notifier.Subscribe(channel, payload)
}
