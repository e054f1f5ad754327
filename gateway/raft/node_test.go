package raft_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/gateway/raft"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

const secret = "a-cluster-secret-for-tests"

// proxy is a TCP proxy from one node to another: cut, it closes what it
// carries and drops every new connection, as a pulled cable would. It
// can also hold back what comes back to the node dialing, and drop what
// that node sends, as a node frozen would see its links (see hold).
type proxy struct {
	ln     net.Listener
	target string
	mu     stdsync.Mutex
	cut    bool
	conns  []net.Conn

	holding bool          // what comes back is kept in held
	held    []heldBytes   // in the order it came
	heldCh  chan struct{} // told when something is held
	drop    bool          // what the node sends is read and dropped
	dropped chan struct{} // told when something is dropped
}

// heldBytes came back on a connection while the proxy held it.
type heldBytes struct {
	to net.Conn
	b  []byte
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, heldCh: make(chan struct{}, 1), dropped: make(chan struct{}, 1)}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.carry(c)
		}
	}()
	return p
}

func (p *proxy) carry(c net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		return
	}
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns = append(p.conns, c, u)
	p.mu.Unlock()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				p.mu.Lock()
				drop := p.drop
				p.mu.Unlock()
				if drop {
					tell(p.dropped)
				} else if _, err := u.Write(buf[:n]); err != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		u.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := u.Read(buf)
		if n > 0 {
			p.mu.Lock()
			holding := p.holding
			if holding {
				p.held = append(p.held, heldBytes{to: c, b: append([]byte(nil), buf[:n]...)})
				tell(p.heldCh)
			}
			p.mu.Unlock()
			if !holding {
				if _, err := c.Write(buf[:n]); err != nil {
					break
				}
			}
		}
		if err != nil {
			break
		}
	}
	c.Close()
}

// tell signals ch without waiting.
func tell(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// hold keeps what comes back from now on; release passes on what it kept,
// in order, and what comes after.
func (p *proxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = true
}

func (p *proxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.held {
		h.to.Write(h.b)
	}
	p.held, p.holding = nil, false
}

// dropOut drops what the node sends from now on.
func (p *proxy) dropOut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = true
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// node is one node of a test cluster, with its gateway (nil for the
// witness).
type node struct {
	id    string
	cc    *gateway.ClusterConfig
	log   *slog.Logger
	node  *raft.Node
	store *badger.DB
	gw    *gateway.Gateway
	// out[id] carries this node's traffic to node id.
	out map[string]*proxy
	// fp is the node's failpoint hook (raft.Options.Failpoint).
	fp func(name string)
	// ln is the listener the node was first started on.
	ln net.Listener
	// dir is the node's data dir, cfg and opts its gateway's.
	dir  string
	cfg  *gateway.Config
	opts gateway.Options
}

type cluster struct {
	nodes   map[string]*node
	leaders chan string
	// wrap, when set, wraps each gateway's printer.
	wrap func(n *node, p gateway.Printer) gateway.Printer
}

var ids = []string{"gw-a", "gw-b", "wit"}

// setup starts two gateways and a witness on real Badger stores, each
// node reaching the others through a proxy of its own, and printing on
// one simulated printer. fp is the gateways' failpoint hook.
func setup(t *testing.T, sim string, fp func(nodeID, name string)) *cluster {
	t.Helper()
	return setupWith(t, sim, fp, nil)
}

// setupWith is setup with each gateway's printer wrapped by wrap.
func setupWith(t *testing.T, sim string, fp func(nodeID, name string), wrap func(n *node, p gateway.Printer) gateway.Printer) *cluster {
	t.Helper()
	return setupLater(t, sim, fp, wrap, "")
}

// setupLater is setupWith with the node later laid out, not started:
// the test starts it with openDir on n.ln (a witness only).
func setupLater(t *testing.T, sim string, fp func(nodeID, name string), wrap func(n *node, p gateway.Printer) gateway.Printer, later string) *cluster {
	t.Helper()
	lns := map[string]net.Listener{}
	for _, id := range ids {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[id] = ln
	}
	c := &cluster{nodes: map[string]*node{}, leaders: make(chan string, 16), wrap: wrap}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	for _, id := range ids {
		n := &node{id: id, out: map[string]*proxy{}}
		var peers []string
		for _, other := range ids {
			addr := lns[other].Addr().String()
			if other != id {
				n.out[other] = newProxy(t, addr)
				addr = n.out[other].addr()
			}
			peers = append(peers, other+"="+addr)
		}
		cc := &gateway.ClusterConfig{NodeID: id, Listen: lns[id].Addr().String(), Peers: peers, Secret: secret, Witness: id == "wit"}
		cfg := &gateway.Config{
			StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"}, Cluster: cc,
			Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: sim, OnUncertain: "hold",
				ConnectTimeout: gateway.Duration{Duration: time.Second}, ConfirmTimeout: gateway.Duration{Duration: time.Second}}},
			Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
		}
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		n.cc, n.log, n.cfg = cc, log.With("node", id), cfg
		if fp != nil {
			n.fp = func(name string) { fp(id, name) }
		}
		n.ln = lns[id]
		if id == later {
			c.nodes[id] = n
			continue
		}
		n.open(t, lns[id])
		if !cc.Witness {
			n.opts = gateway.Options{LeaseMargin: 400 * time.Millisecond, Logger: log.With("node", id)}
			if fp != nil {
				n.opts.Failpoint = func(name string) { fp(id, name) }
			}
			c.startGateway(t, n)
		}
		c.nodes[id] = n
	}
	return c
}

