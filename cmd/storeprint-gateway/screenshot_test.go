package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// screenshot puts the page in a telling state (a printer out of paper with
// tickets waiting, a flagged ticket) and saves it for the README
// (make screenshots).
func screenshot(t *testing.T, ctx context.Context, base string, hot, pass *sim, dir string) {
	t.Helper()
	hot.SetFault(printersim.FaultPaperEnd)
	pass.SetFault(printersim.FaultLostAck)
	call(t, "POST", base+"/v1/orders", map[string]any{"order_id": "1042", "table": "A3", "items": []map[string]any{
		{"name": "宫保鸡丁", "qty": 1, "station": "hot", "note": "少辣"},
		{"name": "麻婆豆腐", "qty": 2, "station": "hot"},
		{"name": "酸梅汤", "qty": 2, "station": "pass", "note": "去冰"},
	}}, nil)
	call(t, "POST", base+"/v1/orders", map[string]any{"order_id": "1043", "table": "B7", "items": []map[string]any{
		{"name": "红烧肉", "qty": 1, "station": "hot"},
	}}, nil)
	within(t, ctx, 15*time.Second, "screenshot state",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`[data-printer="hot-1"][data-status="paper_end"]`),
		chromedp.WaitVisible(`[data-task="order_1042_station_pass"]`))
	for _, lang := range []string{"zh", "en"} {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`localStorage.setItem("storeprint.lang", "`+lang+`")`)); err != nil {
			t.Fatal(err)
		}
		within(t, ctx, 10*time.Second, "reload", chromedp.Reload(), chromedp.WaitVisible(`[data-task="order_1042_station_pass"]`))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lan-page-"+lang+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
