package raft

import (
	"context"
	"net"
	stdsync "sync"
	"time"

	hraft "github.com/hashicorp/raft"

	"github.com/storeprint/storeprint"
)

// A POS request that reaches a follower goes to the leader over the
// cluster's link. When the leader is gone (killed, frozen, cut off) the
// follower knows it long before the engine elects another: the leader's
// heartbeats, every tenth of a heartbeat timeout, stop. A request is then
// neither sent into the void nor answered 503 at once (the POS would try
// the other address, perhaps the very box that is gone, and wait there
// for its own timeout): it waits, a bounded while, for the new leader.

// leaderSilent is how long a leader may go unheard before a follower
// stops passing requests to it: five heartbeats.
func (n *Node) leaderSilent() time.Duration { return n.opts.HeartbeatTimeout / 2 }

// heardLeader reports whether this node heard from the leader it knows
// lately.
func (n *Node) heardLeader() bool {
	return n.leaderID() != "" && time.Since(n.raft.LastContact()) < n.leaderSilent()
}

// AwaitLeader waits until the cluster has a leader that answers: this
// node, or one this node heard from lately. It waits at most an
// election's time (one and a half heartbeat timeouts), or until ctx
// ends, and then answers EUNAVAILABLE with the reason.
func (n *Node) AwaitLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.HeartbeatTimeout*3/2)
	defer cancel()
	tick := time.NewTicker(n.opts.HeartbeatTimeout / 10)
	defer tick.Stop()
	for {
		changed := n.LeaderChanged()
		if n.IsLeader() || n.heardLeader() {
			return nil
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			if id := n.leaderID(); id != "" {
				return storeprint.Errorf(storeprint.EUNAVAILABLE, "the cluster leader %s has not been heard from for %s: the nodes are electing another",
					id, time.Since(n.raft.LastContact()).Round(time.Millisecond))
			}
			return notLeader("")
		case <-n.closing:
			return unavailable(hraft.ErrRaftShutdown)
		}
	}
}

// watchLeader closes c, a request's way to the leader, as soon as that
// leader falls silent or another leads: the follower answers at once
// instead of waiting on a frozen box.
func (n *Node) watchLeader(c net.Conn, leader string) net.Conn {
	w := &watchedConn{Conn: c, stop: make(chan struct{})}
	go func() {
		tick := time.NewTicker(n.opts.HeartbeatTimeout / 10)
		defer tick.Stop()
		for {
			changed := n.LeaderChanged()
			select {
			case <-w.stop:
				return
			case <-n.closing:
			case <-changed:
			case <-tick.C:
			}
			if n.leaderID() != leader || !n.heardLeader() || n.stopping.Load() {
				c.Close()
				return
			}
		}
	}()
	return w
}

// watchedConn is a connection to the leader watched by watchLeader.
type watchedConn struct {
	net.Conn
	stop chan struct{}
	once stdsync.Once
}

func (w *watchedConn) Close() error {
	w.once.Do(func() { close(w.stop) })
	return w.Conn.Close()
}

// DialLeader opens an authenticated connection to the leader for a POS
// request (see Forwarder).
func (n *Node) DialLeader(ctx context.Context) (net.Conn, error) {
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return nil, notLeader("")
	}
	if string(id) == n.id {
		return nil, storeprint.Errorf(storeprint.EUNAVAILABLE, "this node leads the cluster")
	}
	c, err := n.stream.dial(ctx, string(addr), kindHTTP)
	if err != nil {
		return nil, storeprint.Errorf(storeprint.EUNAVAILABLE, "the cluster leader %s does not answer: %v", id, err)
	}
	return n.watchLeader(c, string(id)), nil
}

// Forwarded is the listener of the POS requests followers pass to this
// node: the gateway's HTTP server serves it beside its own listener.
func (n *Node) Forwarded() net.Listener { return httpListener{n.stream} }
