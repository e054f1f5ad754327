package cloudtest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// CreateGateway implements cloud.GatewayService for any caller, creating
// the store on its first gateway.
func (c *Cloud) CreateGateway(ctx context.Context, storeID string, note cloud.Note) (*cloud.Gateway, string, error) {
	if err := storeprint.CheckID("store_id", storeID); err != nil {
		return nil, "", err
	}
	if err := note.Validate(); err != nil {
		return nil, "", err
	}
	token := cloud.NewGatewayToken(storeID)
	g := &gateway{Gateway: cloud.Gateway{ID: "gw-" + cloud.RandomID(8), StoreID: storeID, CreatedAt: time.Now()},
		tokenHash: string(cloud.HashToken(token)), incarnations: map[string]*incarnation{}}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(storeID)
	c.gateways[g.ID] = g
	c.signal()
	gw := g.Gateway
	if g.Cluster != nil {
		cl := *g.Cluster
		cl.Members = slices.Clone(cl.Members)
		gw.Cluster = &cl
	}
	return &gw, token, nil
}

// RevokeGateway implements cloud.GatewayService.
func (c *Cloud) RevokeGateway(ctx context.Context, gatewayID string, note cloud.Note) (*cloud.Gateway, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gateways[gatewayID]
	if g == nil {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "gateway %q not found", gatewayID)
	}
	if g.RevokedAt == nil {
		now := time.Now()
		g.RevokedAt, g.Online = &now, false
		c.notify(cloud.RevokedChannel, gatewayID)
		c.signal()
	}
	gw := g.Gateway
	return &gw, nil
}

// Authenticate implements cloud.GatewayService.
func (c *Cloud) Authenticate(ctx context.Context, gatewayID, token string) (*cloud.Gateway, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gateways[gatewayID]
	if g == nil || g.tokenHash != string(cloud.HashToken(token)) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid gateway credentials")
	}
	if g.RevokedAt != nil {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q is revoked", gatewayID)
	}
	gw := g.Gateway
	return &gw, nil
}

// IsRevoked implements cloud.GatewayService.
func (c *Cloud) IsRevoked(ctx context.Context, storeID, gatewayID string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.live(storeID, gatewayID)
	return err != nil, nil
}

// live returns a gateway of the store that is not revoked; c.mu is held.
func (c *Cloud) live(storeID, gatewayID string) (*gateway, error) {
	g := c.gateways[gatewayID]
	if g == nil || g.StoreID != storeID || g.RevokedAt != nil {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q is unknown or revoked", gatewayID, storeID)
	}
	return g, nil
}

// Touch implements cloud.GatewayService: only the link that set a
// gateway online takes it offline.
func (c *Cloud) Touch(ctx context.Context, storeID, gatewayID string, p cloud.Presence) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.live(storeID, gatewayID)
	if err != nil {
		if p.Online {
			return err
		}
		return nil
	}
	now := time.Now()
	g.LastSeen = &now
	switch {
	case p.Online:
		g.Online, g.linkID, g.Version = true, p.LinkID, cmpOr(p.Version, g.Version)
		g.links++
	case g.linkID == p.LinkID:
		g.Online = false
	}
	c.signal()
	return nil
}

// Connect implements cloud.GatewayService as the postgres one does, with
// the replacements kept in memory (takeovers in the store's cluster
// aside).
func (c *Cloud) Connect(ctx context.Context, storeID, gatewayID string, p cloud.Presence) (cloud.LinkStart, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st cloud.LinkStart
	g, err := c.live(storeID, gatewayID)
	if err != nil {
		return st, err
	}
	now := time.Now()
	if g.Online && g.linkID != "" && g.linkID != p.LinkID {
		st.Replaced, st.ReplacedAddr = g.linkID, g.linkAddr
		if !cloud.Takeover(g.Cluster, g.linkHolder, p.Holder) {
			if g.replacedFrom == nil {
				g.replacedFrom = map[string]bool{}
			}
			g.replacements = append(g.replacements, now)
			g.replacedFrom[g.linkAddr], g.replacedFrom[p.Addr] = true, true
		}
		c.notify(cloud.ReplacedChannel, g.linkID)
	}
	st.Shared = g.shared(now)
	g.LastSeen = &now
	g.Online, g.linkID, g.linkAddr, g.linkHolder, g.Version = true, p.LinkID, p.Addr, p.Holder, cmpOr(p.Version, g.Version)
	g.links++
	c.signal()
	return st, nil
}

