package client

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/storeprint/storeprint/sync"
)

// statusReport is what a session last told the cloud of the printers.
type statusReport struct {
	dirty bool          // the printers may have changed: read them before waiting
	sent  bool          // a report went out on this session
	key   string        // what it said (statusKey)
	at    time.Duration // when, on the clock's monotonic reading
}

// due reports whether the last report is older than statusEvery.
func (r statusReport) due(now time.Duration) bool {
	return !r.sent || now-r.at > statusEvery
}

// report sends the printers' state when it changed since the last
// report, or when that is older than statusEvery.
func (s *session) report(ctx context.Context) error {
	if !s.status.dirty {
		return nil
	}
	ps, err := s.c.Gateway.PrinterStatuses(ctx)
	if err != nil {
		return err
	}
	var cl *sync.ClusterStatus
	if s.c.Cluster != nil {
		cl = s.c.Cluster()
	}
	now := s.c.Clock.Mono()
	if key := statusKey(ps) + clusterKey(cl); key != s.status.key || s.status.due(now) {
		if err := writeFrame(s.conn, &sync.Frame{Type: sync.FrameStatus, Printers: ps, Cluster: cl}); err != nil {
			return err
		}
		s.status = statusReport{sent: true, key: key, at: now}
	}
	s.status.dirty = false
	return nil
}

// statusKey is what a status report says (states, failovers, trouble in
// words, stations), without its timestamps.
func statusKey(ps []sync.PrinterStatus) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s=%s/%t/%s/%s;", p.ID, p.Status, p.Failover, p.Word, strings.Join(p.Stations, ","))
	}
	return b.String()
}

// clusterKey is what a report says of the cluster: roles, leader, term
// and the members' states.
func clusterKey(c *sync.ClusterStatus) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s=%s/%s/%d;", c.NodeID, c.Role, c.Leader, c.Term)
	for _, m := range c.Members {
		fmt.Fprintf(&b, "%s=%s/%s;", m.NodeID, m.State, m.Role)
	}
	return b.String()
}