// startGateway starts a gateway node's gateway on its cluster node.
func (c *cluster) startGateway(t *testing.T, n *node) {
	t.Helper()
	var p gateway.Printer = tcp.New(n.cfg.Printers[0], n.cfg.StoreID)
	if c.wrap != nil {
		p = c.wrap(n, p)
	}
	gw, err := gateway.New(n.cfg, n.node, map[string]gateway.Printer{"hot-1": p}, n.opts)
	if err != nil {
		t.Fatal(err)
	}
	n.gw = gw
	id := n.id
	n.node.WhileLeader(func(ctx context.Context) {
		select {
		case c.leaders <- id:
		default: // nobody follows the elections
		}
		gw.Run(ctx)
	})
}

// open starts the node on an empty data dir.
func (n *node) open(t *testing.T, ln net.Listener) {
	t.Helper()
	n.openDir(t, t.TempDir(), ln)
}

// openDir starts the node on the data dir dir.
func (n *node) openDir(t *testing.T, dir string, ln net.Listener) {
	t.Helper()
	n.dir = dir
	store, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	n.store = store
	n.node, err = raft.Open(raft.Options{Cluster: n.cc, Dir: dir + "/raft", Store: store, Logger: n.log,
		Listener: ln, HeartbeatTimeout: 500 * time.Millisecond, TrailingLogs: 2, Failpoint: n.fp})
	if err != nil {
		t.Fatal(err)
	}
	node := n.node
	t.Cleanup(func() { node.Close(); store.Close() })
}

// stop stops a node, as a box that died.
func (n *node) stop() {
	n.node.Close()
	n.store.Close()
}

// replace starts a stopped node again on an empty data dir, as a
// replaced box with the same configuration.
func (n *node) replace(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", n.cc.Listen)
	if err != nil {
		t.Fatal(err)
	}
	n.open(t, ln)
}

// isolate cuts a node off from the others, both ways.
func (c *cluster) isolate(id string) {
	for _, n := range c.nodes {
		for to, p := range n.out {
			if n.id == id || to == id {
				p.setCut(true)
			}
		}
	}
}

func (c *cluster) nextLeader(t *testing.T, ctx context.Context) *node {
	t.Helper()
	select {
	case id := <-c.leaders:
		return c.nodes[id]
	case <-ctx.Done():
		t.Fatal("no leader elected")
	}
	return nil
}

