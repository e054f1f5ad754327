package raft_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// send is one pass of the final fence: from the moment a node enters it
// to the moment its driver is let to send the first byte. While it lasts
// the node believes it leads.
type send struct {
	node    string
	term    uint64 // the node's term as it entered the fence
	taskNo  string
	reprint bool // a second paper made on purpose, marked REPRINT
	from    time.Time
	to      time.Time
}

// sends records every pass of the final fence, on every node.
type sends struct {
	mu  stdsync.Mutex
	all []send
}

func (s *sends) add(x send) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, x)
}

func (s *sends) list() []send {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all)
}

// fencedPrinter is a node's real printer driver, recording each pass of
// the final fence (the job's Prepare) that lets a first byte out.
type fencedPrinter struct {
	gateway.Printer
	n    *node
	rec  *sends
	hold *hold
}

func (p *fencedPrinter) Print(ctx context.Context, job *gateway.PrintJob) error {
	prepare := job.Prepare
	rn, id := p.n.node, p.n.id // this gateway's cluster node, not a later one
	job.Prepare = func(pctx context.Context, payload []byte) error {
		x := send{node: id, term: rn.State().Term, taskNo: job.Ticket.TaskNo, reprint: job.Ticket.Reprint, from: time.Now()}
		err := prepare(pctx, payload)
		defer p.hold.returned(id)
		if err != nil {
			return err
		}
		// The driver sends the first byte now: nothing lies between.
		x.to = time.Now()
		p.rec.add(x)
		return nil
	}
	return p.Printer.Print(ctx, job)
}

// Probe passes the probe of a printer in trouble (a confirmation request
// without paper) to the driver: a wrapper that hid it would keep the
// printer in trouble for good.
func (p *fencedPrinter) Probe(ctx context.Context) error {
	prober, ok := p.Printer.(gateway.Prober)
	if !ok {
		return errors.New("the driver cannot probe")
	}
	return prober.Probe(ctx)
}

// hold freezes one gateway's print attempt at the worst point: the final
// fence confirmed its leadership and the prepared receipt is durable, no
// byte is out (the after-prepared failpoint). A frozen box stops there
// as a whole; here its links are cut meanwhile (see freeze), which is
// all the others can tell of it.
type hold struct {
	mu      stdsync.Mutex
	armed   string        // the node whose next attempt stops; "" none
	held    chan struct{} // closed when the attempt stopped
	release chan struct{} // closed to let it go on
	back    chan struct{} // closed when its Prepare returned
	at      string        // the node whose attempt is stopped now
}

// arm makes node's next attempt stop at the failpoint.
func (h *hold) arm(node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.at = node, ""
	h.held, h.release, h.back = make(chan struct{}), make(chan struct{}), make(chan struct{})
}

// disarm lets an attempt that has not stopped yet go by, and one that
// has go on.
func (h *hold) disarm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = ""
	if h.release != nil {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	}
}

// failpoint is the gateways' failpoint hook.
func (h *hold) failpoint(node, name string) {
	h.mu.Lock()
	if name != gateway.FailpointAfterPrepared || h.armed != node {
		h.mu.Unlock()
		return
	}
	h.armed, h.at = "", node
	held, release := h.held, h.release
	h.mu.Unlock()
	close(held)
	<-release
}

// returned notes that a Prepare of node returned: the stopped one, if
// it had stopped there.
func (h *hold) returned(node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at == node && h.release != nil {
		select {
		case <-h.release:
			h.at = ""
			close(h.back)
		default:
		}
	}
}

// clusterModel drives a three-node cluster (two gateways and a witness,
// real Badger, real TCP between them through cuttable proxies, one
// simulated kitchen printer they share).
type clusterModel struct {
	t    *testing.T
	c    *cluster
	sim  *printersim.Printer
	rec  *sends
	hold *hold
	// out holds the nodes cut off or down, down those stopped; with two
	// out no majority is left.
	out  map[string]bool
	down map[string]bool
	// alone holds the spans without a majority (to zero: until now).
	alone []span
	// orders posted, and the tasks of those the cluster accepted.
	orders   []string
	accepted map[string]bool
	// voided holds when a void answered that a task was cancelled.
	voided  map[string]time.Time
	freezes int
	step    int
}

type span struct{ from, to time.Time }

// majority reports whether two of the three nodes are up and linked.
func (m *clusterModel) majority() bool { return len(m.out) < 2 }

// cutID is the node out when there is one, or "".
func (m *clusterModel) cutID() string {
	for id := range m.out {
		return id
	}
	return ""
}

