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
	node   string
	term   uint64 // the node's term as it entered the fence
	taskNo string
	from   time.Time
	to     time.Time
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
	n   *node
	rec *sends
}

func (p *fencedPrinter) Print(ctx context.Context, job *gateway.PrintJob) error {
	prepare := job.Prepare
	rn, id := p.n.node, p.n.id // this gateway's cluster node, not a later one
	job.Prepare = func(pctx context.Context, payload []byte) error {
		x := send{node: id, term: rn.State().Term, taskNo: job.Ticket.TaskNo, from: time.Now()}
		if err := prepare(pctx, payload); err != nil {
			return err
		}
		x.to = time.Now()
		p.rec.add(x)
		return nil
	}
	return p.Printer.Print(ctx, job)
}

// clusterModel drives a three-node cluster (two gateways and a witness,
// real Badger, real TCP between them through cuttable proxies, one
// simulated kitchen printer they share).
type clusterModel struct {
	t   *testing.T
	c   *cluster
	sim *printersim.Printer
	rec *sends
	// out is the node cut off or down ("" none); at most one at a time,
	// so that a majority can always lead.
	out  string
	down bool
	// orders posted, and the tasks of those the cluster accepted.
	orders   []string
	accepted map[string]bool
	// voided holds when a void answered that a task was cancelled.
	voided map[string]time.Time
	step   int
}

