package http_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A kitchen tablet pairs as its screen: staff pick "Kitchen screen ·
// kds-hot" on the LAN page, the tablet opens the screen with the code
// and signs in with it, and shows the station's tickets.
func TestBrowser_KDSPairing(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	// The screen is not open before the pairing: it must not go dark
	// meanwhile.
	_, base := runGateway(t, kdsConfig(t, hot, "10m"))
	lan := chromium.New(t, 1280, 900)
	chromium.Within(t, lan, 20*time.Second, "pair a kitchen screen on the LAN page",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-display="kds-hot"]`),
		chromedp.WaitReady(`#pairing-role option[value="display:kds-hot"]`),
		chromedp.SetValue(`#pairing-role`, "display:kds-hot"),
		chromedp.Click(`#pairing-create`),
		chromedp.WaitVisible(`#pair-code`))
	code, err := chromedp.Run(lan, chromedp.Text(`#pair-code`))
	if err != nil || len(code) != 6 {
		t.Fatalf("got pairing code %q %v", code, err)
	}
	url, err := chromedp.Run(lan, chromedp.Text(`#pair-url`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "/kds/kds-hot?pair=" + code; len(url) < len(want) || url[len(url)-len(want):] != want {
		t.Fatalf("got pairing URL %q, want it to open the screen: ...%s", url, want)
	}

	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("p1", "hot"), nil)
	tablet := chromium.New(t, 1280, 800)
	chromium.Within(t, tablet, 20*time.Second, "the tablet signs in with the code",
		chromedp.Navigate(base+"/kds/kds-hot?pair="+code),
		chromedp.WaitVisible(`#signin-form`),
		chromedp.Click(`#signin-form button[type="submit"]`),
		chromedp.WaitVisible(`[data-task="order_p1_station_hot"]`))
	var devices []struct {
		Role    string `json:"role"`
		Display string `json:"display"`
	}
	gatewaytest.Call(t, "GET", base+"/v1/devices", nil, &devices)
	if len(devices) != 1 || devices[0].Role != "display" || devices[0].Display != "kds-hot" {
		t.Fatalf("got devices %+v, want one display device for kds-hot", devices)
	}
	chromium.Within(t, tablet, 5*time.Second, "bump", chromedp.KeyEvent("\r"), chromedp.WaitNotPresent(`[data-task="order_p1_station_hot"]`))
	waitBumped(t, base, "order_p1_station_hot", 5*time.Second)
}
