package raft_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway/raft"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// A new leader answers no read before its store has applied every entry
// of the terms before its own: the other gateway's store is held back
// (its entries committed, not yet applied) when the leader is cut off
// and it is elected. A read there then waits and answers 503, never
// the store as it was; once the entries are applied it answers them.
func TestNode_ReadAfterTakeover(t *testing.T) {
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	var behind atomic.Value // the id of the node whose store is held back
	behind.Store("")
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	c := setup(t, addr, func(nodeID, name string) {
		if name != raft.FailpointBeforeApply || behind.Load() != nodeID {
			return
		}
		select {
		case held <- struct{}{}:
		default:
		}
		<-release
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	first := c.nextLeader(t, ctx)
	next := c.nodes["gw-a"]
	if first.id == "gw-a" {
		next = c.nodes["gw-b"]
	}
	if _, _, err := first.gw.AcceptOrder(ctx, order("a1"), storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	waitTask(t, ctx, first, storeprint.TaskNo("a1", "hot"), storeprint.StatusDone)
	if err := next.node.WaitApplied(ctx, first.node.Applied()); err != nil {
		t.Fatal(err)
	}
	behind.Store(next.id)
	if _, _, err := first.gw.AcceptOrder(ctx, order("a2"), storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	a2 := storeprint.TaskNo("a2", "hot")
	waitTask(t, ctx, first, a2, storeprint.StatusDone)
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the other gateway applied nothing more")
	}
	c.isolate(first.id)
	for !next.node.IsLeader() {
		select {
		case <-next.node.LeaderChanged():
		case <-ctx.Done():
			t.Fatalf("%s was not elected", next.id)
		}
	}

	task, err := next.gw.Task(ctx, a2)
	if storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
		t.Errorf("a read on the new leader before its store applied the log: got %+v, %v; want unavailable", task, err)
	}
	if err := next.node.AwaitReady(ctx); storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
		t.Errorf("AwaitReady on the new leader before its store applied the log: got %v, want unavailable", err)
	}
	close(release)
	if err := next.node.AwaitReady(ctx); err != nil {
		t.Errorf("AwaitReady on the new leader once it applied the log: %v", err)
	}
	task, err = next.gw.Task(ctx, a2)
	if err != nil || task.Status != storeprint.StatusDone {
		t.Fatalf("a2 on the new leader once it applied the log: got %+v, %v; want done", task, err)
	}
	n := 0
	for _, tk := range sim.Printed() {
		if tk.TaskNo == a2 {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a2 on paper %d times, want once", n)
	}
}
