package cloud

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
)

// Presence timing. A sync node keeps when it last heard from each of its
// links in memory and writes it for all of them at once every
// PresenceEvery, so 10,000 links cost about 333 row writes a second, not
// one a ping. A gateway counts as online while its link is open (set on
// connect, cleared on disconnect) and written within OnlineWindow, so the
// links of a node that died stop counting within OnlineWindow.
const (
	PresenceEvery = 30 * time.Second
	OnlineWindow  = 60 * time.Second
)

// Gateway is one gateway credential of a store.
type Gateway struct {
	ID        string     `json:"gateway_id"`
	StoreID   string     `json:"store_id"`
	TenantID  string     `json:"tenant_id"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	Online    bool       `json:"online"`
	LastSeen  *time.Time `json:"last_seen"`
	Version   string     `json:"version"`
	// Cluster is the store's cluster as this gateway last reported it
	// while it led (nil when it runs alone or never reported one).
	Cluster *Cluster `json:"cluster,omitempty"`
}

// Cluster is a store's cluster of gateway nodes, as its leader reports it.
type Cluster struct {
	NodeID  string          `json:"node_id"` // the node that reported it
	Role    string          `json:"role"`    // leader, follower, candidate or witness
	Leader  string          `json:"leader"`  // the leader's node id, empty when none is known
	Term    uint64          `json:"term"`
	Members []ClusterMember `json:"members"`
}

// ClusterMember is one node of a store's cluster.
type ClusterMember struct {
	NodeID string `json:"node_id"`
	State  string `json:"state"` // ClusterMemberUp, ClusterMemberDown or ClusterMemberUnknown
	// Role is the node's role as the reporting node knows it: leader,
	// follower, candidate or witness; empty from a gateway that does not
	// report it.
	Role string `json:"role,omitempty"`
}

// Cluster member states, as the gateway's GET /v1/cluster names them. A
// member down (not heard from, or cut off) opens an alert of kind
// AlertClusterNodeDown for the store, resolved when it is back up.
const (
	ClusterMemberUp      = "up"
	ClusterMemberDown    = "down"
	ClusterMemberUnknown = "unknown"
	AlertClusterNodeDown = "cluster_node_down"
)

// Validate checks a cluster report.
func (c *Cluster) Validate() error {
	if err := validID("cluster node", c.NodeID); err != nil {
		return err
	}
	if !clusterRole(c.Role) {
		return storeprint.Errorf(storeprint.EINVALID, "cluster: unknown role %q", c.Role)
	}
	if c.Leader != "" {
		if err := validID("cluster leader", c.Leader); err != nil {
			return err
		}
	}
	if len(c.Members) > 64 {
		return storeprint.Errorf(storeprint.EINVALID, "cluster: %d members, at most 64", len(c.Members))
	}
	seen := make(map[string]bool, len(c.Members))
	for _, m := range c.Members {
		if err := validID("cluster node", m.NodeID); err != nil {
			return err
		}
		if seen[m.NodeID] {
			return storeprint.Errorf(storeprint.EINVALID, "cluster: member %q twice", m.NodeID)
		}
		seen[m.NodeID] = true
		switch m.State {
		case ClusterMemberUp, ClusterMemberDown, ClusterMemberUnknown:
		default:
			return storeprint.Errorf(storeprint.EINVALID, "cluster member %q: unknown state %q", m.NodeID, m.State)
		}
		if m.Role != "" && !clusterRole(m.Role) {
			return storeprint.Errorf(storeprint.EINVALID, "cluster member %q: unknown role %q", m.NodeID, m.Role)
		}
	}
	return nil
}

// clusterRole reports whether role is one of a cluster node's roles.
func clusterRole(role string) bool {
	switch role {
	case "leader", "follower", "candidate", "witness":
		return true
	}
	return false
}

// Presence is what the sync server reports about a gateway's link.
type Presence struct {
	LinkID  string // unique per connection: a late disconnect of an old link changes nothing
	Online  bool   // true on connect, false on disconnect
	Version string // the gateway's software version, when known
	Addr    string // the peer's address (host:port) as the sync node sees it, on connect
	Holder  LinkHolder
}

// LinkHolder is what a link says of where it comes from in its hello: on
// a store's cluster, the node (empty for a gateway alone) and the term in
// which that node leads; and the store's incarnation.
type LinkHolder struct {
	Node        string
	Term        uint64
	Incarnation string
}

// Takeover reports whether the credential's live link, held by old,
// replaced by a link held by new, is a takeover within the store's
// cluster c (as its leader last reported it, nil when none did) rather
// than a sign of two boxes sharing the credential: both links come from
// members of c, with the store's one incarnation, and the new link's
// node leads in a later term than the old one's. A takeover does not
// count towards AlertCredentialShared. Two boxes that hold the link in
// turn cannot each lead in a term later than the other's: at least every
// other replacement between them counts, and a node deposed and back
// with its old term counts.
func Takeover(c *Cluster, old, new LinkHolder) bool {
	if c == nil || old.Node == "" || new.Node == "" || new.Incarnation == "" ||
		new.Incarnation != old.Incarnation || new.Term <= old.Term {
		return false
	}
	var oldIn, newIn bool
	for _, m := range c.Members {
		oldIn = oldIn || m.NodeID == old.Node
		newIn = newIn || m.NodeID == new.Node
	}
	return oldIn && newIn
}

// One live link per gateway credential: a link that comes up replaces the
// credential's live link, which is closed. Links of one credential that
// replace each other from two addresses more than SharedReplacements
// times within SharedWindow mean two boxes hold the credential: the cloud
// raises an alert of kind AlertCredentialShared for the store and says so
// to the gateways on their links. A store cluster's takeover (see
// Takeover) moves the link to another node and does not count.
const (
	SharedReplacements    = 3
	SharedWindow          = 10 * time.Minute
	AlertCredentialShared = "gateway_credential_shared"
)

// LinkStart is what recording a link's connect found.
type LinkStart struct {
	// Replaced is the link id of the credential's live link this one
	// replaces (empty when none), and ReplacedAddr its peer's address.
	Replaced, ReplacedAddr string
	// Shared reports that the credential's links replaced each other from
	// two addresses more than SharedReplacements times within
	// SharedWindow: the AlertCredentialShared alert is open.
	Shared bool
}

// LinkSeen is when a node last heard from an open link, as an age, so
// that the database's clock places it and the node's clock does not
// matter.
type LinkSeen struct {
	StoreID, GatewayID, LinkID string
	Age                        time.Duration
}

// CurrentLink is a gateway credential's live link.
type CurrentLink struct {
	LinkID string
	Addr   string // its peer's address
	Shared bool   // as LinkStart.Shared, now
}

// GatewayService manages gateway credentials and the state of their links.
type GatewayService interface {
	// CreateGateway issues a new gateway credential for a store (admin
	// only). The token is returned once; only its hash is kept.
	CreateGateway(ctx context.Context, storeID string, note Note) (gw *Gateway, token string, err error)

	// RevokeGateway revokes a gateway at once (admin only): Authenticate,
	// IsRevoked, Touch and Ingest refuse it from the commit on, and a
	// notification on RevokedChannel tells every sync node to cut its link.
	// Revoking a revoked gateway changes nothing.
	RevokeGateway(ctx context.Context, gatewayID string, note Note) (*Gateway, error)

	// Authenticate checks a gateway's credential for the sync link and
	// returns the gateway, or EUNAUTHORIZED (unknown, wrong or revoked).
	Authenticate(ctx context.Context, gatewayID, token string) (*Gateway, error)

	// IsRevoked is the cheap check a sync node makes on an open link.
	IsRevoked(ctx context.Context, storeID, gatewayID string) (bool, error)

	// Touch records a link's connect or disconnect.
	Touch(ctx context.Context, storeID, gatewayID string, p Presence) error

	// Connect records a link's connect (p.Online is implied) as Touch does,
	// and its replacing the credential's live link, if there was one: the
	// replaced link is told on ReplacedChannel (payload: its link id), and
	// replacements from two addresses more than SharedReplacements times
	// within SharedWindow raise an AlertCredentialShared alert.
	Connect(ctx context.Context, storeID, gatewayID string, p Presence) (LinkStart, error)

	// CurrentLink returns the gateway's live link (an empty LinkID when
	// none is recorded): a link whose id is not the current one was
	// replaced.
	CurrentLink(ctx context.Context, storeID, gatewayID string) (CurrentLink, error)

	// Seen records in one write when a node last heard from each of its
	// open links. A link that is no longer its gateway's (replaced by a
	// newer one, or disconnected) changes nothing.
	Seen(ctx context.Context, links []LinkSeen) error

	// UpdatePrinters records the printers a gateway reports for its store.
	UpdatePrinters(ctx context.Context, storeID, gatewayID string, printers []*Printer) error

	// UpdateCluster records the store's cluster as its leading gateway
	// reports it: an alert of kind AlertClusterNodeDown is open for each
	// member down, and resolved once the member is reported back.
	UpdateCluster(ctx context.Context, storeID, gatewayID string, c *Cluster) error
}

// Channels of PostgreSQL notifications a sync node may LISTEN on.
const (
	RevokedChannel    = "storeprint_gateway_revoked" // payload: gateway_id
	DownstreamChannel = "storeprint_downstream"      // payload: store_id
	ReplacedChannel   = "storeprint_link_replaced"   // payload: the replaced link's id
)
