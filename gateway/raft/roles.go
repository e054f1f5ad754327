package raft

import (
	"context"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

// Which node is the witness is in the witness's own configuration only.
// Each node states its role at every handshake of the cluster's traffic
// (see stream.go); the leader, which talks to every node, records the
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
