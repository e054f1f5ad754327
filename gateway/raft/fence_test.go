package raft_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/raft"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// The fence counts only answers to appends sent after it began. An
// answer that waited in a socket, as the answers to a leader's last
// heartbeats do while it is frozen, proves that the others followed it
// when they answered, not that they still do: they may have elected
// another leader since.
func TestNode_FenceStaleAnswers(t *testing.T) {
	_, addr := printertest.StartTCP(t, printersim.Options{})
	var leader atomic.Pointer[node]
	var armed atomic.Bool
	c := setup(t, addr, func(nodeID, name string) {
		// Once the check has asked, what the others answered before it
		// comes in.
		if l := leader.Load(); name == raft.FailpointFenceAsked && l != nil && l.id == nodeID && armed.CompareAndSwap(true, false) {
			for _, p := range l.out {
				p.release()
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := c.nextLeader(t, ctx)
	// At the end its links close, as cut, not left hanging.
	defer c.isolate(l.id)
	if err := l.node.CheckLeader(ctx); err != nil {
		t.Fatalf("the leader's fence, all links up: %v", err)
	}
	leader.Store(l)
	// The others' answers to the leader's next heartbeats are held back;
	// then nothing the leader sends reaches them.
	for _, p := range l.out {
		p.hold()
	}
	for id, p := range l.out {
		select {
		case <-p.heldCh:
		case <-ctx.Done():
			t.Fatalf("no answer from %s to hold", id)
		}
	}
	for _, p := range l.out {
		p.dropOut()
	}
	armed.Store(true)
	began := time.Now()
	err := l.node.CheckLeader(ctx)
	if err == nil {
		t.Fatalf("%s passed its fence (began %s) on answers to heartbeats sent before it began", l.id, began.Format(time.StampMicro))
	}
	if armed.Load() {
		// On a loaded machine the leader may have stepped down first,
		// without word from the others for its lease: the check then
		// fails before it asks, and the answers were never let in.
		t.Logf("%s failed its fence before asking the engine: %v", l.id, err)
	}
}
