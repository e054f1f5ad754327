package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/internal/testbin"
)

// A store with a kitchen screen, on the whole chain: HQ sees the screen
// beside the printers (ready while it speaks, offline and failed over once
// it falls silent), and each bump's time from the order per station.
func TestChain_KDS(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-kds")
	_, hotAddr := startSim(t)
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = %q\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n", st.id, filepath.Join(t.TempDir(), "data"), posToken)
	fmt.Fprintf(&b, "[cloud]\nurl = \"ws://%s/v1/sync\"\ninsecure = true\ngateway_id = %q\ntoken = %q\n", strings.TrimPrefix(node.base, "http://"), st.gatewayID, st.token)
	fmt.Fprintf(&b, "\n[[printers]]\nid = \"hot-1\"\ndriver = \"tcp\"\naddress = %q\n", hotAddr)
	b.WriteString("\n[[displays]]\nid = \"kds-hot\"\nbackup = \"hot-1\"\noffline_after = \"5s\"\n\n[[stations]]\nname = \"hot\"\ndisplay = \"kds-hot\"\n")
	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := testbin.StartGateway(t, gatewayBinary(t), cfg)
	apis.Add(gw.Base, gatewayAPI)
	g := &gatewayProc{Gateway: gw, base: gw.Base}

	// kds waits for HQ to show the screen as want, checking again each
	// time the gateway says something changed (the screen, its link).
	kds := func(want string, within time.Duration) {
		t.Helper()
		waitGateway(t, g, within, func() (bool, string) {
			var stores []struct {
				ID       string `json:"store_id"`
				Printers []struct {
					ID       string   `json:"printer_id"`
					Kind     string   `json:"kind"`
					Status   string   `json:"status"`
					Failover bool     `json:"failover"`
					Stations []string `json:"stations"`
				} `json:"printers"`
			}
			do(t, adminToken, "GET", node.base+"/v1/stores", nil, &stores)
			last := "not reported"
			for _, s := range stores {
				for _, p := range s.Printers {
					if s.ID == st.id && p.ID == "kds-hot" {
						last = fmt.Sprintf("%s/%s/%t/%s", p.Kind, p.Status, p.Failover, strings.Join(p.Stations, ","))
					}
				}
			}
			if last == want {
				return true, last
			}
			// The screen speaks while the test waits for it to show as on.
			if strings.HasPrefix(want, "display/ready") {
				do(t, posToken, "POST", g.base+"/v1/displays/kds-hot/poll", map[string]any{}, nil)
			}
			return false, fmt.Sprintf("HQ shows kds-hot as %s, want %s", last, want)
		})
	}
	kds("display/ready/false/hot", 15*time.Second)

	// Two tickets bumped: HQ has their time to bump for station hot.
	for _, id := range []string{"k1", "k2"} {
		postOrder(t, g.base, id, "hot")
		no := "order_" + id + "_station_hot"
		if code := do(t, posToken, "POST", g.base+"/v1/tasks/"+no+"/bump", map[string]string{"display_id": "kds-hot"}, nil); code != 200 {
			t.Fatalf("bump %s: %d", no, code)
		}
		waitCloudStatus(t, node.base, st.id, no, "done", 15*time.Second)
	}
	waitSynced(t, g, 30*time.Second)
	since := time.Now().UTC().Add(-time.Hour).Truncate(time.Hour)
	var times struct {
		Stations []struct {
			Station string  `json:"station"`
			Count   int     `json:"count"`
			MedianS float64 `json:"median_s"`
			Hours   []struct {
				Count int `json:"count"`
			} `json:"hours"`
		} `json:"stations"`
	}
	if code := do(t, adminToken, "GET", node.base+"/v1/stores/"+st.id+"/bump-times?since="+since.Format(time.RFC3339), nil, &times); code != 200 {
		t.Fatalf("GET bump-times: %d", code)
	}
	if len(times.Stations) != 1 || times.Stations[0].Station != "hot" || times.Stations[0].Count != 2 || len(times.Stations[0].Hours) != 1 || times.Stations[0].Hours[0].Count != 2 {
		t.Fatalf("got bump times %+v, want station hot with 2 tickets in one hour", times)
	}

	// The dashboard shows them, per station and hour.
	ctx := chromium.New(t, 1400, 1000)
	chromium.Within(t, ctx, 20*time.Second, "the dashboard", chromedp.Navigate(node.base+"/?token="+adminToken),
		chromedp.WaitVisible(`[data-store-row="`+st.id+`"]`))
	chromium.Within(t, ctx, 20*time.Second, "time to bump on the dashboard",
		chromedp.Click(`[data-bump-times="`+st.id+`"]`),
		chromedp.WaitVisible(`#bump-times [data-bump-station="hot"].total`))

	// The screen falls silent: HQ shows it offline, its station failed over,
	// in a screen's words (not as an unreachable printer), red.
	kds("display/offline/true/hot", 20*time.Second)
	chip := `#stores span.chip[data-printer="kds-hot"][data-kind="display"]`
	chromium.Within(t, ctx, 20*time.Second, "the silent screen on the dashboard",
		chromedp.Poll[chromedp.Void](`(() => { const c = document.querySelector(`+"`"+chip+"`"+`);
			return c !== null && c.classList.contains("bad") && c.textContent.includes("Screen offline"); })()`))
	if got := eval[string](t, ctx, `document.querySelector(`+"`"+chip+"`"+`).textContent`); strings.Contains(got, "unreachable") {
		t.Fatalf("got the screen shown as %q, want no printer's words", got)
	}
	chromium.Within(t, ctx, 20*time.Second, "the silent screen among those in trouble",
		chromedp.WaitVisible(`#printers .card[data-printer="kds-hot"][data-kind="display"]`))
}
