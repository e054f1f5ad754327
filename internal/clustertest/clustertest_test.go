package clustertest_test

import (
	"testing"

	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/internal/clustertest"
	_ "github.com/storeprint/storeprint/printerdrivers/tcp" // the gateways' printer
)

// Each node's section makes a configuration the gateway takes (a
// gateway's with a printer): every node a member at its own address,
// only the witness a witness.
func TestSections(t *testing.T) {
	t.Parallel()
	sections := clustertest.Sections(t)
	listens := map[string]bool{}
	for _, id := range clustertest.Nodes {
		text := "store_id = \"s1\"\napi_tokens = [\"test-token-123\"]\n" + sections[id]
		if id != clustertest.Witness {
			text += "\n[[printers]]\nid = \"hot-1\"\ndriver = \"tcp\"\naddress = \"127.0.0.1:9100\"\n\n[[stations]]\nname = \"hot\"\nprinter = \"hot-1\"\n"
		}
		c, err := toml.Parse(text)
		if err != nil {
			t.Fatalf("%s: %v\n%s", id, err, text)
		}
		if c.Cluster.NodeID != id || len(c.Cluster.Peers) != len(clustertest.Nodes) || c.Cluster.Witness != (id == clustertest.Witness) {
			t.Errorf("%s: got %+v, want node %s of %d, witness only for %s", id, c.Cluster, id, len(clustertest.Nodes), clustertest.Witness)
		}
		listens[c.Cluster.Listen] = true
	}
	if len(listens) != len(clustertest.Nodes) {
		t.Errorf("got %d addresses for %d nodes, want one each", len(listens), len(clustertest.Nodes))
	}
}
