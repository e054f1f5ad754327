package raft

import (
	"context"
	stdsync "sync"
	"time"

	hraft "github.com/hashicorp/raft"

	"github.com/storeprint/storeprint"
)

// datedTransport is the node's transport, which dates each follower's
// confirmation of this node's leadership by when the append it answered
// was sent.
//
// The engine's leadership check (VerifyLeader) counts any answer that
// reaches the leader after the check began, including the answer to a
// heartbeat sent before it: one that waited in a socket while this node
// was frozen (a paused VM, SIGSTOP), sent by a follower that has since
// elected another leader. The answer proves the follower followed this
// node when the heartbeat reached it, not that it does now. A follower
// that accepts an append stands for no election for a heartbeat timeout
// from then; so an append sent after the check began and accepted by a
// majority proves that no other node can lead before the check's start
// plus that timeout (see CheckLeader).
type datedTransport struct {
	*hraft.NetworkTransport

	mu   stdsync.Mutex
	sent map[hraft.ServerID]time.Time // each peer's latest accepted append, by when it was sent
	wake chan struct{}                // closed, and replaced, at each accepted append
}

func newDatedTransport(t *hraft.NetworkTransport) *datedTransport {
	return &datedTransport{NetworkTransport: t, sent: map[hraft.ServerID]time.Time{}, wake: make(chan struct{})}
}

// AppendEntries implements hraft.Transport. An append the follower
// accepted (it did not know a later term, and its log matched) is dated
// from before the send.
func (t *datedTransport) AppendEntries(id hraft.ServerID, target hraft.ServerAddress, args *hraft.AppendEntriesRequest, resp *hraft.AppendEntriesResponse) error {
	sent := time.Now()
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil && resp.Success && resp.Term == args.Term {
		t.accepted(id, sent)
	}
	return err
}

func (t *datedTransport) accepted(id hraft.ServerID, sent time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sent.After(t.sent[id]) {
		t.sent[id] = sent
	}
	close(t.wake)
	t.wake = make(chan struct{})
}

// confirmedSince waits until a majority of voters, self among them if it
// is one, have confirmed this node since since: self by asking, each of
// the others by accepting an append sent at or after since. It gives up
// at deadline (EUNAVAILABLE) or when ctx is done.
func (t *datedTransport) confirmedSince(ctx context.Context, self hraft.ServerID, voters []hraft.ServerID, since, deadline time.Time) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		t.mu.Lock()
		n, wake := 0, t.wake
		for _, v := range voters {
			if v == self || !t.sent[v].Before(since) {
				n++
			}
		}
		t.mu.Unlock()
		if n > len(voters)/2 {
			return nil
		}
		select {
		case <-wake:
		case <-timer.C:
			return storeprint.Errorf(storeprint.EUNAVAILABLE, "only %d of %d cluster nodes confirmed this node's leadership within the lease: another node may lead by now", n, len(voters))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
