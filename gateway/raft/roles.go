package raft

import (
	"context"
	"time"

	hraft "github.com/hashicorp/raft"

	"github.com/storeprint/storeprint/gateway"
)

// Which node is the witness is in the witness's own configuration only.
// Each node states its role at every handshake of the cluster's traffic
// (see stream.go), and greets every other node at its start to learn
// theirs (see greet); the leader, which talks to every node, records the
// roles in the replicated store, so that every node (a follower hears
// only from its leader) names the witness, across restarts and
// takeovers, in GET /v1/cluster, the LAN page, its metrics and its
// status reports to the cloud.

// metaWitness, followed by a node id, holds 1 when that node is the
// witness.
const metaWitness = "cluster_witness:"

// recordRoles keeps the replicated record of the roles the nodes stated
// to this leader up to date, until ctx ends.
func (n *Node) recordRoles(ctx context.Context) {
	for {
		stated, changed := n.stream.statedRoles()
		stated[n.id] = n.Witness()
		err := n.Update(ctx, func(tx gateway.Tx) error {
			for _, p := range n.peers {
				witness, ok := stated[p.ID]
				if !ok {
					continue // not heard from yet
				}
				v, err := tx.Meta(metaWitness + p.ID)
				if err != nil {
					return err
				}
				if (v == 1) != witness {
					v = 0
					if witness {
						v = 1
					}
					tx.SetMeta(metaWitness+p.ID, v)
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			n.log.Warn("record the roles of the cluster's nodes", "err", err)
			t := time.NewTimer(n.opts.HeartbeatTimeout) // then again
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// witnesses returns which nodes are the witness (node id → true): as a
// node stated it to this one, else as the replicated store records it;
// this node as its own configuration says.
func (n *Node) witnesses() map[string]bool {
	out, _ := n.stream.statedRoles()
	err := n.db.View(context.Background(), func(tx gateway.ReadTx) error {
		for _, p := range n.peers {
			if _, ok := out[p.ID]; ok {
				continue // stated to this node: the freshest word
			}
			v, err := tx.Meta(metaWitness + p.ID)
			if err != nil {
				return err
			}
			out[p.ID] = v == 1
		}
		return nil
	})
	if err != nil {
		n.log.Warn("read the roles of the cluster's nodes", "err", err)
	}
	out[n.id] = n.Witness()
	return out
}

// greet learns each other node's role at this node's start, before any
// leader has recorded it: it greets each node (a handshake alone) that
// has not stated its role to this one yet, until every one has, trying
// a node that does not answer again after a heartbeat timeout, then
// after twice as long, up to 16 heartbeat timeouts. A follower would
// otherwise hear the witness named only once a leader had talked to it
// and the record reached the follower.
func (n *Node) greet() {
	defer n.wg.Done()
	wait := n.opts.HeartbeatTimeout
	for {
		stated, _ := n.stream.statedRoles()
		left := 0
		for _, p := range n.peers {
			if _, ok := stated[p.ID]; ok || p.ID == n.id {
				continue
			}
			left++
			ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
			go func() { // a greeting in flight ends with the node
				select {
				case <-n.closing:
					cancel()
				case <-ctx.Done():
				}
			}()
			c, err := n.stream.dial(ctx, p.Address, kindHello)
			cancel()
			if err == nil {
				c.Close()
				left--
			}
		}
		if left == 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-n.closing:
			t.Stop()
			return
		}
		wait = min(2*wait, 16*n.opts.HeartbeatTimeout)
	}
}

// State is the node's view of its cluster (GET /v1/cluster).
func (n *Node) State() gateway.ClusterState {
	st := gateway.ClusterState{NodeID: n.id, Leader: n.leaderID(), Term: n.raft.CurrentTerm(), Members: []gateway.ClusterMember{}}
	switch n.raft.State() {
	case hraft.Leader:
		st.Role = gateway.RoleLeader
	case hraft.Candidate:
		st.Role = gateway.RoleCandidate
	default:
		st.Role = gateway.RoleFollower
	}
	if n.Witness() {
		st.Role = gateway.RoleWitness
	}
	leading := st.Role == gateway.RoleLeader
	recent := 3 * n.opts.HeartbeatTimeout
	witness := n.witnesses()
	for _, p := range n.peers {
		m := gateway.ClusterMember{NodeID: p.ID, Address: p.Address, State: gateway.MemberUnknown, Role: gateway.RoleFollower}
		switch {
		case witness[p.ID]:
			m.Role = gateway.RoleWitness
		case p.ID == n.id:
			m.Role = st.Role
		case p.ID == st.Leader:
			m.Role = gateway.RoleLeader
		}
		at, heard := n.stream.lastHeard(p.ID)
		switch {
		case p.ID == n.id:
			m.State = gateway.MemberUp
		case heard && time.Since(at) < recent:
			m.State = gateway.MemberUp
		case leading || p.ID == st.Leader:
			// The leader hears from every node at each heartbeat, a
			// follower from its leader.
			m.State = gateway.MemberDown
		}
		st.Members = append(st.Members, m)
	}
	return st
}
