package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/chromium"
)

// sharedState is what a gateway's health says of its link.
type sharedState struct {
	Cloud struct {
		Connected        bool   `json:"connected"`
		CredentialShared bool   `json:"credential_shared"`
		LastError        string `json:"last_error"`
	} `json:"cloud"`
}

// Two real gateways started with one credential (a data dir copied with
// its config): their links replace each other, the cloud raises
// gateway_credential_shared for the store within 30 s and tells both,
// whose health and LAN page say so; once one is stopped, the store is
// online again within 15 s on the other's link.
func TestChain_CredentialShared(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t-shared", "s-shared")
	cloudAddr := strings.TrimPrefix(node.base, "http://")
	_, p1 := startSim(t)
	_, p2 := startSim(t)
	g1 := startGateway(t, st, cloudAddr, map[string]string{"hot-1": p1})
	g2 := startGateway(t, st, cloudAddr, map[string]string{"hot-1": p2})

	alerted := func() (bool, string) {
		var alerts []cloud.Alert
		if code := do(t, adminToken, "GET", node.base+"/v1/stores/"+st.id+"/alerts", nil, &alerts); code != 200 {
			return false, fmt.Sprintf("alerts: %d", code)
		}
		for _, a := range alerts {
			if a.Kind == cloud.AlertCredentialShared && a.State == cloud.AlertOpen && strings.Contains(a.Message, st.gatewayID) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no open %s alert among %+v", cloud.AlertCredentialShared, alerts)
	}
	told := func(g *gatewayProc) func() (bool, string) {
		return func() (bool, string) {
			if ok, msg := alerted(); !ok {
				return false, msg
			}
			var h sharedState
			do(t, posToken, "GET", g.base+"/healthz", nil, &h)
			return h.Cloud.CredentialShared, fmt.Sprintf("gateway link %+v", h.Cloud)
		}
	}
	started := time.Now()
	deadline := started.Add(30 * time.Second)
	waitGateway(t, g1, time.Until(deadline), told(g1))
	waitGateway(t, g2, time.Until(deadline), told(g2))
	alertedIn := time.Since(started)

	// The alert is on HQ's dashboard.
	var dash cloud.Dashboard
	if code := do(t, adminToken, "GET", node.base+"/v1/dashboard", nil, &dash); code != 200 {
		t.Fatalf("dashboard: %d", code)
	}
	found := false
	for _, a := range dash.Queue {
		found = found || (a.Kind == cloud.AlertCredentialShared && a.StoreID == st.id)
	}
	if !found {
		t.Fatalf("the dashboard's queue has no %s alert for %s", cloud.AlertCredentialShared, st.id)
	}

	// Both LAN pages and HQ's dashboard say so, in a real browser.
	ctx := chromium.New(t, 1280, 900)
	for _, g := range []*gatewayProc{g1, g2} {
		chromium.Within(t, ctx, 20*time.Second, "the LAN page says the credential is shared",
			chromedp.Navigate(g.base+"/?token="+posToken),
			chromedp.WaitVisible(`#banners [data-credential-shared="true"]`))
	}
	chromium.Within(t, ctx, 20*time.Second, "HQ shows the alert",
		chromedp.Navigate(node.base+"/?token="+adminToken),
		chromedp.WaitVisible(`[data-store="`+st.id+`"][data-status="`+cloud.AlertCredentialShared+`"]`))

	// One stopped: the other's link holds the credential, and the store
	// is online.
	g1.Stop(t, 30*time.Second)
	stopped := time.Now()
	online := func() (bool, string) {
		var stores []cloud.StoreStatus
		do(t, adminToken, "GET", node.base+"/v1/stores", nil, &stores)
		var h sharedState
		do(t, posToken, "GET", g2.base+"/healthz", nil, &h)
		links := node.m.Sync.Links()
		for _, s := range stores {
			if s.ID == st.id {
				return s.Online && links == 1 && h.Cloud.Connected, fmt.Sprintf("store online %v, %d links, gateway link %+v", s.Online, links, h.Cloud)
			}
		}
		return false, "store not listed"
	}
	waitGateway(t, g2, 15*time.Second, online)
	t.Logf("alert raised and both gateways told %s after both started; store online %s after one stopped",
		alertedIn.Round(100*time.Millisecond), time.Since(stopped).Round(100*time.Millisecond))
}