func (m *clusterModel) gatewayNode(rt *rapid.T) *node {
	var live []string
	for _, id := range ids {
		if m.c.nodes[id].gw != nil && !(m.down && m.out == id) {
			live = append(live, id)
		}
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
	if maybe(err) {
		// Refused, or no answer: the POS sends the same order again, to
		// the node that leads now.
		wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer wcancel()
		n = m.c.leaderOf(m.t, wctx, m.out)
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

func (m *clusterModel) cut(rt *rapid.T) {
	if m.out != "" {
		rt.Skip("a node is already out")
	}
	m.out = rapid.SampledFrom(ids).Draw(rt, "cut")
	m.c.isolate(m.out)
}

func (m *clusterModel) heal(rt *rapid.T) {
	if m.out == "" || m.down {
		rt.Skip("no link cut")
	}
	m.c.heal()
	m.out = ""
}

// kill stops a node as a box that loses power: its links go first, so
// it hands nothing on.
func (m *clusterModel) kill(rt *rapid.T) {
	if m.out != "" {
		rt.Skip("a node is already out")
	}
	m.out, m.down = rapid.SampledFrom(ids).Draw(rt, "kill"), true
	m.c.isolate(m.out)
	m.c.nodes[m.out].stop()
}

// restart starts the killed node again on its data dir.
func (m *clusterModel) restart(rt *rapid.T) {
	if !m.down {
		rt.Skip("no node down")
	}
	m.revive()
}

func (m *clusterModel) revive() {
	n := m.c.nodes[m.out]
	ln, err := net.Listen("tcp", n.cc.Listen)
	if err != nil {
		m.t.Fatal(err)
	}
	n.openDir(m.t, n.dir, ln)
	if n.gw != nil {
		m.c.startGateway(m.t, n)
	}
	m.c.heal()
	m.out, m.down = "", false
}

func (m *clusterModel) printer(rt *rapid.T) {
	m.sim.SetFault(rapid.SampledFrom([]printersim.Fault{printersim.FaultNone, printersim.FaultLostAck}).Draw(rt, "fault"))
}

// advance lets the cluster work: a majority is always up and linked, so
// a leader must come forth; then it waits for the leader's next change
// of the store, if any comes soon.
func (m *clusterModel) advance(rt *rapid.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := m.c.leaderOf(m.t, ctx, m.out)
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
// moment, nothing voided prints, nothing is on paper twice.
func (m *clusterModel) check(rt *rapid.T) {
	all := m.rec.list()
	for i, a := range all {
		for _, b := range all[i+1:] {
			if a.node != b.node && a.from.Before(b.to) && b.from.Before(a.to) {
				rt.Fatalf("two nodes printing at once: %s (term %d) sent %s in %s..%s, %s (term %d) sent %s in %s..%s",
					a.node, a.term, a.taskNo, a.from.Format(time.StampMicro), a.to.Format(time.StampMicro),
					b.node, b.term, b.taskNo, b.from.Format(time.StampMicro), b.to.Format(time.StampMicro))
			}
		}
		if at, ok := m.voided[a.taskNo]; ok && a.to.After(at) {
			rt.Fatalf("%s sent by %s after its void answered", a.taskNo, a.node)
		}
	}
	plain := map[string]int{}
	for _, tk := range m.sim.Printed() {
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
// accepted one is there; a done task is on paper exactly once.
func (m *clusterModel) settle(rt *rapid.T) {
	if m.down {
		m.revive()
	}
	m.c.heal()
	m.out = ""
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
		var err error
		tasks, err = l.gw.Tasks(ctx, "", 0)
		if err != nil && !maybe(err) {
			rt.Fatalf("tasks on %s: %v", l.id, err)
		}
		open := 0
		for _, task := range tasks {
			switch task.Status {
			case storeprint.StatusDone, storeprint.StatusAttention, storeprint.StatusCancelled, storeprint.StatusFailed:
			default:
				open++
			}
		}
		if err == nil && open == 0 {
			stop()
			break
		}
		select {
		case <-changes:
		case <-moved:
		case <-ctx.Done():
			rt.Fatalf("%d tickets still open after healing: a stall (%s)", open, statuses(tasks))
		}
		stop()
	}
	m.check(rt)
	held := map[string]*gateway.Task{}
	for _, task := range tasks {
		held[task.TaskNo] = task
	}
	paper := map[string]int{}
	for _, tk := range m.sim.Printed() {
		paper[tk.TaskNo]++
	}
	reprints := 0
	for _, tk := range m.sim.Printed() {
		if reprint(tk) {
			reprints++
		}
	}
	m.t.Logf("%d orders posted, %d tickets accepted, %d fence passes, %d on paper (%d REPRINT), %s",
		len(m.orders), len(m.accepted), len(m.rec.list()), len(m.sim.Printed()), reprints, statuses(tasks))
	for no := range m.accepted {
		task, ok := held[no]
		switch {
		case !ok:
			rt.Fatalf("%s accepted, then lost", no)
		case task.Status == storeprint.StatusDone && paper[no] == 0:
			rt.Fatalf("%s done, not on paper", no)
		}
	}
}

// reprint reports whether a paper carries the REPRINT line of a second
// paper made on purpose.
func reprint(tk printersim.Ticket) bool {
	return slices.ContainsFunc(strings.Split(tk.Text, "\n"), func(l string) bool { return strings.TrimSpace(l) == "REPRINT" })
}

func statuses(tasks []*gateway.Task) string {
	n := map[storeprint.Status]int{}
	for _, t := range tasks {
		n[t.Status]++
	}
	return fmt.Sprint(n)
}

// TestNode_Model drives a real three-node cluster with random sequences
// of orders posted to either gateway, voids, a node's links cut and
// healed, a node killed and restarted on its data dir, and the printer
// losing its answers or giving them. After every action it checks:
//
//	at most one node prints at any moment (no two nodes' passes of the
//	final fence, from entering it to the first byte, overlap in time);
//	nothing of a voided ticket is sent after the void answered;
//	no ticket is on paper twice without REPRINT (a printer in trouble
//	keeps an uncertain ticket queued, marked REPRINT, once it has
//	flagged its share);
//
// and once everything is healed: no stall (every task ends done, flagged
// attention_required, cancelled or failed), no accepted ticket lost, a
// done ticket on paper. At most one node is out (cut or
// down) at a time, so a majority can always lead.
//
// Each case starts a cluster and waits out real elections, so by default
// it runs 4 cases of about 20 actions; run more with
//
//	go test -run TestNode_Model -rapid.checks=20 -rapid.steps=30 ./gateway/raft/
func TestNode_Model(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and cuts a real cluster's nodes for a while")
	}
	bound(t, "rapid.checks", "4")
	bound(t, "rapid.steps", "20")
	rapid.Check(t, func(rt *rapid.T) {
		sim, addr := printertest.StartTCP(t, printersim.Options{})
		rec := &sends{}
		c := setupWith(t, addr, nil, func(n *node, p gateway.Printer) gateway.Printer {
			return &fencedPrinter{Printer: p, n: n, rec: rec}
		})
		defer func() {
			for _, n := range c.nodes {
				n.stop()
			}
		}()
		m := &clusterModel{t: t, c: c, sim: sim, rec: rec, accepted: map[string]bool{}, voided: map[string]time.Time{}}
		rt.Repeat(map[string]func(*rapid.T){
			"post":    m.post,
			"void":    m.void,
			"cut":     m.cut,
			"heal":    m.heal,
			"kill":    m.kill,
			"restart": m.restart,
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
