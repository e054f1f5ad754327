package raft_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// A leader stopped (a planned stop) while the printer has just confirmed
// a ticket: its printing stops while it still leads, so the ticket's
// outcome is recorded and the next leader has it done, not uncertain
// (held for a person although its paper came out).
func TestNode_CloseRecordsAttemptInFlight(t *testing.T) {
	sim, addr := printertest.StartTCP(t, printersim.Options{})
	stuck := make(chan string, 1)
	cancelled := map[string]chan struct{}{}
	for _, id := range ids {
		cancelled[id] = make(chan struct{})
	}
	var held atomic.Bool
	c := setup(t, addr, func(nodeID, name string) {
		if name != gateway.FailpointBeforePrinted || !held.CompareAndSwap(false, true) {
			return
		}
		stuck <- nodeID
		<-cancelled[nodeID] // until the node stops what its leader runs
	})
	// What the leader runs tells the test when its context ends.
	for id, n := range c.nodes {
		if n.gw == nil {
			continue
		}
		gw, done := n.gw, cancelled[id]
		n.node.WhileLeader(func(ctx context.Context) {
			go func() {
				<-ctx.Done()
				select {
				case <-done:
				default:
					close(done)
				}
			}()
			c.leaders <- id
			gw.Run(ctx)
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	first := c.nextLeader(t, ctx)
	res, created, err := first.gw.AcceptOrder(ctx, order("o1"), storeprint.SourcePOS)
	if err != nil || !created {
		t.Fatalf("accept: %v, created %v", err, created)
	}
	taskNo := res.Tasks[0].TaskNo
	if got := <-stuck; got != first.id {
		t.Fatalf("%s printed, the leader is %s", got, first.id)
	}
	first.stop()
	var next *node
	for next == nil || next.id == first.id {
		next = c.nextLeader(t, ctx)
	}
	for {
		task, err := next.gw.Task(ctx, taskNo)
		if err == nil && task.Status != storeprint.StatusQueued && task.Status != storeprint.StatusPrinting {
			if task.Status != storeprint.StatusDone {
				t.Errorf("%s after the leader's planned stop: %s (%s), want done", taskNo, task.Status, task.Reason)
			}
			break
		}
		if err := next.node.WaitApplied(ctx, next.node.Applied()+1); err != nil {
			t.Fatalf("%s: %v (last %+v)", taskNo, err, task)
		}
	}
	if n := len(sim.Printed()); n != 1 {
		t.Errorf("on paper %d times, want once", n)
	}
}
