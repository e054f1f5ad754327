package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The LAN page of a follower in a real browser shows the store's
// printers (from the leader) and the cluster: this node, its role, the
// leader and the witness; when the leader stops, the page shows its node
// leading, and still names the witness.
func TestBrowser_Cluster(t *testing.T) {
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	nodes := startCluster(t, hot)
	leader, follower := leaderAndFollower(t, nodes)
	waitWitnessKnown(t, nodes, "")
	ctx := chromium.New(t, 1280, 900)
	chromium.Within(t, ctx, 20*time.Second, "open the follower's page",
		chromedp.Navigate(follower.base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-printer="hot-1"]`),
		chromedp.WaitVisible(`#cluster[data-role="follower"][data-witness="wit"]`))
	text, err := chromedp.Run(ctx, chromedp.Text(`#cluster`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, follower.id) || !strings.Contains(text, leader.id) {
		t.Errorf("cluster chip %q does not name the node %s and its leader %s", text, follower.id, leader.id)
	}
	if !strings.Contains(text, "witness wit") {
		t.Errorf("cluster chip %q does not name wit the witness", text)
	}
	leader.stop()
	chromium.Within(t, ctx, 15*time.Second, "the page's node leads, wit the witness",
		chromedp.WaitVisible(`#cluster[data-role="leader"][data-witness="wit"]`))
}
