package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitPaper waits until the simulated printer has printed n tickets.
func waitPaper(t *testing.T, p *printersim.Printer, n int, d time.Duration) []printersim.Ticket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	got, err := p.WaitPrinted(ctx, n)
	if err != nil {
		t.Fatalf("%d tickets on paper within %s: got %d", n, d, len(got))
	}
	return got
}

// waitCloudStatus waits until the cloud sees the task in the status.
func waitCloudStatus(t *testing.T, base, storeID, taskNo, status string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var task cloud.Task
		do(t, adminToken, "GET", base+"/v1/stores/"+storeID+"/tasks/"+taskNo, nil, &task)
		if string(task.Status) == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cloud sees %s as %q after %s, want %s", taskNo, task.Status, d, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createNamedStore is createStore with a store name.
func createNamedStore(t *testing.T, base, tenant, id, name string) store {
	t.Helper()
	do(t, adminToken, "POST", base+"/v1/admin/tenants", map[string]string{"tenant_id": tenant, "name": tenant}, nil)
	if code := do(t, adminToken, "POST", base+"/v1/admin/stores", map[string]string{"store_id": id, "tenant_id": tenant, "name": name}, nil); code != 201 {
		t.Fatalf("create store %s: %d", id, code)
	}
	var gw struct {
		GatewayID string `json:"gateway_id"`
		Token     string `json:"token"`
	}
	if code := do(t, adminToken, "POST", base+"/v1/admin/stores/"+id+"/gateways", map[string]string{"reason": "test"}, &gw); code != 201 {
		t.Fatalf("create gateway: %d", code)
	}
	return store{id: id, gatewayID: gw.GatewayID, token: gw.Token}
}

// The HQ dashboard in a real browser, on the whole chain (the real cloud
// on PostgreSQL, the real gateway program, simulated printers): a setup
// link signs in and leaves no token in the address bar; a printer out of
// paper turns red within 5 s; a flagged ticket appears in the cross-store
// queue and one click on make-up print puts exactly one more ticket on
// paper; the search shows the ticket's history; a tenant token sees only
// its tenant's stores; nothing is requested outside the cloud.
func TestBrowser_Dashboard(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	base := node.base
	st := createNamedStore(t, base, "acme", "acme-01", "南京路店 Nanjing Rd")
	createNamedStore(t, base, "globex", "globex-01", "徐汇店 Xujiahui") // never connects
	hot, hotAddr := startSim(t)
	pass, passAddr := startSim(t)
	g := startGateway(t, st, strings.TrimPrefix(base, "http://"), map[string]string{"hot-1": hotAddr, "pass-1": passAddr})
	g.dbURL = dbURL
	waitSynced(t, g, 30*time.Second)
	ctx := chromium.New(t, 1400, 1000)

	chromium.Within(t, ctx, 20*time.Second, "open the setup link",
		chromedp.Navigate(base+"/?token="+adminToken),
		chromedp.WaitVisible(`#stores [data-store="acme-01"][data-printer="hot-1"][data-status="ready"]`),
		chromedp.WaitVisible(`[data-store-row="globex-01"][data-online="false"]`))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, adminToken) || strings.Contains(loc, "token") {
		t.Fatalf("the token stayed in the address bar: %s", loc)
	}
	if html := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, adminToken) {
		t.Fatal("the page shows the token")
	}

	// Out of paper with a ticket waiting: red within 5 s.
	hot.SetFault(printersim.FaultPaperEnd)
	postOrder(t, g.base, "pe-1", "hot")
	start := time.Now()
	chromium.Within(t, ctx, 5*time.Second, "printer shown out of paper",
		chromedp.WaitVisible(`#printers [data-store="acme-01"][data-printer="hot-1"][data-status="paper_end"].bad`),
		chromedp.WaitVisible(`#stores [data-store="acme-01"][data-printer="hot-1"][data-status="paper_end"].bad`))
	t.Logf("printer red on the dashboard %s after the order", time.Since(start).Round(time.Millisecond))
	hot.SetFault(printersim.FaultNone)
	waitPaper(t, hot, 1, 10*time.Second)
	chromium.Within(t, ctx, 5*time.Second, "printer shown ready again",
		chromedp.WaitVisible(`#stores [data-store="acme-01"][data-printer="hot-1"][data-status="ready"].ok`),
		chromedp.WaitNotPresent(`#printers [data-printer="hot-1"]`))

	// A flagged ticket in the queue; one click, exactly one more ticket.
	pass.SetFault(printersim.FaultLostAck)
	postOrder(t, g.base, "mu-1", "pass")
	const no = "order_mu-1_station_pass"
	card := `#queue [data-store="acme-01"][data-task="` + no + `"]`
	chromium.Within(t, ctx, 20*time.Second, "flagged ticket in the queue",
		chromedp.WaitVisible(card+`[data-status="attention_required"]`))
	pass.SetFault(printersim.FaultNone)
	if n := len(pass.Printed()); n != 1 {
		t.Fatalf("got %d tickets before the click, want 1", n)
	}
	// A person takes it on: marked with their name, still in the queue,
	// and in the store's alert history.
	chromium.Within(t, ctx, 15*time.Second, "acknowledge",
		chromedp.Click(card+` [data-action="ack"]`),
		chromedp.WaitVisible(`#operator`),
		chromedp.SetValue(`#operator`, "Amy"),
		chromedp.Click(`#confirm-ok`),
		chromedp.WaitVisible(card+`[data-state="acknowledged"]`),
		chromedp.WaitVisible(`[data-summary="s_acked"]`),
		chromedp.Click(`#stores [data-alerts="acme-01"]`),
		chromedp.WaitVisible(`#alert-history [data-state="acknowledged"]`))
	if got := eval[string](t, ctx, `document.querySelector('`+card+`').innerText`); !strings.Contains(got, "Amy") {
		t.Fatalf("the acknowledged card does not name Amy:\n%s", got)
	}
	// Every store, a page at a time.
	chromium.Within(t, ctx, 10*time.Second, "all stores",
		chromedp.Click(`#all-stores`),
		chromedp.WaitVisible(`[data-directory-row="acme-01"]`),
		chromedp.WaitVisible(`[data-directory-row="globex-01"][data-online="false"]`),
		chromedp.Click(`#directory-close`),
		chromedp.Click(`#alert-history-close`),
		// Back to the top: a card scrolled to under the sticky header
		// would take the header's clicks.
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	chromium.Within(t, ctx, 15*time.Second, "make-up print",
		chromedp.Click(card+` [data-action="retry"]`),
		chromedp.WaitVisible(`#operator`),
		chromedp.SetValue(`#operator`, "Amy"),
		chromedp.Click(`#confirm-ok`),
		chromedp.WaitNotPresent(card))
	got := waitPaper(t, pass, 2, 10*time.Second)
	waitCloudStatus(t, base, "acme-01", no, "done", 10*time.Second)
	waitSynced(t, g, 30*time.Second)
	if n := len(pass.Printed()); n != 2 || got[1].TaskNo != no {
		t.Fatalf("got %d tickets (%v), want exactly one more for %s", n, got, no)
	}

	// The ticket's history: both attempts, the events, who asked for it.
	hist := `[data-history="` + no + `"]`
	chromium.Within(t, ctx, 10*time.Second, "search",
		chromedp.SetValue(`#q`, "mu-1"),
		chromedp.Click(`#search-form button`),
		chromedp.WaitVisible(hist+` h3 [data-status="done"]`),
		chromedp.WaitVisible(hist+` [data-attempt="2"]`))
	text := eval[string](t, ctx, `document.querySelector('`+hist+`').innerText`)
	for _, want := range []string{"attention_required", "task.retry", "Amy", "mu-1", "pass-1"} {
		if want == "attention_required" {
			want = "needs a person" // the event, in words
		}
		if !strings.Contains(text, want) {
			t.Errorf("the history lacks %q:\n%s", want, text)
		}
	}

	// Chinese, switchable.
	chromium.Within(t, ctx, 5*time.Second, "switch language", chromedp.Click(`#lang`))
	if got := eval[string](t, ctx, `document.querySelector('#stores [data-printer="hot-1"]').textContent`); !strings.Contains(got, "就绪") {
		t.Fatalf("got printer %q after switching, want 就绪", got)
	}
	chromium.Within(t, ctx, 5*time.Second, "switch back", chromedp.Click(`#lang`))

	ext, err := chromium.ExternalRequests(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) > 0 {
		t.Fatalf("the page requested outside the cloud: %v", ext)
	}

	// A bad token is refused; a tenant token sees its tenant's stores only.
	signIn := func(token string) {
		t.Helper()
		chromium.Within(t, ctx, 10*time.Second, "sign in",
			chromedp.Click(`#signout`),
			chromedp.WaitVisible(`#token`),
			chromedp.SetValue(`#token`, token),
			chromedp.Click(`#signin-form button[type="submit"]`))
	}
	signIn("not-a-token")
	chromium.Within(t, ctx, 10*time.Second, "refused", chromedp.WaitVisible(`#signin-form`),
		chromedp.Poll[chromedp.Void](`document.querySelector("#signin-error").textContent !== ""`))
	var tok cloud.TenantToken
	if code := do(t, adminToken, "POST", base+"/v1/admin/tenants/acme/tokens", nil, &tok); code != 201 {
		t.Fatalf("tenant token: %d", code)
	}
	chromium.Within(t, ctx, 10*time.Second, "sign in as acme",
		chromedp.SetValue(`#token`, tok.Token),
		chromedp.Click(`#signin-form button[type="submit"]`),
		chromedp.WaitVisible(`[data-store-row="acme-01"]`))
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-store-row="globex-01"], [data-store="globex-01"]').length`); n != 0 {
		t.Fatalf("acme's token shows %d elements of globex's store", n)
	}
	if html := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, tok.Token) {
		t.Fatal("the page shows the tenant token")
	}

	if dir := os.Getenv("STOREPRINT_SCREENSHOTS"); dir != "" {
		dashboardScreenshots(t, ctx, base, g, hot, pass, dir)
	}
}
