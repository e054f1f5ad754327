package raft_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// heal restores every link between the nodes.
func (c *cluster) heal() {
	for _, n := range c.nodes {
		for _, p := range n.out {
			p.setCut(false)
		}
	}
}

// link cuts the links of the nodes in out and restores all others.
func (c *cluster) link(out map[string]bool) {
	for _, n := range c.nodes {
		for to, p := range n.out {
			p.setCut(out[n.id] || out[to])
		}
	}
}

// leaderOf waits for a gateway node that leads, among those not cut off.
func (c *cluster) leaderOf(t *testing.T, ctx context.Context, cut string) *node {
	t.Helper()
	for {
		chs := make([]<-chan struct{}, 0, 3)
		for _, n := range c.nodes {
			chs = append(chs, n.node.LeaderChanged())
		}
		for _, n := range c.nodes {
			if n.gw != nil && n.id != cut && n.node.IsLeader() {
				if err := n.node.CheckLeader(ctx); err == nil {
					return n
				}
			}
		}
		select {
		case <-chs[0]:
		case <-chs[1]:
		case <-chs[2]:
		case <-ctx.Done():
			t.Fatal("no leader")
		}
	}
}

// Random cuts and heals of the three nodes' links while orders come in:
// every accepted order is kept, nothing stalls, every ticket is on paper
// once or flagged for a person, and none is on paper twice.
func TestNode_Chaos(t *testing.T) {
	if testing.Short() {
		t.Skip("cuts a real cluster's links for a while")
	}
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("STOREPRINT_CHAOS_SEED"), 10, 64); err == nil {
		seed = s // replays a run's cuts and orders (the timing differs)
	}
	t.Logf("seed %d (STOREPRINT_CHAOS_SEED replays it)", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	c := setup(t, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var accepted []string
	cut := ""
	for step := range 30 {
		switch r := rnd.IntN(4); {
		case r == 0 && cut == "":
			cut = ids[rnd.IntN(len(ids))]
			c.isolate(cut)
		case r == 1 && cut != "":
			c.heal()
			cut = ""
		default:
			l := c.leaderOf(t, ctx, cut)
			id := fmt.Sprintf("x%d", step)
			actx, acancel := context.WithTimeout(ctx, 5*time.Second)
			_, _, err := l.gw.AcceptOrder(actx, order(id), storeprint.SourcePOS)
			acancel()
			switch storeprint.ErrorCode(err) {
			case "":
				accepted = append(accepted, storeprint.TaskNo(id, "hot"))
			case storeprint.EUNAVAILABLE:
				// Deposed meanwhile: the POS tries again elsewhere.
			default:
				t.Fatalf("accept %s on %s: %v", id, l.id, err)
			}
		}
	}
	c.heal()
	l := c.leaderOf(t, ctx, "")
	changes, stop := l.gw.Subscribe()
	defer stop()
	for {
		open := 0
		for _, no := range accepted {
			task, err := l.gw.Task(ctx, no)
			if err != nil {
				t.Fatalf("%s accepted, then lost: %v", no, err)
			}
			switch task.Status {
			case storeprint.StatusDone, storeprint.StatusAttention:
			default:
				open++
			}
		}
		if open == 0 {
			break
		}
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatalf("%d tickets still open: a stall", open)
		}
	}
	paper := map[string]int{}
	for _, tk := range sim.Printed() {
		paper[tk.TaskNo]++
	}
	for _, no := range accepted {
		task, _ := l.gw.Task(ctx, no)
		switch {
		case task.Status == storeprint.StatusDone && paper[no] != 1:
			t.Errorf("%s: done, on paper %d times", no, paper[no])
		case paper[no] > 1:
			t.Errorf("%s: %s, on paper %d times", no, task.Status, paper[no])
		}
	}
	t.Logf("%d orders accepted", len(accepted))
}