// in lists the nodes neither cut off nor down.
func (m *clusterModel) in() []string {
	var in []string
	for _, id := range ids {
		if !m.out[id] {
			in = append(in, id)
		}
	}
	return in
}

// setOut notes a node cut off (or down), its links already cut.
func (m *clusterModel) setOut(id string, down bool) {
	m.out[id] = true
	if down {
		m.down[id] = true
	}
	if len(m.out) == 2 {
		m.alone = append(m.alone, span{from: time.Now()})
	}
}

// rejoin brings a node that is up back among the others: its links, and
// no other's, come back.
func (m *clusterModel) rejoin(id string) {
	if !m.majority() {
		m.alone[len(m.alone)-1].to = time.Now()
	}
	delete(m.out, id)
	delete(m.down, id)
	m.c.link(m.out)
}

func (m *clusterModel) gatewayNode(rt *rapid.T) *node {
	var live []string
	for _, id := range ids {
		if m.c.nodes[id].gw != nil && !m.down[id] {
			live = append(live, id)
		}
	}
	if len(live) == 0 {
		rt.Skip("both gateways are down")
	}
	return m.c.nodes[rapid.SampledFrom(live).Draw(rt, "node")]
}

// maybe reports whether err leaves the request's outcome unknown or
// refused in a way a POS retries elsewhere.
func maybe(err error) bool {
	return storeprint.ErrorCode(err) == storeprint.EUNAVAILABLE || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

func (m *clusterModel) post(rt *rapid.T) {
	m.step++
	n := m.gatewayNode(rt)
	id := fmt.Sprintf("m%d", m.step)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, _, err := n.gw.AcceptOrder(ctx, order(id), storeprint.SourcePOS)
	m.orders = append(m.orders, id)
	if !m.majority() {
		// Nothing can be durable on a majority now: the POS gets a 503
		// and tries the other gateway.
		if storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
			rt.Fatalf("accept %s on %s with %v out: got %v, want unavailable", id, n.id, m.out, err)
		}
		return
	}
	if maybe(err) {
		// Refused, or no answer: the POS sends the same order again, to
		// the node that leads now.
		wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer wcancel()
		n = m.c.leaderOf(m.t, wctx, m.cutID())
		res, _, err = n.gw.AcceptOrder(ctx, order(id), storeprint.SourcePOS)
	}
	switch {
	case err == nil:
		for _, tr := range res.Tasks {
			m.accepted[tr.TaskNo] = true
		}
	case maybe(err):
	default:
		rt.Fatalf("accept %s on %s: %v", id, n.id, err)
	}
}

func (m *clusterModel) void(rt *rapid.T) {
	if len(m.orders) == 0 {
		rt.Skip("no order yet")
	}
	id := rapid.SampledFrom(m.orders).Draw(rt, "order")
	n := m.gatewayNode(rt)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := n.gw.Void(ctx, id, gateway.Actor{Operator: "amy", Reason: "guest left"})
	switch {
	case err == nil:
		at := time.Now()
		for _, tr := range res.Tasks {
			if _, ok := m.voided[tr.TaskNo]; !ok && tr.Status == storeprint.StatusCancelled {
				m.voided[tr.TaskNo] = at
			}
		}
	case maybe(err):
	case storeprint.ErrorCode(err) == storeprint.ENOTFOUND && !m.accepted[storeprint.TaskNo(id, "hot")]:
		// never reached the cluster
	default:
		rt.Fatalf("void %s on %s: %v", id, n.id, err)
	}
}

// cut cuts a node's links; with one out already, no majority is left.
func (m *clusterModel) cut(rt *rapid.T) {
	if !m.majority() {
		rt.Skip("two nodes are out")
	}
	id := rapid.SampledFrom(m.in()).Draw(rt, "cut")
	m.c.isolate(id)
	m.setOut(id, false)
}

// heal restores a cut node's links.
func (m *clusterModel) heal(rt *rapid.T) {
	var cut []string
	for _, id := range ids {
		if m.out[id] && !m.down[id] {
			cut = append(cut, id)
		}
	}
	if len(cut) == 0 {
		rt.Skip("no link cut")
	}
	m.rejoin(rapid.SampledFrom(cut).Draw(rt, "heal"))
}

// kill stops a node as a box that loses power: its links go first, so
// it hands nothing on.
func (m *clusterModel) kill(rt *rapid.T) {
	if !m.majority() {
		rt.Skip("two nodes are out")
	}
	id := rapid.SampledFrom(m.in()).Draw(rt, "kill")
	m.c.isolate(id)
	m.c.nodes[id].stop()
	m.setOut(id, true)
}

