package http_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

type displayJSON struct {
	ID       string   `json:"id"`
	State    string   `json:"state"`
	Stations []string `json:"stations"`
	Backup   string   `json:"backup"`
	Open     int      `json:"open"`
}

func getDisplay(t testing.TB, base, id string) displayJSON {
	t.Helper()
	var ds []displayJSON
	if code := gatewaytest.Call(t, "GET", base+"/v1/displays", nil, &ds); code != 200 {
		t.Fatalf("GET /v1/displays: status %d", code)
	}
	for _, d := range ds {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("GET /v1/displays: no %s in %+v", id, ds)
	return displayJSON{}
}

// waitBumped waits for a task to be done with its printed receipt
// confirmed by a bump.
func waitBumped(t testing.TB, base, taskNo string, timeout time.Duration) {
	t.Helper()
	gatewaytest.WaitStatus(t, base, taskNo, "done", timeout)
	var rs []struct {
		State       string `json:"state"`
		PrinterID   string `json:"printer_id"`
		ConfirmedBy string `json:"confirmed_by"`
	}
	gatewaytest.Call(t, "GET", base+"/v1/tasks/"+taskNo+"/receipts", nil, &rs)
	if len(rs) != 1 || rs[0].State != "printed" || rs[0].ConfirmedBy != "bump" || rs[0].PrinterID != "kds-hot" {
		t.Fatalf("%s: got receipts %+v, want one printed on kds-hot, confirmed_by bump", taskNo, rs)
	}
}

// kdsConfig is a store whose station hot shows on the screen kds-hot,
// backed by the printer hot-1.
func kdsConfig(t *testing.T, hot *gatewaytest.Sim, offlineAfter string) string {
	return gatewaytest.ConfigOf(t, t.TempDir(),
		[]string{fmt.Sprintf("id = \"hot-1\"\ndriver = \"tcp\"\naddress = %q", hot.Addr)},
		[]string{"name = \"hot\"\ndisplay = \"kds-hot\""},
		fmt.Sprintf("\n[[displays]]\nid = \"kds-hot\"\nbackup = \"hot-1\"\noffline_after = %q\n", offlineAfter))
}

// The kitchen screen in a real browser, as a tablet opens it: each order's
// ticket appears on it; Enter bumps the oldest, 2 then Enter the second;
// the task is done, confirmed by the bump, and nothing prints. The times
// from order to screen and from key to done are logged (the aim is well
// under a second; the bounds here only stop a hung test). R recalls the last bumped. Closed, the screen's next
// ticket prints on the backup with BACKUP FROM kds-hot within
// offline_after + 5 s, and the display is offline.
func TestBrowser_KDS(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	const offlineAfter = 5 * time.Second
	// The browser first: the screen is silent from the gateway's start.
	ctx := chromium.New(t, 1280, 800)
	_, base := runGateway(t, kdsConfig(t, hot, offlineAfter.String()))

	chromium.Within(t, ctx, 20*time.Second, "open the screen",
		chromedp.Navigate(base+"/kds/kds-hot?token="+gatewaytest.Token),
		chromedp.WaitVisible(`#board`))
	nos := []string{}
	for _, id := range []string{"k1", "k2", "k3"} {
		start := time.Now()
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot"), nil)
		no := "order_" + id + "_station_hot"
		nos = append(nos, no)
		chromium.Within(t, ctx, 10*time.Second, "ticket "+no+" on the screen", chromedp.WaitVisible(`[data-task="`+no+`"]`))
		t.Logf("%s on the screen %s after the order was posted", no, time.Since(start).Round(time.Millisecond))
	}
	// Oldest first, numbered for the bump bar; delivered once shown.
	listed, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".ticket")].map(e => e.dataset.task)`))
	if err != nil || strings.Join(listed, ",") != strings.Join(nos, ",") {
		t.Fatalf("got tickets %v %v, want %v, oldest first", listed, err, nos)
	}
	gatewaytest.WaitStatus(t, base, nos[2], "printing", 15*time.Second)

	// Enter bumps the oldest; 2 selects the second, Enter bumps it.
	start := time.Now()
	chromium.Within(t, ctx, 15*time.Second, "Enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitNotPresent(`[data-task="`+nos[0]+`"]`))
	waitBumped(t, base, nos[0], 10*time.Second)
	t.Logf("%s done %s after Enter", nos[0], time.Since(start).Round(time.Millisecond))
	chromium.Within(t, ctx, 15*time.Second, "2, Enter",
		chromedp.KeyEvent("2"), chromedp.WaitVisible(`[data-task="`+nos[2]+`"].selected`),
		chromedp.KeyEvent(kb.Enter), chromedp.WaitNotPresent(`[data-task="`+nos[2]+`"]`))
	waitBumped(t, base, nos[2], 10*time.Second)
	if gatewaytest.GetTask(t, base, nos[1]).Status != "printing" {
		t.Fatalf("%s: bumped with the wrong one", nos[1])
	}
	// R recalls the last bumped; a touch bumps it again.
	chromium.Within(t, ctx, 15*time.Second, "R", chromedp.KeyEvent("r"), chromedp.WaitVisible(`[data-task="`+nos[2]+`"].recalled`))
	chromium.Within(t, ctx, 15*time.Second, "touch", chromedp.Click(`[data-task="`+nos[2]+`"]`), chromedp.WaitNotPresent(`[data-task="`+nos[2]+`"]`))
	chromium.Within(t, ctx, 15*time.Second, "Enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitNotPresent(`[data-task="`+nos[1]+`"]`))
	waitBumped(t, base, nos[1], 10*time.Second)
	var audit []struct {
		Action, TaskNo, Operator, Reason string
	}
	gatewaytest.Call(t, "GET", base+"/v1/audit", nil, &audit)
	var bumps, recalls int
	for _, a := range audit {
		switch a.Action {
		case "bump":
			bumps++
		case "recall":
			recalls++
		}
	}
	if bumps != 4 || recalls != 1 {
		t.Fatalf("audit: got %d bumps and %d recalls, want 4 and 1", bumps, recalls)
	}
	if n := len(hot.Printed()); n != 0 {
		t.Fatalf("got %d tickets on paper, want none: the screen confirmed them", n)
	}
	if d := getDisplay(t, base, "kds-hot"); d.State != "online" || d.Open != 0 {
		t.Fatalf("got %+v, want online with nothing open", d)
	}
	ext, err := chromium.ExternalRequests(ctx, base)
	if err != nil || len(ext) > 0 {
		t.Fatalf("the screen requested outside the gateway: %v %v", ext, err)
	}

	if dir := os.Getenv("STOREPRINT_SCREENSHOTS"); dir != "" {
		kdsScreenshots(t, ctx, base, dir)
	}

	// The browser closed: the next ticket prints on the backup.
	if err := chromedp.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("k4", "hot"), nil)
	got := gatewaytest.WaitPrinted(t, hot, 1, offlineAfter+5*time.Second)
	t.Logf("the screen closed: the next ticket on the backup %s after its order (offline_after %s)", time.Since(start).Round(time.Millisecond), offlineAfter)
	if got[0].TaskNo != "order_k4_station_hot" || !strings.Contains(got[0].Text, "BACKUP FROM kds-hot") {
		t.Fatalf("got %s on the backup:\n%s\nwant order_k4_station_hot with BACKUP FROM kds-hot", got[0].TaskNo, got[0].Text)
	}
	if d := getDisplay(t, base, "kds-hot"); d.State != "offline" {
		t.Fatalf("got %+v, want offline", d)
	}
	// The LAN page shows the screen red, and the failover to acknowledge.
	lan := chromium.New(t, 1280, 800)
	chromium.Within(t, lan, 20*time.Second, "LAN page shows the screen offline",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-display="kds-hot"][data-state="offline"].bad`),
		chromedp.WaitVisible(`[data-failover="kds-hot"] [data-action="acknowledge"]`))
}

