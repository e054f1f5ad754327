package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/deploy"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/clustertest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// clusterNode is one node of a test cluster run in this process.
type clusterNode struct {
	id   string
	m    *Main
	base string
	stop func()
}

// writeClusterConfigs writes the configuration of each node of a
// cluster (clustertest.Nodes) on one store, the gateways printing the
// stations on hot, and returns their paths by node id.
func writeClusterConfigs(t testing.TB, hot *gatewaytest.Sim, stations ...string) map[string]string {
	t.Helper()
	cfgs, _ := writeClusterConfigsDirs(t, hot, stations...)
	return cfgs
}

// writeClusterConfigsDirs is writeClusterConfigs that also returns each
// node's data_dir, by node id.
func writeClusterConfigsDirs(t testing.TB, hot *gatewaytest.Sim, stations ...string) (cfgs, dirs map[string]string) {
	t.Helper()
	cfgs, dirs = map[string]string{}, map[string]string{}
	for id, section := range clustertest.Sections(t) {
		var printers []gatewaytest.PrinterConf
		var sts []gatewaytest.StationConf
		if id != clustertest.Witness { // a witness needs none
			printers = []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr, OnUncertain: "hold"}}
			for _, s := range stations {
				sts = append(sts, gatewaytest.StationConf{Name: s, Printer: "hot-1"})
			}
		}
		dirs[id] = t.TempDir()
		cfgs[id] = writeConfig(t, gatewaytest.ConfigTop(t, dirs[id], section, printers, sts))
	}
	return cfgs, dirs
}

// startCluster runs two gateways and a witness on one store, all
// printing on hot.
func startCluster(t testing.TB, hot *gatewaytest.Sim) map[string]*clusterNode {
	t.Helper()
	cfgs := writeClusterConfigs(t, hot, "hot", "cold")
	nodes := map[string]*clusterNode{}
	for _, id := range clustertest.Nodes {
		m, stop := startGateway(t, cfgs[id])
		n := &clusterNode{id: id, m: m, base: m.HTTP.URL(), stop: stop}
		stopped := false
		n.stop = func() {
			if !stopped {
				stopped = true
				stop()
			}
		}
		t.Cleanup(n.stop)
		nodes[id] = n
	}
	return nodes
}

// waitLeader waits until a gateway node other than not leads and every node
// still running knows it.
func waitLeader(t testing.TB, nodes map[string]*clusterNode, not string, timeout time.Duration) *clusterNode {
	t.Helper()
	deadline := time.After(timeout)
	for {
		var changed []<-chan struct{}
		leader, agreed := "", true
		for _, n := range nodes {
			if n.id == not {
				continue
			}
			changed = append(changed, n.m.Node.LeaderChanged())
			st := n.m.Node.State()
			if leader == "" {
				leader = st.Leader
			}
			agreed = agreed && st.Leader != "" && st.Leader == leader
		}
		if agreed && leader != not && !nodes[leader].m.Node.Witness() && nodes[leader].m.Node.IsLeader() {
			return nodes[leader]
		}
		any := make(chan struct{}, len(changed))
		done := make(chan struct{})
		for _, c := range changed {
			go func() {
				select {
				case <-c:
					any <- struct{}{}
				case <-done:
				}
			}()
		}
		select {
		case <-any:
			close(done)
		case <-deadline:
			close(done)
			t.Fatalf("no leader within %s", timeout)
		}
	}
}

// leaderAndFollower waits until a gateway node leads (waitLeader) and
// returns it and the other gateway.
func leaderAndFollower(t testing.TB, nodes map[string]*clusterNode) (leader, follower *clusterNode) {
	t.Helper()
	leader = waitLeader(t, nodes, "", 30*time.Second)
	follower = nodes["gw-a"]
	if leader.id == "gw-a" {
		follower = nodes["gw-b"]
	}
	return leader, follower
}