// CurrentLink implements cloud.GatewayService.
func (c *Cloud) CurrentLink(ctx context.Context, storeID, gatewayID string) (cloud.CurrentLink, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gateways[gatewayID]
	if g == nil || g.StoreID != storeID {
		return cloud.CurrentLink{}, nil
	}
	return cloud.CurrentLink{LinkID: g.linkID, Addr: g.linkAddr, Shared: g.shared(time.Now())}, nil
}

// shared reports whether the gateway's links replaced each other from two
// addresses more than cloud.SharedReplacements times within
// cloud.SharedWindow; c.mu is held.
func (g *gateway) shared(now time.Time) bool {
	g.replacements = slices.DeleteFunc(g.replacements, func(at time.Time) bool { return now.Sub(at) > cloud.SharedWindow })
	return len(g.replacements) > cloud.SharedReplacements && len(g.replacedFrom) >= 2
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Seen implements cloud.GatewayService.
func (c *Cloud) Seen(ctx context.Context, links []cloud.LinkSeen) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range links {
		if g, err := c.live(l.StoreID, l.GatewayID); err == nil && g.Online && g.linkID == l.LinkID {
			at := time.Now().Add(-l.Age)
			g.LastSeen = &at
		}
	}
	return nil
}

// UpdatePrinters implements cloud.GatewayService.
func (c *Cloud) UpdatePrinters(ctx context.Context, storeID, gatewayID string, printers []*cloud.Printer) error {
	for _, p := range printers {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.live(storeID, gatewayID); err != nil {
		return err
	}
	s := c.store(storeID)
	for _, p := range printers {
		cp := *p
		cp.Stations = slices.Clone(p.Stations)
		s.printers[p.ID] = &cp
	}
	s.reports++
	c.signal()
	return nil
}

// UpdateCluster implements cloud.GatewayService: the cluster is kept on
// the gateway (Gateway returns it); alerts are not kept here.
func (c *Cloud) UpdateCluster(ctx context.Context, storeID, gatewayID string, cl *cloud.Cluster) error {
	if err := cl.Validate(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.live(storeID, gatewayID)
	if err != nil {
		return err
	}
	cp := *cl
	cp.Members = slices.Clone(cl.Members)
	g.Cluster = &cp
	c.signal()
	return nil
}

// Gateway returns the gateway as the cloud knows it (online, version,
// revoked), or nil.
func (c *Cloud) Gateway(gatewayID string) *cloud.Gateway {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gateways[gatewayID]
	if g == nil {
		return nil
	}
	gw := g.Gateway
	return &gw
}

// LinkHolder returns what the gateway's live link said of itself in its
// hello (its cluster node, term and incarnation).
func (c *Cloud) LinkHolder(gatewayID string) cloud.LinkHolder {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.gateways[gatewayID]; g != nil {
		return g.linkHolder
	}
	return cloud.LinkHolder{}
}

// Links returns how many links of the gateway came up.
func (c *Cloud) Links(gatewayID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.gateways[gatewayID]; g != nil {
		return g.links
	}
	return 0
}

// Printers returns the store's printers as last reported, in id order.
func (c *Cloud) Printers(storeID string) []cloud.Printer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []cloud.Printer
	for _, p := range c.store(storeID).printers {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b cloud.Printer) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// PrinterReports returns how many status reports the store's gateways
// sent.
func (c *Cloud) PrinterReports(storeID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.store(storeID).reports
}
