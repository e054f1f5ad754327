package main

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
)

// waitWitnessKnown waits until every running node of a test cluster
// names the witness "wit", and no other node, as the witness among its
// members in GET /v1/cluster, following the entries each node applies
// (a follower learns it from the log its leader writes).
func waitWitnessKnown(t *testing.T, nodes map[string]*clusterNode, not string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range nodes {
		if n.id == not {
			continue
		}
		for {
			var st gateway.ClusterState
			if code := gatewaytest.Call(t, "GET", n.base+"/v1/cluster", nil, &st); code != 200 {
				t.Fatalf("%s: GET /v1/cluster: %d", n.id, code)
			}
			ok := len(st.Members) == 3
			for _, m := range st.Members {
				ok = ok && (m.Role == gateway.RoleWitness) == (m.NodeID == "wit")
			}
			if ok {
				break
			}
			if err := n.m.Node.WaitApplied(ctx, n.m.Node.Applied()+1); err != nil {
				t.Fatalf("%s: GET /v1/cluster members %+v, want wit alone the witness", n.id, st.Members)
			}
		}
	}
}
