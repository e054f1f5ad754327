package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The LAN page of a follower in a real browser shows the store's
// printers (from the leader) and the cluster: this node, its role and
// the leader; when the leader stops, the page shows its node leading.
func TestBrowser_Cluster(t *testing.T) {
	hot := startSim(t, printersim.FaultNone)
	nodes := startCluster(t, hot)
	leader := waitLeader(t, nodes, "", 30*time.Second)
	follower := nodes["gw-a"]
	if leader.id == "gw-a" {
		follower = nodes["gw-b"]
	}
	ctx := chromium.New(t, 1280, 900)
	within(t, ctx, 20*time.Second, "open the follower's page",
		chromedp.Navigate(follower.base+"/?token="+token),
		chromedp.WaitVisible(`[data-printer="hot-1"]`),
		chromedp.WaitVisible(`#cluster[data-role="follower"]`))
	text, err := chromedp.Run(ctx, chromedp.Text(`#cluster`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, follower.id) || !strings.Contains(text, leader.id) {
		t.Errorf("cluster chip %q does not name the node %s and its leader %s", text, follower.id, leader.id)
	}
	leader.stop()
	within(t, ctx, 15*time.Second, "the page's node leads",
		chromedp.WaitVisible(`#cluster[data-role="leader"]`))
}
