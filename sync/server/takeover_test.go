package server_test

import (
	"context"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// A store's cluster moves its link to another node at each takeover, the
// hello naming the node and the term it leads in: however many takeovers,
// the credential is not found shared. The old leader's link coming back
// with its old term counts as a box sharing it.
func TestServer_ClusterTakeovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, gw, open := setupGateway(t)
	if err := c.UpdateCluster(ctx, gw.StoreID, gw.ID, &cloud.Cluster{NodeID: "gw-a", Role: "leader", Leader: "gw-a", Term: 2,
		Members: []cloud.ClusterMember{{NodeID: "gw-a", State: "up"}, {NodeID: "gw-b", State: "up"}, {NodeID: "wit", State: "up"}}}); err != nil {
		t.Fatal(err)
	}
	hello := func(node string, term uint64) (*websocket.Conn, *sync.Frame) {
		t.Helper()
		return open(&sync.ClusterStatus{NodeID: node, Role: "leader", Leader: node, Term: term})
	}
	old, _ := hello("gw-a", 2)
	var term uint64
	for term = 3; term < 3+2*cloud.SharedReplacements; term++ {
		conn, welcome := hello(map[bool]string{true: "gw-a", false: "gw-b"}[term%2 == 0], term)
		f := readFrame(t, old)
		if welcome.Type != sync.FrameWelcome || welcome.CredentialShared || f.Code != sync.ErrorReplaced || f.CredentialShared {
			t.Fatalf("takeover in term %d: got welcome %s shared %v, old link %s %q shared %v; want a welcome, the old link replaced, neither shared",
				term, welcome.Type, welcome.CredentialShared, f.Type, f.Code, f.CredentialShared)
		}
		old = conn
	}
	// The deposed leaders' links, each with the term it led in, take the
	// link back in turn: a box sharing the credential.
	shared := false
	for i := range 2*cloud.SharedReplacements + 2 {
		term := term - 2 + uint64(i%2)
		conn, welcome := hello(map[bool]string{true: "gw-a", false: "gw-b"}[term%2 == 0], term)
		readFrame(t, old)
		shared = welcome.CredentialShared
		old = conn
	}
	if !shared {
		t.Fatal("links with old terms replacing each other: the credential is not found shared")
	}
}
