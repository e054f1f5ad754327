package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// technical is text that belongs behind the "details" toggle, never in the
// words a person at HQ reads first.
var technical = regexp.MustCompile(`(?i)print uncertain|i/o timeout|read tcp|write tcp|127\.0\.0\.1|connection reset|broken pipe|\bEOF\b|fenced|dial tcp|wait for confirmation`)

// The HQ dashboard with a store's printers in both trouble states (one
// cuts every ticket off, the other never confirms), on the whole chain:
// the printers and the flagged tickets say so in the catalogue's words,
// each ticket with how long ago it was flagged, with no raw error text in
// view; on a phone (390×844) nothing is wider than the screen and the
// tickets that need a person start on the first screen.
func TestBrowser_DashboardTrouble(t *testing.T) {
	t.Parallel()
	node := startCloud(t, pgtest.NewDatabase(t), "127.0.0.1:0")
	base := node.base
	st := createNamedStore(t, base, "acme", "acme-01", "南京路店 Nanjing Rd")
	hot, hotAddr := startSim(t)
	pass, passAddr := startSim(t)
	hot.SetFault(printersim.FaultDrop)
	pass.SetFault(printersim.FaultLostAck)
	g := startGateway(t, st, strings.TrimPrefix(base, "http://"), map[string]string{"hot-1": hotAddr, "pass-1": passAddr})
	waitSynced(t, g, 30*time.Second)
	for _, id := range []string{"tr-1", "tr-2", "tr-3"} {
		postOrder(t, g.base, id, "hot", "pass")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var d struct {
			Printers []struct {
				ID   string          `json:"printer_id"`
				Word storeprint.Word `json:"word"`
			} `json:"printers_in_trouble"`
		}
		do(t, adminToken, "GET", base+"/v1/dashboard", nil, &d)
		words := map[string]storeprint.Word{}
		for _, p := range d.Printers {
			words[p.ID] = p.Word
		}
		if words["hot-1"] == storeprint.WordPrinterCutsOff && words["pass-1"] == storeprint.WordPrinterNoConfirm {
			break
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(d)
			t.Fatalf("the dashboard does not show both printers in trouble: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx := chromium.New(t, 1280, 800)
	chromium.Within(t, ctx, 20*time.Second, "open the dashboard",
		chromedp.Navigate(base+"/?token="+adminToken),
		chromedp.WaitVisible(`#printers [data-printer="hot-1"]`),
		chromedp.WaitVisible(`#printers [data-printer="pass-1"]`),
		chromedp.WaitVisible(`#queue [data-status="attention_required"]`))
	text := eval[string](t, ctx, `document.body.innerText`)
	if m := technical.FindString(text); m != "" {
		t.Errorf("the dashboard shows raw error text %q:\n%s", m, text)
	}
	for _, w := range []storeprint.Word{storeprint.WordPrinterCutsOff, storeprint.WordPrinterNoConfirm, storeprint.WordTaskUncertain} {
		if s := storeprint.Say(w, "en"); !strings.Contains(text, s) {
			t.Errorf("the dashboard does not say %q", s)
		}
	}
	if !regexp.MustCompile(`flagged \d+ (s|min) ago`).MatchString(text) {
		t.Errorf("no flagged ticket says how long ago it was flagged:\n%s", text)
	}
	// The technical side is one click away, and stays open while the
	// dashboard redraws on its next read.
	chromium.Within(t, ctx, 5*time.Second, "open details", chromedp.Click(`#queue [data-status="attention_required"] details summary`),
		chromedp.WaitVisible(`#queue [data-status="attention_required"] details[open] .tech`))
	key := eval[string](t, ctx, `(() => { const d = document.querySelector('#queue [data-status="attention_required"] details[open]'); d.dataset.drawn = "before"; return d.dataset.details })()`)
	chromium.Within(t, ctx, 20*time.Second, "the dashboard redrawn", chromedp.WaitNotPresent(`#queue details[data-drawn]`))
	if tech := eval[string](t, ctx, `document.querySelector('#queue details[open][data-details="`+key+`"]')?.innerText ?? "closed"`); !technical.MatchString(tech) {
		t.Errorf("the details of %s, opened before the dashboard redrew, show %q, want them open with technical text", key, tech)
	}
	chromium.Within(t, ctx, 5*time.Second, "close details for the screenshots", chromedp.Click(`#queue details[open][data-details="`+key+`"] summary`))

	dir := os.Getenv("STOREPRINT_SCREENSHOTS")
	save := func(name string, png []byte) {
		if dir == "" {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	save("dashboard-trouble-1280x800.png", chromium.Screenshot(t, ctx, base+"/", 1280, 800, `#queue [data-status="attention_required"]`))
	below := eval[[]string](t, ctx, `[document.querySelector('#queue .card'), ...document.querySelectorAll('#printers .card')]
		.filter(e => e.getBoundingClientRect().bottom > window.innerHeight).map(e => e.dataset.printer || e.dataset.task)`)
	if len(below) > 0 {
		t.Errorf("below the fold at 1280×800: %v", below)
	}

	png := chromium.Screenshot(t, ctx, base+"/", 390, 844, `#queue [data-status="attention_required"]`)
	if wide := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); wide > 0 {
		t.Errorf("at 390 px the page is %d px wider than the screen: %s", wide, eval[string](t, ctx,
			`[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className).join(', ')`))
	}
	if top := eval[float64](t, ctx, `document.querySelector('#queue .card').getBoundingClientRect().top`); top > 844*0.6 {
		t.Errorf("at 390×844 the first ticket that needs a person starts %.0f px down: the counts fill the first screen", top)
	}
	save("dashboard-trouble-390x844.png", png)
}