// kdsScreenshots shows the screen busy (tickets of every age colour) for
// the README, at 1280x800 and as a 10-inch tablet on its side, in Chinese
// and English.
func kdsScreenshots(t *testing.T, ctx context.Context, base, dir string) {
	t.Helper()
	orders := []map[string]any{
		{"order_id": "1042", "table": "A3", "note": "客人赶时间", "items": []map[string]any{
			{"name": "宫保鸡丁", "qty": 1, "station": "hot", "note": "少辣"}, {"name": "麻婆豆腐", "qty": 2, "station": "hot"}}},
		{"order_id": "1043", "table": "B7", "items": []map[string]any{{"name": "红烧肉", "qty": 1, "station": "hot"}, {"name": "米饭", "qty": 3, "station": "hot"}}},
		{"order_id": "1044", "table": "C1", "items": []map[string]any{{"name": "Kung Pao Chicken", "qty": 2, "station": "hot", "note": "no peanuts"}}},
		{"order_id": "1045", "table": "12", "items": []map[string]any{{"name": "鱼香肉丝", "qty": 1, "station": "hot"}, {"name": "酸辣汤", "qty": 1, "station": "hot", "note": "去香菜"}}},
		{"order_id": "1046", "table": "A5", "items": []map[string]any{{"name": "干煸四季豆", "qty": 1, "station": "hot"}}},
	}
	for _, o := range orders {
		gatewaytest.Call(t, "POST", base+"/v1/orders", o, nil)
	}
	chromium.Within(t, ctx, 10*time.Second, "tickets shown", chromedp.WaitVisible(`[data-task="order_1046_station_hot"]`))
	// Age the first two on the screen's own clock, as ten and six minutes
	// of waiting would.
	for _, size := range []struct {
		name string
		w, h int64
	}{{"1280x800", 1280, 800}, {"tablet-1340x800", 1340, 800}} {
		for _, lang := range []string{"zh", "en"} {
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`localStorage.setItem("storeprint.lang", "`+lang+`")`)); err != nil {
				t.Fatal(err)
			}
			chromium.Within(t, ctx, 10*time.Second, "reload",
				chromedp.EmulateViewport(size.w, size.h), chromedp.Reload(),
				chromedp.WaitVisible(`[data-task="order_1046_station_hot"]`),
				chromedp.Evaluate[chromedp.Void](`viewAt = Date.now() - 0; view.tickets[0].age_s = 660; view.tickets[1].age_s = 390; render();`))
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "kds-"+size.name+"-"+lang+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, o := range orders {
		no := "order_" + o["order_id"].(string) + "_station_hot"
		gatewaytest.Call(t, "POST", base+"/v1/tasks/"+no+"/bump", map[string]any{"display_id": "kds-hot"}, nil)
	}
}
