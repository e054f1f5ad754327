package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// dashboardScreenshots puts the dashboard in a telling state (a printer
// out of paper with tickets waiting, a flagged ticket in the queue, a
// store offline, a ticket's history) and saves it in both languages for
// the README (make screenshots).
func dashboardScreenshots(t *testing.T, ctx context.Context, base string, g *gatewayProc, hot, pass *printersim.Printer, dir string) {
	t.Helper()
	hot.SetFault(printersim.FaultPaperEnd)
	pass.SetFault(printersim.FaultLostAck)
	do(t, posToken, "POST", g.base+"/v1/orders", map[string]any{"order_id": "1042", "table": "A3", "items": []map[string]any{
		{"name": "宫保鸡丁", "qty": 1, "station": "hot", "note": "少辣"},
		{"name": "酸梅汤", "qty": 2, "station": "pass", "note": "去冰"},
	}}, nil)
	do(t, posToken, "POST", g.base+"/v1/orders", map[string]any{"order_id": "1043", "table": "B7", "items": []map[string]any{
		{"name": "红烧肉", "qty": 1, "station": "hot"},
	}}, nil)
	// The POS sends 1043 again: answered, not printed twice.
	do(t, posToken, "POST", g.base+"/v1/orders", map[string]any{"order_id": "1043", "table": "B7", "items": []map[string]any{
		{"name": "红烧肉", "qty": 1, "station": "hot"},
	}}, nil)
	chromium.Within(t, ctx, 20*time.Second, "screenshot state",
		chromedp.Navigate(base+"/?token="+adminToken+"#q=order_1042_station_pass"),
		chromedp.WaitVisible(`#printers [data-printer="hot-1"][data-status="paper_end"]`),
		chromedp.WaitVisible(`#queue [data-task="order_1042_station_pass"]`),
		chromedp.WaitVisible(`[data-history="order_1042_station_pass"]`))
	for _, lang := range []string{"zh", "en"} {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`localStorage.setItem("storeprint.lang", "`+lang+`")`)); err != nil {
			t.Fatal(err)
		}
		chromium.Within(t, ctx, 10*time.Second, "reload",
			chromedp.Reload(),
			chromedp.WaitVisible(`#queue [data-task="order_1042_station_pass"]`),
			chromedp.WaitVisible(`[data-history="order_1042_station_pass"]`),
			chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dashboard-"+lang+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
