package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/storeprint/storeprint/cloud"
)

// A store on a cluster moves its sync link from node to node at each
// takeover: however many, they raise no gateway_credential_shared alert.
// Two boxes that hold the link in turn still do, alone or saying they are
// nodes of the store's cluster.
func TestGatewayService_ConnectTakeovers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	members := []cloud.ClusterMember{{NodeID: "gw-a", State: "up"}, {NodeID: "gw-b", State: "up"}, {NodeID: "wit", State: "up", Role: "witness"}}
	// store creates a store with its gateway, on a cluster when
	// clustered; connect connects a link of its credential from addr,
	// held by h, and says whether it found the credential shared.
	store := func(t *testing.T, id string, clustered bool) (connect func(addr string, h cloud.LinkHolder) bool, alerted func() bool) {
		t.Helper()
		gw, _ := f.mustStore(t, "tenant-"+id, id)
		if clustered {
			if err := f.gateways.UpdateCluster(ctx, id, gw.ID, &cloud.Cluster{NodeID: "gw-a", Role: "leader", Leader: "gw-a", Term: 2, Members: members}); err != nil {
				t.Fatal(err)
			}
		}
		links := 0
		connect = func(addr string, h cloud.LinkHolder) bool {
			t.Helper()
			links++
			st, err := f.gateways.Connect(ctx, id, gw.ID, cloud.Presence{LinkID: fmt.Sprintf("link-%d", links), Online: true, Addr: addr, Holder: h})
			if err != nil {
				t.Fatal(err)
			}
			if links > 1 && st.Replaced == "" {
				t.Fatalf("link %d replaced nothing", links)
			}
			cur, err := f.gateways.CurrentLink(ctx, id, gw.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cur.Shared != st.Shared {
				t.Fatalf("link %d: shared %v at connect, %v after", links, st.Shared, cur.Shared)
			}
			return st.Shared
		}
		alerted = func() bool {
			t.Helper()
			als, err := f.stores.FindAlerts(adminCtx, id, cloud.AlertFilter{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, al := range als {
				if al.Kind == cloud.AlertCredentialShared && al.ResolvedAt == nil {
					return true
				}
			}
			return false
		}
		return connect, alerted
	}
	node := func(i int) (string, string) { // the node leading in term i, and its address
		if i%2 == 0 {
			return "gw-a", fmt.Sprintf("192.168.1.10:%d", 40000+i)
		}
		return "gw-b", fmt.Sprintf("192.168.1.11:%d", 40000+i)
	}

	t.Run("Takeovers", func(t *testing.T) {
		connect, alerted := store(t, "c1", true)
		for term := 2; term < 2+3*cloud.SharedReplacements; term++ {
			id, addr := node(term)
			if connect(addr, cloud.LinkHolder{Node: id, Term: uint64(term), Incarnation: "inc-1"}) {
				t.Fatalf("takeover to %s in term %d: the credential is found shared", id, term)
			}
		}
		if alerted() {
			t.Fatal("takeovers raised a gateway_credential_shared alert")
		}
	})
	t.Run("TwoBoxes", func(t *testing.T) {
		connect, alerted := store(t, "c2", true)
		shared := false
		for i := range cloud.SharedReplacements + 2 {
			_, addr := node(i)
			shared = connect(addr, cloud.LinkHolder{Incarnation: fmt.Sprintf("inc-%d", i%2)})
		}
		if !shared || !alerted() {
			t.Fatalf("two boxes alone holding the link in turn: shared %v, alert %v, want both", shared, alerted())
		}
	})
	t.Run("TwoBoxesAsNodes", func(t *testing.T) {
		// Each says it is a node of the store's cluster, leading in its own
		// term: every other replacement goes back to an older term.
		connect, alerted := store(t, "c3", true)
		shared := false
		for i := range 2*cloud.SharedReplacements + 3 {
			id, addr := node(i)
			shared = connect(addr, cloud.LinkHolder{Node: id, Term: uint64(3 + i%2), Incarnation: "inc-1"})
		}
		if !shared || !alerted() {
			t.Fatalf("two boxes as nodes holding the link in turn: shared %v, alert %v, want both", shared, alerted())
		}
	})
	t.Run("NoClusterReported", func(t *testing.T) {
		connect, alerted := store(t, "c4", false)
		shared := false
		for term := 2; term < 2+cloud.SharedReplacements+2; term++ {
			id, addr := node(term)
			shared = connect(addr, cloud.LinkHolder{Node: id, Term: uint64(term), Incarnation: "inc-1"})
		}
		if !shared || !alerted() {
			t.Fatalf("nodes of a cluster the store never reported: shared %v, alert %v, want both", shared, alerted())
		}
	})
}
