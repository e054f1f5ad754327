package raft_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// waitWitness waits until n names the witness, and no other node, as the
// witness among its members, following the entries n applies.
func waitWitness(t *testing.T, ctx context.Context, n *node, witness string) gateway.ClusterState {
	t.Helper()
	for {
		st := n.node.State()
		ok := len(st.Members) == len(ids)
		for _, m := range st.Members {
			ok = ok && (m.Role == gateway.RoleWitness) == (m.NodeID == witness)
		}
		if ok {
			return st
		}
		if err := n.node.WaitApplied(ctx, n.node.Applied()+1); err != nil {
			t.Fatalf("%s: members %+v, want %s alone the witness", n.id, st.Members, witness)
		}
	}
}

// Every node names the witness as such among its members (a follower,
// which hears only from its leader, too), after a takeover and after a
// restart; the leader as the leader.
func TestNode_WitnessRole(t *testing.T) {
	_, addr := printertest.StartTCP(t, printersim.Options{})
	c := setup(t, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := c.nextLeader(t, ctx)

	check := func(t *testing.T, leader *node, from ...*node) {
		t.Helper()
		for _, n := range from {
			st := waitWitness(t, ctx, n, "wit")
			for _, m := range st.Members {
				switch {
				case m.NodeID == "wit":
				case m.NodeID == n.id && m.Role != st.Role:
					t.Errorf("%s: names itself %s, its role is %s", n.id, m.Role, st.Role)
				case m.NodeID == leader.id && n.id != leader.id && st.Leader == leader.id && m.Role != gateway.RoleLeader:
					t.Errorf("%s: names its leader %s %s", n.id, m.NodeID, m.Role)
				case m.NodeID != n.id && m.NodeID != st.Leader && m.Role != gateway.RoleFollower:
					t.Errorf("%s: names %s %s, want follower", n.id, m.NodeID, m.Role)
				}
			}
		}
	}
	t.Run("EveryNode", func(t *testing.T) {
		check(t, first, c.nodes["gw-a"], c.nodes["gw-b"], c.nodes["wit"])
		if st := first.node.State(); st.Role != gateway.RoleLeader {
			t.Errorf("%s: role %s, want leader", first.id, st.Role)
		}
	})

	c.isolate(first.id)
	next := c.nextLeader(t, ctx)
	if next.id == first.id || next.id == "wit" {
		t.Fatalf("%s leads after %s was cut off", next.id, first.id)
	}
	t.Run("AfterTakeover", func(t *testing.T) {
		check(t, next, next, c.nodes["wit"], first)
	})

	// The old leader comes back on its data dir, as a restarted box: it
	// hears from the new leader alone, and still names the witness.
	first.stop()
	for _, n := range c.nodes {
		for _, p := range n.out {
			p.setCut(false)
		}
	}
	ln, err := net.Listen("tcp", first.cc.Listen)
	if err != nil {
		t.Fatal(err)
	}
	first.openDir(t, first.dir, ln)
	t.Run("AfterRestart", func(t *testing.T) {
		check(t, next, first)
	})
}

// A node names the witness as soon as it has talked to it, not once a
// leader has: in a new cluster whose witness starts last and reaches no
// node but a follower, cut off from the leader and unable to answer the
// follower's own dials, that follower names it, its own greeting at
// start answered.
func TestNode_WitnessKnownFromStart(t *testing.T) {
	_, addr := printertest.StartTCP(t, printersim.Options{})
	c := setupLater(t, addr, nil, nil, "wit")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader := c.nextLeader(t, ctx)
	follower := c.nodes["gw-a"]
	if leader.id == "gw-a" {
		follower = c.nodes["gw-b"]
	}
	wit := c.nodes["wit"]
	leader.out["wit"].setCut(true)
	wit.out[leader.id].setCut(true)
	wit.out[follower.id].setCut(true)
	wit.openDir(t, t.TempDir(), wit.ln)

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st := follower.node.State()
		ok := len(st.Members) == len(ids)
		for _, m := range st.Members {
			ok = ok && (m.Role == gateway.RoleWitness) == (m.NodeID == "wit")
		}
		if ok {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s: members %+v, want wit the witness", follower.id, st.Members)
		}
	}
	if st := wit.node.State(); st.Role != gateway.RoleWitness {
		t.Errorf("the witness names itself %s", st.Role)
	}
}
