package raft

import (
	"time"

	hraft "github.com/hashicorp/raft"
)

// detect is each follower's own check of its leader, on top of the
// engine's. The engine stands for election when its timer, armed for a
// random time between one and two heartbeat timeouts, finds the leader
// silent for a heartbeat timeout; and a node that still has a leader
// refuses another's candidacy. So an election waited for the second
// survivor's timer: one to three heartbeat timeouts after the leader's
// last word, sometimes won by the witness, which then hands over.
//
// detect checks the leader's silence every twentieth of a heartbeat
// timeout and, once the silence reaches its threshold, asks the engine
// to look now (a shorter heartbeat timeout, which the engine applies at
// once; restored when a leader is heard again). It tolerates no shorter
// silence than the engine did: a busy box stands for election no more
// often. The witness looks first, at one heartbeat timeout, and the
// gateways a fifth later: the witness drops its leader and stands in
// vain (the gateway still has the leader), then grants the gateway's
// candidacy, so that a gateway wins and nothing is handed over.
func (n *Node) detect() {
	defer n.wg.Done()
	hb := n.opts.HeartbeatTimeout
	after := hb + hb/5
	if n.Witness() {
		after = hb
	}
	tick := time.NewTicker(hb / 20)
	defer tick.Stop()
	looking := false
	for {
		select {
		case <-n.closing:
			return
		case <-tick.C:
		}
		silent := time.Since(n.raft.LastContact())
		leader := n.leaderID()
		switch st := n.raft.State(); {
		case !looking && st == hraft.Follower && leader != "" && leader != n.id && silent >= after:
			if err := n.setHeartbeat(hb * 3 / 4); err != nil {
				n.log.Warn("cluster: could not look for a new leader now", "err", err)
				continue
			}
			looking = true
			n.log.Info("the cluster leader fell silent: looking for a new one", "leader", leader, "silent", silent.Round(time.Millisecond))
		case looking && (st == hraft.Leader || (leader != "" && silent < hb/2)):
			if err := n.setHeartbeat(hb); err != nil {
				n.log.Warn("cluster: could not restore the heartbeat timeout", "err", err)
				continue
			}
			looking = false
		}
	}
}

// setHeartbeat changes the engine's heartbeat timeout; a shorter one
// makes a follower check its leader's silence at once.
func (n *Node) setHeartbeat(d time.Duration) error {
	rc := n.raft.ReloadableConfig()
	rc.HeartbeatTimeout = d
	return n.raft.ReloadConfig(rc)
}
