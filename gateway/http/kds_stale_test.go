package http_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A ticket shown on a kitchen screen and not bumped within its station's
// stale_after is stale: the LAN page shows the screen red with it and
// marks the ticket in its station's queue, as it shows a printer's stuck
// ticket. The screen keeps it, and nothing prints.
func TestBrowser_KDSStale(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.ConfigOf(t, t.TempDir(),
		[]string{"id = \"hot-1\"\ndriver = \"tcp\"\naddress = \"" + hot.Addr + "\""},
		[]string{"name = \"hot\"\ndisplay = \"kds-hot\"\nstale_after = \"3s\""},
		"\n[[displays]]\nid = \"kds-hot\"\nbackup = \"hot-1\"\noffline_after = \"30s\"\n")
	screen := chromium.New(t, 1280, 800)
	_, base := runGateway(t, cfg)
	chromium.Within(t, screen, 20*time.Second, "open the screen",
		chromedp.Navigate(base+"/kds/kds-hot?token="+gatewaytest.Token), chromedp.WaitVisible(`#board`))
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("s1", "hot"), nil)
	no := "order_s1_station_hot"
	chromium.Within(t, screen, 5*time.Second, "the ticket on the screen", chromedp.WaitVisible(`[data-task="`+no+`"]`))
	gatewaytest.WaitStatus(t, base, no, "printing", 5*time.Second)

	lan := chromium.New(t, 1280, 800)
	chromium.Within(t, lan, 20*time.Second, "the LAN page marks the ticket stale on the screen",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-display="kds-hot"][data-state="online"][data-stale="1"].bad`),
		chromedp.WaitVisible(`#stations li[data-task="`+no+`"][data-stale="true"].bad`))
	if d := getDisplay(t, base, "kds-hot"); d.State != "online" || d.Open != 1 {
		t.Fatalf("got %+v, want online with the ticket still open", d)
	}
	if got := gatewaytest.GetTask(t, base, no).Status; got != "printing" {
		t.Fatalf("got %s, want the ticket still on the screen", got)
	}
	chromium.Within(t, screen, 5*time.Second, "the screen still shows it", chromedp.WaitVisible(`[data-task="`+no+`"]`))
	if n := len(hot.Printed()); n != 0 {
		t.Fatalf("got %d tickets on paper, want none", n)
	}
}
