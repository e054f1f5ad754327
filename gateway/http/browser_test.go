package http_test

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// webPOS is the page of a browser POS on an origin of its own: it posts
// one order to the gateway with a paired token and shows the answer.
var webPOS = template.Must(template.New("pos").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>web POS</title></head>
<body><div id="result"></div>
<script>
(async () => {
  const out = document.getElementById("result");
  try {
    const resp = await fetch({{.Gateway}} + "/v1/orders", {
      method: "POST",
      headers: { "Authorization": "Bearer " + {{.Token}}, "Content-Type": "application/json" },
      body: {{.Order}},
    });
    const body = await resp.json();
    out.textContent = resp.status + " " + body.tasks.map(t => t.task_no).join(",");
  } catch (e) {
    out.textContent = "blocked: " + e.name;
  }
  out.dataset.done = "true";
})();
</script></body></html>`))

// servePOS serves the web POS page on ln, a loopback origin of its own.
func servePOS(t *testing.T, ln net.Listener, gateway, token string) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, _ := json.Marshal(gatewaytest.Order(r.URL.Query().Get("order"), "hot"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = webPOS.Execute(w, map[string]string{"Gateway": gateway, "Token": token, "Order": string(o)})
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// A web POS on an origin listed in allowed_origins posts an order with a
// paired token through CORS, and it prints; the same page on an origin
// not listed is blocked by the browser, and nothing reaches the gateway.
func TestBrowser_CORS(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	// The origins must be known before the config is written: listen first.
	listedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listed := "http://" + listedLn.Addr().String()
	cfg := gatewaytest.ConfigTop(t, t.TempDir(), fmt.Sprintf("allowed_origins = [%q]\n", listed),
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	dev := pairDevice(t, base, gatewaytest.Token, "pos", "web POS")

	servePOS(t, listedLn, base, dev.Token)
	otherLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := servePOS(t, otherLn, base, dev.Token)

	ctx := chromium.New(t, 800, 600)
	result := func(url string) string {
		t.Helper()
		chromium.Within(t, ctx, 20*time.Second, "open "+url, chromedp.Navigate(url), chromedp.WaitVisible(`#result[data-done="true"]`))
		text, err := chromedp.Run(ctx, chromedp.Text(`#result`))
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	if got, want := result(listed+"/?order=web-1"), "201 order_web-1_station_hot"; got != want {
		t.Fatalf("from the listed origin %s: got %q, want %q", listed, got, want)
	}
	paper := gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	if paper[0].TaskNo != "order_web-1_station_hot" {
		t.Fatalf("got %+v on paper, want the web POS's order", paper[0])
	}

	if got := result(other + "/?order=web-2"); got != "blocked: TypeError" {
		t.Fatalf("from the unlisted origin %s: got %q, want the browser to block it", other, got)
	}
	var e struct{ Error string }
	if code := gatewaytest.Call(t, "GET", base+"/v1/tasks/order_web-2_station_hot", nil, &e); code != 404 {
		t.Fatalf("the blocked order: got %d, want 404 (never sent)", code)
	}
	if n := len(hot.Printed()); n != 1 {
		t.Fatalf("got %d tickets, want 1", n)
	}
}

// The LAN page pairs a device: an admin shows a code and its QR code; a
// browser opening the QR code's URL names itself, pairs, and is signed in
// with its own role, which shows no device management.
func TestBrowser_Pairing(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	ctx := chromium.New(t, 1280, 900)
	chromium.Within(t, ctx, 20*time.Second, "admin shows a pairing code",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`#devices-section`),
		chromedp.SetValue(`#pairing-role`, "pos"),
		chromedp.SetValue(`#pairing-name`, "till 2"),
		chromedp.Click(`#pairing-create`),
		chromedp.WaitVisible(`#pair-qr[src^="data:image/png;base64,"]`))
	code, err := chromedp.Run(ctx, chromedp.Text(`#pair-code`))
	if err != nil || len(code) != 6 {
		t.Fatalf("got code %q %v, want six digits", code, err)
	}
	url, err := chromedp.Run(ctx, chromedp.Text(`#pair-url`))
	if err != nil || url != base+"/?pair="+code {
		t.Fatalf("got url %q %v, want %s/?pair=%s", url, err, base, code)
	}
	chromium.Within(t, ctx, 20*time.Second, "the new device opens the QR code's URL and pairs",
		chromedp.Click(`#signout`),
		chromedp.Navigate(url),
		chromedp.WaitVisible(`#pair-form`),
		chromedp.SetValue(`#pair-name`, "tablet"),
		chromedp.Click(`#pair-form button[type="submit"]`),
		chromedp.WaitVisible(`#app`))
	who, err := chromedp.Run(ctx, chromedp.Text(`#whoami`))
	if err != nil || who != "Signed in: tablet (POS)" {
		t.Fatalf("got %q %v, want the paired pos device", who, err)
	}
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("devices-section").hidden && !document.querySelector('[data-action="test-page"]')`))
	if err != nil || !hidden {
		t.Fatalf("a pos device sees staff controls (%v)", err)
	}
	var devices []struct{ Name, Role string }
	gatewaytest.Call(t, "GET", base+"/v1/devices", nil, &devices)
	if len(devices) != 1 || devices[0].Name != "tablet" || devices[0].Role != "pos" {
		t.Fatalf("got devices %+v, want the tablet as pos", devices)
	}
}
