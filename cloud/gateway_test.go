package cloud_test

import (
	"testing"

	"github.com/storeprint/storeprint/cloud"
)

// A replacement of a credential's link is a cluster's takeover only when
// both links come from members of the store's reported cluster, with its
// one incarnation, and the new one leads in a later term.
func TestTakeover(t *testing.T) {
	t.Parallel()
	cl := &cloud.Cluster{NodeID: "gw-a", Role: "leader", Leader: "gw-a", Term: 3,
		Members: []cloud.ClusterMember{{NodeID: "gw-a", State: "up"}, {NodeID: "gw-b", State: "up"}, {NodeID: "wit", State: "up"}}}
	a := cloud.LinkHolder{Node: "gw-a", Term: 3, Incarnation: "inc-1"}
	b := cloud.LinkHolder{Node: "gw-b", Term: 4, Incarnation: "inc-1"}
	for _, tc := range []struct {
		name     string
		c        *cloud.Cluster
		old, new cloud.LinkHolder
		want     bool
	}{
		{"OK", cl, a, b, true},
		{"BackWithALaterTerm", cl, b, cloud.LinkHolder{Node: "gw-a", Term: 5, Incarnation: "inc-1"}, true},
		{"ErrOldTerm", cl, b, a, false},
		{"ErrSameTerm", cl, a, cloud.LinkHolder{Node: "gw-b", Term: 3, Incarnation: "inc-1"}, false},
		{"ErrNoClusterReported", nil, a, b, false},
		{"ErrNotAMember", cl, a, cloud.LinkHolder{Node: "gw-x", Term: 4, Incarnation: "inc-1"}, false},
		{"ErrOldNotAMember", cl, cloud.LinkHolder{Node: "gw-x", Term: 3, Incarnation: "inc-1"}, b, false},
		{"ErrAlone", cl, cloud.LinkHolder{Incarnation: "inc-1"}, b, false},
		{"ErrToAlone", cl, a, cloud.LinkHolder{Incarnation: "inc-1"}, false},
		{"ErrOtherIncarnation", cl, a, cloud.LinkHolder{Node: "gw-b", Term: 4, Incarnation: "inc-2"}, false},
		{"ErrNoIncarnation", cl, cloud.LinkHolder{Node: "gw-a", Term: 3}, cloud.LinkHolder{Node: "gw-b", Term: 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cloud.Takeover(tc.c, tc.old, tc.new); got != tc.want {
				t.Errorf("Takeover(%+v, %+v): got %v, want %v", tc.old, tc.new, got, tc.want)
			}
		})
	}
}