func order(id string) *storeprint.Order {
	return &storeprint.Order{OrderID: id, Items: []storeprint.Item{{Name: "noodles", Qty: 1, Station: "hot"}}}
}

// waitTask waits until a node's store holds the task in one of the
// statuses, following the gateway's changes.
func waitTask(t *testing.T, ctx context.Context, n *node, taskNo string, want ...storeprint.Status) *gateway.Task {
	t.Helper()
	for {
		if err := n.node.WaitApplied(ctx, n.node.Applied()+1); err != nil {
			task, _ := n.gw.Task(context.Background(), taskNo)
			t.Fatalf("%s: task %s: got %+v, want status %v", n.id, taskNo, task, want)
		}
		task, err := n.gw.Task(ctx, taskNo)
		if err == nil {
			for _, s := range want {
				if task.Status == s {
					return task
				}
			}
		}
	}
}

func TestNode_Takeover(t *testing.T) {
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	// The first leader stops right after the prepared receipt of order o2
	// is durable, as if it died there: an attempt in flight.
	stuck := make(chan string, 1)
	release := make(chan struct{})
	defer close(release)
	var once stdsync.Once
	c := setup(t, addr, func(nodeID, name string) {
		if name != gateway.FailpointAfterPrepared || len(sim.Printed()) != 1 {
			return
		}
		hold := false
		once.Do(func() { hold = true })
		if hold {
			stuck <- nodeID
			<-release
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	first := c.nextLeader(t, ctx)
	t.Run("AcceptedEverywhere", func(t *testing.T) {
		res, created, err := first.gw.AcceptOrder(ctx, order("o1"), storeprint.SourcePOS)
		if err != nil || !created {
			t.Fatalf("accept: %v, created %v", err, created)
		}
		if _, err := sim.WaitPrinted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		done := waitTask(t, ctx, first, res.Tasks[0].TaskNo, storeprint.StatusDone)
		for _, n := range c.nodes {
			if err := n.node.WaitApplied(ctx, first.node.Applied()); err != nil {
				t.Fatal(err)
			}
			var got *gateway.Task
			if err := n.store.View(ctx, func(tx gateway.ReadTx) error {
				var err error
				got, err = tx.Task(done.TaskNo)
				return err
			}); err != nil {
				t.Fatalf("%s: %v", n.id, err)
			}
			if got.Status != storeprint.StatusDone || got.Version != done.Version {
				t.Errorf("%s: got %s v%d, want done v%d", n.id, got.Status, got.Version, done.Version)
			}
		}
	})

	res, _, err := first.gw.AcceptOrder(ctx, order("o2"), storeprint.SourcePOS)
	if err != nil {
		t.Fatal(err)
	}
	if id := <-stuck; id != first.id {
		t.Fatalf("attempt in flight on %s, want the leader %s", id, first.id)
	}
	c.isolate(first.id)
	next := c.nextLeader(t, ctx)
	if next.id == first.id {
		t.Fatalf("the cut-off leader %s was elected again", next.id)
	}
	t.Run("InFlightUncertain", func(t *testing.T) {
		task := waitTask(t, ctx, next, res.Tasks[0].TaskNo, storeprint.StatusAttention)
		if task.Reason == "" {
			t.Errorf("held without a reason: %+v", task)
		}
	})
	t.Run("NothingLost", func(t *testing.T) {
		if _, err := next.gw.Task(ctx, storeprint.TaskNo("o1", "hot")); err != nil {
			t.Fatalf("o1 on the new leader: %v", err)
		}
		res3, _, err := next.gw.AcceptOrder(ctx, order("o3"), storeprint.SourcePOS)
		if err != nil {
			t.Fatal(err)
		}
		waitTask(t, ctx, next, res3.Tasks[0].TaskNo, storeprint.StatusDone)
	})
	t.Run("DeposedFenced", func(t *testing.T) {
		if err := first.node.CheckLeader(ctx); err == nil {
			t.Fatal("the cut-off leader passes the fence")
		} else if storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
			t.Errorf("got %v, want unavailable", err)
		}
		_, _, err := first.gw.AcceptOrder(ctx, order("o4"), storeprint.SourcePOS)
		if storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
			t.Errorf("order on the cut-off node: got %v, want unavailable", err)
		}
	})
	if got := sim.Printed(); len(got) != 2 {
		t.Errorf("printed %d tickets, want 2 (o1, o3): %+v", len(got), got)
	}
}

// A replaced box (an empty data dir, the same configuration) joins,
// catches up from a snapshot of the store and then from the log (or, in
// a cluster whose log was never compacted, from the whole log), and
// holds what the others hold.
func TestNode_Replace(t *testing.T) {
	t.Run("Snapshot", func(t *testing.T) { testReplace(t, true) })
	t.Run("Log", func(t *testing.T) { testReplace(t, false) })
}

func testReplace(t *testing.T, compacted bool) {
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	c := setup(t, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader := c.nextLeader(t, ctx)
	for _, id := range []string{"r1", "r2", "r3"} {
		if _, _, err := leader.gw.AcceptOrder(ctx, order(id), storeprint.SourcePOS); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sim.WaitPrinted(ctx, 3); err != nil {
		t.Fatal(err)
	}
	wit := c.nodes["wit"]
	wit.stop()
	// The log behind the snapshot is gone: the new box can only start
	// from the snapshot.
	if compacted {
		if err := leader.node.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := leader.gw.AcceptOrder(ctx, order("r4"), storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	waitTask(t, ctx, leader, storeprint.TaskNo("r4", "hot"), storeprint.StatusDone)
	wit.replace(t)
	if err := wit.node.WaitApplied(ctx, leader.node.Applied()); err != nil {
		t.Fatalf("the replaced node did not catch up: applied %d, leader %d", wit.node.Applied(), leader.node.Applied())
	}
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		want, err := leader.gw.Task(ctx, storeprint.TaskNo(id, "hot"))
		if err != nil {
			t.Fatal(err)
		}
		var got *gateway.Task
		if err := wit.store.View(ctx, func(tx gateway.ReadTx) error {
			var err error
			got, err = tx.Task(want.TaskNo)
			return err
		}); err != nil {
			t.Fatalf("%s on the replaced node: %v", want.TaskNo, err)
		}
		if got.Status != want.Status || got.Version != want.Version || got.Seq != want.Seq {
			t.Errorf("%s: got %s v%d seq %d, want %s v%d seq %d", want.TaskNo, got.Status, got.Version, got.Seq, want.Status, want.Version, want.Seq)
		}
	}
	var a, b uint64
	leader.store.View(ctx, func(tx gateway.ReadTx) error { a, _ = tx.LastEventSeq(); return nil })
	wit.store.View(ctx, func(tx gateway.ReadTx) error { b, _ = tx.LastEventSeq(); return nil })
	if a != b || a == 0 {
		t.Errorf("last outbox event: replaced node %d, leader %d", b, a)
	}
	// Its share: with the other gateway cut off, the leader's next
	// order is durable only with the replaced node's vote.
	other := c.nodes["gw-a"]
	if leader.id == "gw-a" {
		other = c.nodes["gw-b"]
	}
	c.isolate(other.id)
	if _, _, err := leader.gw.AcceptOrder(ctx, order("r5"), storeprint.SourcePOS); err != nil {
		t.Fatalf("an order with the replaced node the only other one: %v", err)
	}
	waitTask(t, ctx, leader, storeprint.TaskNo("r5", "hot"), storeprint.StatusDone)
	if err := wit.node.WaitApplied(ctx, leader.node.Applied()); err != nil {
		t.Fatal(err)
	}
}
