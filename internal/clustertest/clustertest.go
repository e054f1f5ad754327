package clustertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
)

// Nodes are the ids of a test cluster's nodes: the two gateways, then the
// witness.
var Nodes = []string{"gw-a", "gw-b", Witness}

// Witness is the id of the node that only votes.
const Witness = "wit"

// Addr returns a free address for a node's cluster traffic, on a port
// below the range the system hands out for ":0", so that no gateway's own
// listener takes it before the node starts.
func Addr(t testing.TB) string {
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

// Sections returns the [cluster] section (TOML, with the lines before it
// ending) of each node of Nodes, by id: its own address and every node's,
// the store cluster's secret, and whether it is the witness.
func Sections(t testing.TB) map[string]string {
	t.Helper()
	addrs := map[string]string{}
	var peers []string
	for _, id := range Nodes {
		addrs[id] = Addr(t)
		peers = append(peers, fmt.Sprintf("%q", id+"="+addrs[id]))
	}
	sections := map[string]string{}
	for _, id := range Nodes {
		sections[id] = fmt.Sprintf("\n[cluster]\nnode_id = %q\nlisten = %q\npeers = [%s]\nsecret = \"a-secret-of-the-store-cluster\"\nwitness = %v\n",
			id, addrs[id], strings.Join(peers, ", "), id == Witness)
	}
	return sections
}
