package gateway

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// ClusterConfig is the optional [cluster] section: the store runs on
// several nodes (two gateways and a witness) that keep one replicated
// store. Without it the gateway runs alone.
type ClusterConfig struct {
	NodeID string `toml:"node_id"` // this node's id, one of peers
	Listen string `toml:"listen"`  // host:port of the nodes' own traffic
	// Peers are every node of the cluster, this one included, as
	// "id=host:port" (the peer's listen address).
	Peers []string `toml:"peers"`
	// Secret authenticates the nodes to each other; every node has the
	// same one.
	Secret string `toml:"secret"`
	// Witness: this node votes and keeps the log but prints nothing and
	// serves no POS API.
	Witness bool `toml:"witness"`
}

// IsWitness reports whether the section makes this node the witness: it
// needs no printers or stations (nil: no cluster, not a witness).
func (c *ClusterConfig) IsWitness() bool { return c != nil && c.Witness }

// Peer is one node of the cluster.
type Peer struct {
	ID      string
	Address string
}

// MinClusterSecret is the shortest cluster secret accepted.
const MinClusterSecret = 16

// ParsePeers returns the peers of the configuration, in its order.
func (c *ClusterConfig) ParsePeers() ([]Peer, error) {
	out := make([]Peer, 0, len(c.Peers))
	seen := map[string]bool{}
	addrs := map[string]bool{}
	for i, p := range c.Peers {
		id, addr, ok := strings.Cut(p, "=")
		if !ok {
			return nil, storeprint.Errorf(storeprint.EINVALID, "cluster.peers[%d]: %q is not id=host:port", i, p)
		}
		if !storeprint.ValidID(id) {
			return nil, storeprint.Errorf(storeprint.EINVALID, "cluster.peers[%d]: node id %q must be 1-64 characters of letters, digits, '-', '_' or '.'", i, id)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, storeprint.Errorf(storeprint.EINVALID, "cluster.peers[%d]: %q is not a host:port address", i, addr)
		}
		if seen[id] {
			return nil, storeprint.Errorf(storeprint.EINVALID, "cluster.peers[%d]: node id %q is listed twice", i, id)
		}
		if addrs[addr] {
			return nil, storeprint.Errorf(storeprint.EINVALID, "cluster.peers[%d]: address %s is listed twice", i, addr)
		}
		seen[id], addrs[addr] = true, true
		out = append(out, Peer{ID: id, Address: addr})
	}
	return out, nil
}

// validate checks the section; an error names the key.
func (c *ClusterConfig) validate() error {
	if !storeprint.ValidID(c.NodeID) {
		return storeprint.Errorf(storeprint.EINVALID, "cluster.node_id: %q must be 1-64 characters of letters, digits, '-', '_' or '.'", c.NodeID)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return storeprint.Errorf(storeprint.EINVALID, "cluster.listen: %q is not a host:port address", c.Listen)
	}
	if len(c.Secret) < MinClusterSecret {
		return storeprint.Errorf(storeprint.EINVALID, "cluster.secret: at least %d characters are required (every node has the same one)", MinClusterSecret)
	}
	if len(c.Peers) < 3 {
		return storeprint.Errorf(storeprint.EINVALID, "cluster.peers: at least 3 nodes are required (two gateways and a witness), %d listed", len(c.Peers))
	}
	peers, err := c.ParsePeers()
	if err != nil {
		return err
	}
	for _, p := range peers {
		if p.ID == c.NodeID {
			return nil
		}
	}
	return storeprint.Errorf(storeprint.EINVALID, "cluster.node_id: %q is not one of cluster.peers", c.NodeID)
}

// Cluster roles, as GET /v1/cluster names them.
const (
	RoleLeader    = "leader"
	RoleFollower  = "follower"
	RoleCandidate = "candidate"
	RoleWitness   = "witness"
)

// Member states, as GET /v1/cluster names them.
const (
	MemberUp      = "up"      // heard from within the last few heartbeats
	MemberDown    = "down"    // not heard from: an alert
	MemberUnknown = "unknown" // this node has no word of it (a follower knows only its leader)
)

// ClusterState is a node's view of its cluster (GET /v1/cluster).
type ClusterState struct {
	NodeID  string          `json:"node_id"`
	Role    string          `json:"role"`
	Leader  string          `json:"leader"` // the leader's node id; empty when none is known
	Term    uint64          `json:"term"`
	Members []ClusterMember `json:"members"`
}

// ClusterMember is one node as seen from this one.
type ClusterMember struct {
	NodeID  string `json:"node_id"`
	Address string `json:"address"`
	State   string `json:"state"`
	// Role is the node's role as this one knows it: RoleWitness for the
	// witness (as the nodes state it to each other and the leader records
	// it for all), RoleLeader for the leader, this node's own role for
	// itself, else RoleFollower.
	Role string `json:"role"`
}

// LeaderFence is the final fence against the cluster: a replicated store
// implements it, and prepare asks it, before the prepared receipt and
// again right before a ticket's first byte, whether this node still
// leads, and will for as long as the send can take to start. nil: it
// leads; an error: it must print nothing.
type LeaderFence interface {
	CheckLeader(ctx context.Context) error
	// LeaderLease is how long after a CheckLeader call began that
	// returned nil no other node can lead: a first byte that would leave
	// later is not sent.
	LeaderLease() time.Duration
}

// EndStartupHold lets the dispatcher print the tickets carried over from
// before the start without waiting for the sync link (see learn.go). A
// cluster's new leader calls it: its store is the cluster's log, not a
// copy restored from an older backup, and its tickets must not wait on
// the cloud at a takeover.
func (g *Gateway) EndStartupHold() {
	if g.startup != nil {
		g.startup.release()
	}
}
