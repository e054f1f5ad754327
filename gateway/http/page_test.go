package http_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The kitchen's LAN page in a real browser: a setup link signs in and
// leaves no token in the address bar; a printer fault turns its card red
// within 2 s; one click on make-up print puts exactly one ticket on paper;
// nothing is requested outside the gateway.
func TestBrowser_LANPage(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "pass-1", Addr: pass.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	ctx := chromium.New(t, 1280, 900)

	chromium.Within(t, ctx, 20*time.Second, "open the setup link",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-printer="hot-1"][data-status="ready"]`))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, gatewaytest.Token) || strings.Contains(loc, "token") {
		t.Fatalf("the token stayed in the address bar: %s", loc)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("body"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, gatewaytest.Token) {
		t.Fatal("the page shows the token")
	}

	// A fault turns the printer red within 2 s.
	hot.SetFault(printersim.FaultPaperEnd)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("pe-1", "hot"), nil)
	chromium.Within(t, ctx, 2*time.Second, "printer shown out of paper",
		chromedp.WaitVisible(`[data-printer="hot-1"][data-status="paper_end"].bad`))
	hot.SetFault(printersim.FaultNone)
	gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	chromium.Within(t, ctx, 2*time.Second, "printer shown ready again",
		chromedp.WaitVisible(`[data-printer="hot-1"][data-status="ready"].ok`))

	// A flagged ticket, one click, exactly one more ticket on paper.
	pass.SetFault(printersim.FaultLostAck)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("mu-1", "pass"), nil)
	no := "order_mu-1_station_pass"
	chromium.Within(t, ctx, 15*time.Second, "flagged ticket shown",
		chromedp.WaitVisible(`[data-task="`+no+`"][data-status="attention_required"]`))
	pass.SetFault(printersim.FaultNone)
	if n := len(pass.Printed()); n != 1 {
		t.Fatalf("got %d tickets before the click, want 1", n)
	}
	chromium.Within(t, ctx, 10*time.Second, "make-up print",
		chromedp.Click(`[data-task="`+no+`"] [data-action="retry"]`),
		chromedp.WaitVisible(`#operator`),
		chromedp.SetValue(`#operator`, "Amy"),
		chromedp.Click(`#confirm-ok`),
		chromedp.WaitNotPresent(`[data-task="`+no+`"]`))
	got := gatewaytest.WaitPrinted(t, pass, 2, 10*time.Second)
	gatewaytest.WaitStatus(t, base, no, "done", 5*time.Second)
	if n := len(pass.Printed()); n != 2 || got[1].TaskNo != no {
		t.Fatalf("got %d tickets (%v), want exactly one more for %s", n, got, no)
	}

	// Chinese, switchable.
	chromium.Within(t, ctx, 5*time.Second, "switch language",
		chromedp.Click(`#lang`),
		chromedp.WaitVisible(`[data-printer="hot-1"]`))
	text, err := chromedp.Run(ctx, chromedp.Text(`[data-printer="hot-1"] .state`))
	if err != nil {
		t.Fatal(err)
	}
	if text != "就绪" {
		t.Fatalf("got printer state %q after switching, want 就绪", text)
	}

	ext, err := chromium.ExternalRequests(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) > 0 {
		t.Fatalf("the page requested outside the gateway: %v", ext)
	}
	if dir := os.Getenv("STOREPRINT_SCREENSHOTS"); dir != "" {
		screenshot(t, ctx, base, hot, pass, dir)
	}
}

// screenshot puts the page in a telling state (a printer out of paper with
// tickets waiting, a flagged ticket) and saves it for the README
// (make screenshots).
func screenshot(t *testing.T, ctx context.Context, base string, hot, pass *gatewaytest.Sim, dir string) {
	t.Helper()
	hot.SetFault(printersim.FaultPaperEnd)
	pass.SetFault(printersim.FaultLostAck)
	gatewaytest.Call(t, "POST", base+"/v1/orders", map[string]any{"order_id": "1042", "table": "A3", "items": []map[string]any{
		{"name": "宫保鸡丁", "qty": 1, "station": "hot", "note": "少辣"},
		{"name": "麻婆豆腐", "qty": 2, "station": "hot"},
		{"name": "酸梅汤", "qty": 2, "station": "pass", "note": "去冰"},
	}}, nil)
	gatewaytest.Call(t, "POST", base+"/v1/orders", map[string]any{"order_id": "1043", "table": "B7", "items": []map[string]any{
		{"name": "红烧肉", "qty": 1, "station": "hot"},
	}}, nil)
	chromium.Within(t, ctx, 15*time.Second, "screenshot state",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`[data-printer="hot-1"][data-status="paper_end"]`),
		chromedp.WaitVisible(`[data-task="order_1042_station_pass"]`))
	for _, lang := range []string{"zh", "en"} {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`localStorage.setItem("storeprint.lang", "`+lang+`")`)); err != nil {
			t.Fatal(err)
		}
		chromium.Within(t, ctx, 10*time.Second, "reload", chromedp.Reload(), chromedp.WaitVisible(`[data-task="order_1042_station_pass"]`))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lan-page-"+lang+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