// restart starts a killed node again on its data dir.
func (m *clusterModel) restart(rt *rapid.T) {
	var down []string
	for _, id := range ids {
		if m.down[id] {
			down = append(down, id)
		}
	}
	if len(down) == 0 {
		rt.Skip("no node down")
	}
	m.revive(rapid.SampledFrom(down).Draw(rt, "restart"))
}

func (m *clusterModel) revive(id string) {
	n := m.c.nodes[id]
	ln, err := net.Listen("tcp", n.cc.Listen)
	if err != nil {
		m.t.Fatal(err)
	}
	n.openDir(m.t, n.dir, ln)
	if n.gw != nil {
		m.c.startGateway(m.t, n)
	}
	m.rejoin(id)
}

func (m *clusterModel) printer(rt *rapid.T) {
	m.sim.SetFault(rapid.SampledFrom([]printersim.Fault{printersim.FaultNone, printersim.FaultLostAck}).Draw(rt, "fault"))
}

// freeze stops the leader at the worst point of a print attempt: its
// final fence confirmed that it leads and the prepared receipt is
// durable, no byte is out. Its links go quiet, as a stopped box's, and
// the others elect a new leader, which prints an order meanwhile. Then
// the old leader wakes: its attempt goes on where it stopped, while it
// still believes it leads, and then its links come back.
func (m *clusterModel) freeze(rt *rapid.T) {
	if len(m.out) > 0 {
		rt.Skip("a node is out")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := m.c.leaderOf(m.t, ctx, "")
	m.hold.arm(l.id)
	defer m.hold.disarm()
	if !m.postTo(l) {
		return
	}
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	defer hcancel()
	select {
	case <-m.hold.held:
	case <-hctx.Done():
		return // nothing came to the fence (the printer in trouble): no freeze this time
	}
	m.freezes++
	m.c.isolate(l.id)
	m.setOut(l.id, false)
	n := m.c.leaderOf(m.t, ctx, l.id)
	if ok := m.postTo(n); ok {
		sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
		m.waitSettled(sctx, n, storeprint.TaskNo(fmt.Sprintf("m%d", m.step), "hot"))
		scancel()
	}
	m.hold.disarm()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	select {
	case <-m.hold.back:
	case <-wctx.Done():
		rt.Fatalf("the woken attempt on %s did not go on", l.id)
	}
	m.rejoin(l.id)
}

// postTo posts a new order to n, once; it reports whether n accepted it.
func (m *clusterModel) postTo(n *node) bool {
	m.step++
	id := fmt.Sprintf("m%d", m.step)
	m.orders = append(m.orders, id)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, _, err := n.gw.AcceptOrder(ctx, order(id), storeprint.SourcePOS)
	switch {
	case err == nil:
		for _, tr := range res.Tasks {
			m.accepted[tr.TaskNo] = true
		}
		return true
	case maybe(err):
		return false
	}
	m.t.Fatalf("accept %s on %s: %v", id, n.id, err)
	return false
}

// waitSettled waits, while ctx lasts, until the task is no longer queued
// or printing on n.
func (m *clusterModel) waitSettled(ctx context.Context, n *node, taskNo string) {
	changes, stop := n.gw.Subscribe()
	defer stop()
	for {
		if task, err := n.gw.Task(ctx, taskNo); err == nil && open(task) == 0 {
			return
		}
		select {
		case <-changes:
		case <-ctx.Done():
			return
		}
	}
}

// open is 1 for a task still on its way to paper or a person.
func open(task *gateway.Task) int {
	switch task.Status {
	case storeprint.StatusDone, storeprint.StatusAttention, storeprint.StatusCancelled, storeprint.StatusFailed:
		return 0
	}
	return 1
}

// advance lets the cluster work. With a majority a leader must come
// forth; then it waits for the leader's next change of the store, if any
// comes soon. Without one, no node may pass the fence: a check begun
// after the cut counts only answers to appends sent after it began (an
// answer already on its way back when the links were cut proves nothing
// of now), and none can cross the cut.
func (m *clusterModel) advance(rt *rapid.T) {
	if !m.majority() {
		for _, id := range ids {
			if m.down[id] {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := m.c.nodes[id].node.CheckLeader(ctx)
			cancel()
			if err == nil {
				rt.Fatalf("%s passes the fence with %v out: no majority", id, m.out)
			}
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := m.c.leaderOf(m.t, ctx, m.cutID())
	changes, stop := l.gw.Subscribe()
	defer stop()
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	defer wcancel()
	select {
	case <-changes:
	case <-l.node.LeaderChanged():
	case <-wctx.Done():
	}
}

// check is the promise at every step: at most one node prints at any
// moment, none while no majority is left, nothing voided prints, nothing
// is on paper that no fence let out, and nothing is on paper twice.
func (m *clusterModel) check(rt *rapid.T) {
	all := m.rec.list()
	passes := map[string]int{}
	for i, a := range all {
		passes[a.taskNo]++
		for _, b := range all[i+1:] {
			if a.node != b.node && a.from.Before(b.to) && b.from.Before(a.to) {
				rt.Fatalf("two nodes printing at once: %s (term %d) sent %s in %s..%s, %s (term %d) sent %s in %s..%s",
					a.node, a.term, a.taskNo, a.from.Format(time.StampMicro), a.to.Format(time.StampMicro),
					b.node, b.term, b.taskNo, b.from.Format(time.StampMicro), b.to.Format(time.StampMicro))
			}
		}
		for _, s := range m.alone {
			if a.from.After(s.from.Add(m.c.nodes[ids[0]].node.LeaderLease())) && (s.to.IsZero() || a.from.Before(s.to)) {
				rt.Fatalf("%s passed the fence for %s at %s without a majority (from %s)",
					a.node, a.taskNo, a.from.Format(time.StampMicro), s.from.Format(time.StampMicro))
			}
		}
		if at, ok := m.voided[a.taskNo]; ok && a.to.After(at) {
			rt.Fatalf("%s sent by %s after its void answered", a.taskNo, a.node)
		}
	}
	plain, paper := map[string]int{}, map[string]int{}
	for _, tk := range m.sim.Printed() {
		if paper[tk.TaskNo]++; paper[tk.TaskNo] > passes[tk.TaskNo] {
			rt.Fatalf("%s on paper %d times, let out by the fence %d times", tk.TaskNo, paper[tk.TaskNo], passes[tk.TaskNo])
		}
		if !reprint(tk) {
			if plain[tk.TaskNo]++; plain[tk.TaskNo] > 1 {
				rt.Fatalf("%s on paper %d times without REPRINT", tk.TaskNo, plain[tk.TaskNo])
			}
		}
		if _, ok := m.voided[tk.TaskNo]; ok {
			rt.Fatalf("%s on paper although its void cancelled it", tk.TaskNo)
		}
	}
}

// settle heals everything and checks that nothing stalls: every task the
// cluster holds ends done, flagged for a person, or cancelled, and every
// accepted one is there; a done task is on paper exactly once; a ticket
// sent more than once is marked REPRINT or flagged for a person.
func (m *clusterModel) settle(rt *rapid.T) {
	m.hold.disarm()
	for _, id := range ids {
		if m.down[id] {
			m.revive(id)
		}
	}
	for _, id := range ids {
		if m.out[id] {
			m.rejoin(id)
		}
	}
	m.sim.SetFault(printersim.FaultNone)
	// A printer that lost several answers in a row is in trouble: it is
	// probed, and then tried, each after a cool-down of up to 30 s. So a
	// stall is a ticket still open well after two of those.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	var tasks []*gateway.Task
	for {
		l := m.c.leaderOf(m.t, ctx, "")
		changes, stop := l.gw.Subscribe()
		moved := l.node.LeaderChanged()
		// A new leader's store holds the entries of the terms before
		// only once it applied them: an update waits for that.
		err := l.node.Update(ctx, func(gateway.Tx) error { return nil })
		if err == nil {
			tasks, err = l.gw.Tasks(ctx, "", 0)
		}
		if err != nil && !maybe(err) {
			rt.Fatalf("tasks on %s: %v", l.id, err)
		}
		n := 0
		for _, task := range tasks {
			n += open(task)
		}
		if err == nil && n == 0 {
			stop()
			break
		}
		select {
		case <-changes:
		case <-moved:
		case <-ctx.Done():
			rt.Fatalf("%d tickets still open after healing: a stall (%s); on %s: %s", n, statuses(tasks), l.id, printers(l))
		}
		stop()
	}
	m.check(rt)
	held := map[string]*gateway.Task{}
	for _, task := range tasks {
		held[task.TaskNo] = task
	}
	paper := map[string]int{}
	reprints := 0
	for _, tk := range m.sim.Printed() {
		paper[tk.TaskNo]++
		if reprint(tk) {
			reprints++
		}
	}
	m.t.Logf("%d orders posted, %d tickets accepted, %d fence passes, %d on paper (%d REPRINT), %d freezes, %d spans without a majority, %s",
		len(m.orders), len(m.accepted), len(m.rec.list()), len(m.sim.Printed()), reprints, m.freezes, len(m.alone), statuses(tasks))
	for no := range m.accepted {
		task, ok := held[no]
		switch {
		case !ok:
			rt.Fatalf("%s accepted, then lost", no)
		case task.Status == storeprint.StatusDone && paper[no] == 0:
			rt.Fatalf("%s done, not on paper", no)
		}
	}
	sent := map[string][]send{}
	for _, x := range m.rec.list() {
		sent[x.taskNo] = append(sent[x.taskNo], x)
	}
	for no, xs := range sent {
		for _, x := range xs[1:] {
			if task := held[no]; !x.reprint && (task == nil || task.Status != storeprint.StatusAttention) {
				rt.Fatalf("%s sent again by %s (first by %s), neither marked REPRINT nor flagged for a person", no, x.node, xs[0].node)
			}
		}
	}
}

// reprint reports whether a paper carries the REPRINT line of a second
// paper made on purpose.
func reprint(tk printersim.Ticket) bool {
	return slices.ContainsFunc(strings.Split(tk.Text, "\n"), func(l string) bool { return strings.TrimSpace(l) == "REPRINT" })
}

// printers says where a node's printers stand, for a stall's report.
func printers(n *node) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := n.gw.Printers(ctx)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s %s (%s, in trouble %t, queue %d) ", p.ID, p.Status, p.Word, p.InTrouble, p.Queue)
	}
	return b.String()
}

func statuses(tasks []*gateway.Task) string {
	n := map[storeprint.Status]int{}
	for _, t := range tasks {
		n[t.Status]++
	}
	return fmt.Sprint(n)
}

// TestNode_Model drives a real three-node cluster with random sequences
// of orders posted to either gateway, voids, nodes' links cut and healed,
// nodes killed and restarted on their data dirs, one or two at a time
// (two out: no majority is left), the leader frozen in the middle of a
// print attempt while the others elect a new one, and the printer losing
// its answers or giving them. After every action it checks:
//
//	at most one node prints at any moment (no two nodes' passes of the
//	final fence, from entering it to the first byte, overlap in time);
//	without a majority no node passes the fence, and no order is
//	accepted (the POS gets a 503);
//	nothing of a voided ticket is sent after the void answered;
//	nothing is on paper more often than a fence let it out;
//	no ticket is on paper twice without REPRINT (a printer in trouble
//	keeps an uncertain ticket queued, marked REPRINT, once it has
//	flagged its share);
//
// and once everything is healed: no stall (every task ends done, flagged
// attention_required, cancelled or failed), no accepted ticket lost, a
// done ticket on paper, and a ticket sent more than once (by one node or
// two) is marked REPRINT or flagged for a person.
//
// The freeze is what makes "at most one node prints" bite: the frozen
// leader passed the final fence before it stopped and wakes while
// another leads. It must send nothing then (Gateway.stillLeads): without
// that last check its first byte leaves during the new leader's sends.
//
// Each case starts a cluster and waits out real elections, so by default
// it runs 4 cases of about 20 actions; run more with
//
//	go test -run TestNode_Model -rapid.checks=20 -rapid.steps=30 ./gateway/raft/
func TestNode_Model(t *testing.T) {
	if testing.Short() {
		t.Skip("kills, cuts and freezes a real cluster's nodes for a while")
	}
	bound(t, "rapid.checks", "4")
	bound(t, "rapid.steps", "20")
	rapid.Check(t, func(rt *rapid.T) {
		sim, addr := printertest.StartTCP(t, printersim.Options{})
		rec, h := &sends{}, &hold{}
		c := setupWith(t, addr, h.failpoint, func(n *node, p gateway.Printer) gateway.Printer {
			return &fencedPrinter{Printer: p, n: n, rec: rec, hold: h}
		})
		m := &clusterModel{t: t, c: c, sim: sim, rec: rec, hold: h, out: map[string]bool{}, down: map[string]bool{},
			accepted: map[string]bool{}, voided: map[string]time.Time{}}
		defer func() {
			h.disarm()
			for _, n := range c.nodes {
				n.stop()
			}
		}()
		rt.Repeat(map[string]func(*rapid.T){
			"post":    m.post,
			"void":    m.void,
			"cut":     m.cut,
			"heal":    m.heal,
			"kill":    m.kill,
			"restart": m.restart,
			"freeze":  m.freeze,
			"printer": m.printer,
			"advance": m.advance,
			"":        m.check,
		})
		m.settle(rt)
	})
}

// bound sets a rapid flag for this test unless the command line set it.
func bound(t *testing.T, name, value string) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if set {
		return
	}
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}