// TestMain_Cluster: a POS posts to a follower and the leader prints;
// the leader stops and the other gateway takes over with nothing lost;
// the witness takes no orders.
func TestMain_Cluster(t *testing.T) {
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	nodes := startCluster(t, hot)
	leader, follower := leaderAndFollower(t, nodes)

	t.Run("Cluster", func(t *testing.T) {
		waitWitnessKnown(t, nodes, "")
		for _, n := range nodes {
			var st gateway.ClusterState
			if code := gatewaytest.Call(t, "GET", n.base+"/v1/cluster", nil, &st); code != 200 {
				t.Fatalf("%s: GET /v1/cluster: %d", n.id, code)
			}
			want := "follower"
			switch n.id {
			case leader.id:
				want = "leader"
			case "wit":
				want = "witness"
			}
			if st.NodeID != n.id || st.Role != want || st.Leader != leader.id || st.Term == 0 || len(st.Members) != 3 {
				t.Errorf("%s: got %+v, want role %s, leader %s, 3 members", n.id, st, want, leader.id)
			}
		}
	})
	t.Run("FollowerPassesOn", func(t *testing.T) {
		var res gatewaytest.OrderJSON
		if code := gatewaytest.Call(t, "POST", follower.base+"/v1/orders", gatewaytest.Order("c1", "hot"), &res); code != 201 {
			t.Fatalf("POST to the follower: got %d, want 201", code)
		}
		gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
		if code := gatewaytest.Call(t, "POST", follower.base+"/v1/orders", gatewaytest.Order("c1", "hot"), &res); code != 200 {
			t.Errorf("replay to the follower: got %d, want 200", code)
		}
	})
	t.Run("Metrics", func(t *testing.T) {
		text := metricsText(t, leader.base)
		if got := metricValue(t, text, "storeprint_cluster_leader"); got != 1 {
			t.Errorf("storeprint_cluster_leader on the leader: got %v, want 1", got)
		}
		for _, id := range []string{"gw-a", "gw-b", "wit"} {
			if want := `storeprint_cluster_member{node_id="` + id + `",state="up"} 1`; !strings.Contains(text, want) {
				t.Errorf("the leader's metrics lack %s", want)
			}
			role := map[bool]string{true: "follower", false: "witness"}[id != "wit"]
			if id == leader.id {
				role = "leader"
			}
			if want := `storeprint_cluster_member_role{node_id="` + id + `",role="` + role + `"} 1`; !strings.Contains(text, want) {
				t.Errorf("the leader's metrics lack %s", want)
			}
		}
		uses, err := deploy.Uses()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range uses[deploy.Gateway] {
			if strings.HasPrefix(n, "storeprint_cluster_") && !strings.Contains(text, "\n"+n) {
				t.Errorf("deploy/ reads %s from the gateway, which does not serve it on a cluster", n)
			}
		}
	})
	t.Run("WitnessTakesNoOrders", func(t *testing.T) {
		var e map[string]string
		if code := gatewaytest.Call(t, "POST", nodes["wit"].base+"/v1/orders", gatewaytest.Order("c2", "hot"), &e); code != 503 || e["error"] == "" {
			t.Errorf("POST to the witness: got %d %v, want 503 with the reason", code, e)
		}
	})

	// The leader stops; the POS posts to the other gateway until it takes
	// the order.
	stopped := time.Now()
	leader.stop()
	var res gatewaytest.OrderJSON
	for code := 0; code != 201; {
		code = gatewaytest.Call(t, "POST", follower.base+"/v1/orders", gatewaytest.Order("c3", "hot"), &res)
		if code != 201 && code != 503 {
			t.Fatalf("POST during the takeover: got %d, want 201 or 503", code)
		}
		if time.Since(stopped) > 30*time.Second {
			t.Fatal("no gateway took the order within 30s of the leader's loss")
		}
	}
	accepted := time.Since(stopped)
	got := gatewaytest.WaitPrinted(t, hot, 2, 10*time.Second)
	t.Logf("takeover: order accepted %s and on paper %s after the leader stopped", accepted, got[1].At.Sub(stopped))
	if n := gatewaytest.CountPaper(got, "order_c1_station_hot"); n != 1 {
		t.Errorf("c1 on paper %d times, want 1", n)
	}
	if tj := gatewaytest.GetTask(t, follower.base, "order_c1_station_hot"); tj.Status != "done" {
		t.Errorf("c1 on the new leader: %s, want done", tj.Status)
	}
	// The new leader and the witness still name the witness.
	waitWitnessKnown(t, nodes, leader.id)
}

// BenchmarkClusterAccept measures POS-to-201 on a cluster of two
// gateways and a witness in this process, posted to the leader and to
// the follower (which passes each order on): each 201 waits for the
// order's entry on a majority. Compare with BenchmarkAcceptOrders (one
// gateway); go test -cpuprofile profiles the replicated write path.
func BenchmarkClusterAccept(b *testing.B) {
	hot := gatewaytest.StartSim(b, printersim.FaultNone)
	nodes := startCluster(b, hot)
	leader, follower := leaderAndFollower(b, nodes)
	for _, to := range []*clusterNode{leader, follower} {
		name := "leader"
		if to == follower {
			name = "follower"
		}
		b.Run(name, func(b *testing.B) {
			r := postLoad(b, to.base, fmt.Sprintf("%s%d", name, time.Now().UnixNano()), 0, b.N)
			b.ReportMetric(r.rate(), "orders/s")
			b.ReportMetric(ms(r.p50), "p50-ms")
			b.ReportMetric(ms(r.p99), "p99-ms")
		})
	}
}
