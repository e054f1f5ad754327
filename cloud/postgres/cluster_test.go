package postgres

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// A store on a cluster: its leading gateway reports each node's role and
// state; the store view shows them, a member down opens an alert of kind
// cluster_node_down, and its coming back resolves it.
func TestGatewayService_UpdateCluster(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	gw, _ := f.mustStore(t, "acme", "a1")
	report := func(t *testing.T, b string) {
		t.Helper()
		if err := f.gateways.UpdateCluster(ctx, "a1", gw.ID, &cloud.Cluster{NodeID: "gw-a", Role: "leader", Leader: "gw-a", Term: 3,
			Members: []cloud.ClusterMember{{NodeID: "gw-a", State: "up", Role: "leader"}, {NodeID: "gw-b", State: b, Role: "follower"},
				{NodeID: "wit", State: "up", Role: "witness"}}}); err != nil {
			t.Fatal(err)
		}
	}
	alerts := func(t *testing.T) (open []*cloud.Alert, all []*cloud.Alert) {
		t.Helper()
		als, err := f.stores.FindAlerts(adminCtx, "a1", cloud.AlertFilter{History: true, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, al := range als {
			if al.Kind != cloud.AlertClusterNodeDown {
				continue
			}
			all = append(all, al)
			if al.ResolvedAt == nil {
				open = append(open, al)
			}
		}
		return open, all
	}

	t.Run("Up", func(t *testing.T) {
		report(t, "up")
		got, _, err := f.stores.FindStores(adminCtx, cloud.StoreFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(got[0].Gateways) != 1 || got[0].Gateways[0].Cluster == nil {
			t.Fatalf("got %+v, want store a1 with its gateway's cluster", got)
		}
		c := got[0].Gateways[0].Cluster
		if c.NodeID != "gw-a" || c.Role != "leader" || c.Leader != "gw-a" || c.Term != 3 || len(c.Members) != 3 ||
			c.Members[1] != (cloud.ClusterMember{NodeID: "gw-b", State: "up", Role: "follower"}) ||
			c.Members[2] != (cloud.ClusterMember{NodeID: "wit", State: "up", Role: "witness"}) {
			t.Fatalf("got cluster %+v, want gw-a leading term 3 with 3 members up, wit the witness", c)
		}
		if open, _ := alerts(t); len(open) != 0 {
			t.Fatalf("got open alerts %+v, want none while every node is up", open)
		}
	})
	t.Run("Down", func(t *testing.T) {
		report(t, "down")
		report(t, "down") // reported again: still one alert
		open, all := alerts(t)
		if len(open) != 1 || len(all) != 1 || open[0].ID != "cluster_node_down:gw-b" || open[0].State != cloud.AlertOpen {
			t.Fatalf("got alerts %+v, want one open on gw-b", all)
		}
		if n := f.count(t, `SELECT count(*) FROM gateways WHERE store_id = 'a1' AND cluster #>> '{members,1,state}' = 'down'`); n != 1 {
			t.Fatalf("got %d gateways with gw-b down, want 1", n)
		}
	})
	t.Run("Back", func(t *testing.T) {
		report(t, "up")
		open, all := alerts(t)
		if len(open) != 0 || len(all) != 1 || all[0].State != cloud.AlertResolved {
			t.Fatalf("got alerts %+v, want the one on gw-b resolved", all)
		}
	})
	t.Run("DownAgain", func(t *testing.T) {
		report(t, "down")
		if open, _ := alerts(t); len(open) != 1 {
			t.Fatalf("got open alerts %+v, want the one on gw-b open again", open)
		}
		report(t, "up")
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []*cloud.Cluster{
			{NodeID: "gw-a", Role: "boss"},
			{NodeID: "", Role: "leader"},
			{NodeID: "gw-a", Role: "leader", Members: []cloud.ClusterMember{{NodeID: "gw-b", State: "gone"}}},
			{NodeID: "gw-a", Role: "leader", Members: []cloud.ClusterMember{{NodeID: "gw-b", State: "up"}, {NodeID: "gw-b", State: "up"}}},
			{NodeID: "gw-a", Role: "leader", Members: []cloud.ClusterMember{{NodeID: "wit", State: "up", Role: "voter"}}},
		} {
			wantCode(t, f.gateways.UpdateCluster(ctx, "a1", gw.ID, c), storeprint.EINVALID)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		wantCode(t, f.gateways.UpdateCluster(ctx, "a1", "nobody", &cloud.Cluster{NodeID: "gw-a", Role: "leader"}), storeprint.EUNAUTHORIZED)
	})
}
