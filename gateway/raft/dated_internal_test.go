package raft

import (
	"context"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"

	"github.com/storeprint/storeprint"
)

// A majority of voters, this node among them, must each have accepted
// an append sent since the check began; earlier ones, and those of nodes
// that do not vote, count for nothing.
func TestDatedTransport_ConfirmedSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Now()
	before, after := t0.Add(-time.Millisecond), t0.Add(time.Millisecond)
	three := []hraft.ServerID{"a", "b", "w"}
	five := []hraft.ServerID{"a", "b", "c", "d", "w"}
	for _, tc := range []struct {
		name     string
		voters   []hraft.ServerID
		accepted map[hraft.ServerID]time.Time
		ok       bool
	}{
		{"None", three, nil, false},
		{"Before", three, map[hraft.ServerID]time.Time{"b": before, "w": before}, false},
		{"OneSince", three, map[hraft.ServerID]time.Time{"b": before, "w": after}, true},
		{"AtStart", three, map[hraft.ServerID]time.Time{"w": t0}, true},
		{"NotAVoter", three, map[hraft.ServerID]time.Time{"x": after}, false},
		{"FiveOneSince", five, map[hraft.ServerID]time.Time{"b": after, "c": before, "d": before}, false},
		{"FiveTwoSince", five, map[hraft.ServerID]time.Time{"b": after, "d": after}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDatedTransport(nil)
			for id, at := range tc.accepted {
				d.accepted(id, at)
			}
			err := d.confirmedSince(ctx, "a", tc.voters, t0, time.Now())
			if tc.ok && err != nil {
				t.Errorf("got %v, want confirmed", err)
			}
			if !tc.ok && storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
				t.Errorf("got %v, want EUNAVAILABLE", err)
			}
		})
	}
	t.Run("Waits", func(t *testing.T) {
		d := newDatedTransport(nil)
		d.accepted("b", before)
		done := make(chan error, 1)
		go func() { done <- d.confirmedSince(ctx, "a", three, t0, time.Now().Add(time.Minute)) }()
		d.accepted("b", after) // the answer to the check's own heartbeat
		if err := <-done; err != nil {
			t.Fatalf("got %v, want confirmed once b accepted an append sent since", err)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		d := newDatedTransport(nil)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := d.confirmedSince(cctx, "a", three, t0, time.Now().Add(time.Minute)); err != context.Canceled {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}
