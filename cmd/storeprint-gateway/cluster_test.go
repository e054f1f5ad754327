package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/deploy"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// clusterAddr returns a free address for a node's cluster traffic, on a
// port below the range the system hands out for ":0", so that no
// gateway's own listener takes it before the node starts.
func clusterAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(10000))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("no free port for the cluster")
	return ""
}

// clusterNode is one node of a test cluster run in this process.
type clusterNode struct {
	id   string
	m    *Main
	base string
	stop func()
}

// startCluster runs two gateways and a witness on one store, all
// printing on hot.
func startCluster(t testing.TB, hot *gatewaytest.Sim) map[string]*clusterNode {
	t.Helper()
	ids := []string{"gw-a", "gw-b", "wit"}
	addrs := map[string]string{}
	for _, id := range ids {
		addrs[id] = clusterAddr(t)
	}
	peers := ""
	for _, id := range ids {
		peers += fmt.Sprintf("%q, ", id+"="+addrs[id])
	}
	nodes := map[string]*clusterNode{}
	for _, id := range ids {
		top := fmt.Sprintf("\n[cluster]\nnode_id = %q\nlisten = %q\npeers = [%s]\nsecret = \"a-secret-of-the-store-cluster\"\nwitness = %v\n",
			id, addrs[id], peers, id == "wit")
		printers, stations := []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr, OnUncertain: "hold"}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "hot-1"}}
		if id == "wit" {
			printers, stations = nil, nil // a witness needs none
		}
		cfg := writeConfig(t, gatewaytest.ConfigTop(t, t.TempDir(), top, printers, stations))
		m, stop := startGateway(t, cfg)
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

// TestMain_Cluster: a POS posts to a follower and the leader prints;
// the leader stops and the other gateway takes over with nothing lost;
// the witness takes no orders.
func TestMain_Cluster(t *testing.T) {
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	nodes := startCluster(t, hot)
	leader := waitLeader(t, nodes, "", 30*time.Second)
	var follower *clusterNode
	for _, id := range []string{"gw-a", "gw-b"} {
		if id != leader.id {
			follower = nodes[id]
		}
	}

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
	leader := waitLeader(b, nodes, "", 30*time.Second)
	follower := nodes["gw-a"]
	if leader.id == "gw-a" {
		follower = nodes["gw-b"]
	}
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
