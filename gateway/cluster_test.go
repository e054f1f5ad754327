package gateway_test

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func clusterConfig(cc *gateway.ClusterConfig) *gateway.Config {
	cfg := &gateway.Config{
		StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"}, Cluster: cc,
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9100"}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	cfg.SetDefaults()
	return cfg
}

func TestClusterConfig_Validate(t *testing.T) {
	t.Parallel()
	ok := func() *gateway.ClusterConfig {
		return &gateway.ClusterConfig{
			NodeID: "gw-a", Listen: "0.0.0.0:8091", Secret: "sixteen-chars-ok",
			Peers: []string{"gw-a=10.0.0.1:8091", "gw-b=10.0.0.2:8091", "wit=10.0.0.3:8091"},
		}
	}
	t.Run("OK", func(t *testing.T) {
		if err := clusterConfig(ok()).Validate(); err != nil {
			t.Fatal(err)
		}
		peers, err := ok().ParsePeers()
		if err != nil || len(peers) != 3 || peers[1] != (gateway.Peer{ID: "gw-b", Address: "10.0.0.2:8091"}) {
			t.Errorf("got %v %v", peers, err)
		}
	})
	t.Run("WitnessWithoutPrinters", func(t *testing.T) {
		cc := ok()
		cc.NodeID, cc.Witness = "wit", true
		cfg := clusterConfig(cc)
		cfg.Printers, cfg.Stations = nil, nil
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		cc.Witness = false
		if err := cfg.Validate(); storeprint.ErrorCode(err) != storeprint.EINVALID {
			t.Errorf("a gateway node without printers: got %v, want invalid", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for name, tc := range map[string]struct {
			change func(*gateway.ClusterConfig)
			key    string
		}{
			"NoNodeID":       {func(c *gateway.ClusterConfig) { c.NodeID = "" }, "cluster.node_id"},
			"NodeNotAPeer":   {func(c *gateway.ClusterConfig) { c.NodeID = "gw-z" }, "cluster.node_id"},
			"Listen":         {func(c *gateway.ClusterConfig) { c.Listen = "8091" }, "cluster.listen"},
			"ShortSecret":    {func(c *gateway.ClusterConfig) { c.Secret = "short" }, "cluster.secret"},
			"TwoPeers":       {func(c *gateway.ClusterConfig) { c.Peers = c.Peers[:2] }, "cluster.peers"},
			"PeerNoID":       {func(c *gateway.ClusterConfig) { c.Peers[2] = "10.0.0.3:8091" }, "cluster.peers[2]"},
			"PeerBadAddress": {func(c *gateway.ClusterConfig) { c.Peers[1] = "gw-b=10.0.0.2" }, "cluster.peers[1]"},
			"PeerTwice":      {func(c *gateway.ClusterConfig) { c.Peers[1] = "gw-a=10.0.0.2:8091" }, "cluster.peers[1]"},
			"AddressTwice":   {func(c *gateway.ClusterConfig) { c.Peers[2] = "wit=10.0.0.2:8091" }, "cluster.peers[2]"},
		} {
			cc := ok()
			tc.change(cc)
			err := clusterConfig(cc).Validate()
			if storeprint.ErrorCode(err) != storeprint.EINVALID || !strings.Contains(storeprint.ErrorMessage(err), tc.key+":") {
				t.Errorf("%s: got %v, want invalid naming %s", name, err, tc.key)
			}
		}
	})
}
