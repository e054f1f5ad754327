package http_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// technical is text that belongs behind the "details" toggle, never in the
// words a cook reads.
var technical = regexp.MustCompile(`(?i)print uncertain|i/o timeout|read tcp|write tcp|127\.0\.0\.1|connection reset|broken pipe|\bEOF\b|fenced|confirmation [0-9]+|dial tcp`)

// The LAN page with printers in both trouble states, on a kitchen tablet on
// its side (1280×800): one printer cuts every ticket off, the other never
// confirms. The printers in trouble and the flagged tickets are on the
// first screen, in words from the catalogue with how long each ticket has
// waited, and no raw error text is visible until "details" is opened.
func TestBrowser_LANPageTrouble(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultDrop), gatewaytest.StartSim(t, printersim.FaultLostAck)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "pass-1", Addr: pass.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	for _, id := range []string{"t1", "t2", "t3", "t4"} {
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot", "pass"), nil)
	}
	for _, id := range []string{"hot-1", "pass-1"} {
		gatewaytest.WaitPrinter(t, base, id, 30*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.InTrouble })
	}

	ctx := chromium.New(t, 1280, 800)
	chromium.Within(t, ctx, 20*time.Second, "open the page in trouble",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-printer="hot-1"][data-trouble="true"]`),
		chromedp.WaitVisible(`[data-printer="pass-1"][data-trouble="true"]`),
		chromedp.WaitVisible(`#alerts [data-status="attention_required"]`))
	// A printer in trouble that answers a probe is tried again and is
	// back in trouble a moment later: wait for both to say so at once.
	var says []string
	for _, w := range []storeprint.Word{storeprint.WordPrinterCutsOff, storeprint.WordPrinterNoConfirm, storeprint.WordTaskUncertain} {
		says = append(says, fmt.Sprintf("document.body.innerText.includes(%q)", storeprint.Say(w, "en")))
	}
	chromium.Within(t, ctx, 20*time.Second, "both printers in trouble at once",
		chromedp.Poll[chromedp.Void](strings.Join(says, " && ")))

	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if m := technical.FindString(text); m != "" {
		t.Errorf("the page shows raw error text %q:\n%s", m, text)
	}
	for _, w := range []storeprint.Word{storeprint.WordPrinterCutsOff, storeprint.WordPrinterNoConfirm, storeprint.WordTaskUncertain} {
		if s := storeprint.Say(w, "en"); !strings.Contains(text, s) {
			t.Errorf("the page does not say %q", s)
		}
	}
	if !regexp.MustCompile(`waiting \d+ (s|min)`).MatchString(text) {
		t.Errorf("no ticket shows how long it has waited:\n%s", text)
	}

	// Above the fold: the first flagged ticket and both printers in trouble.
	below, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`
		[document.querySelector('#alerts .card'), ...document.querySelectorAll('[data-trouble="true"]')]
			.filter(e => e.getBoundingClientRect().bottom > window.innerHeight)
			.map(e => e.dataset.printer || e.dataset.task)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(below) > 0 {
		t.Errorf("below the fold at 1280×800: %v", below)
	}

	// The technical side is one click away, and stays open while the page
	// redraws on the next change.
	chromium.Within(t, ctx, 5*time.Second, "open details", chromedp.Click(`[data-printer="hot-1"] details summary`),
		chromedp.WaitVisible(`[data-printer="hot-1"] details[open] .tech`))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('[data-printer="hot-1"] details').dataset.drawn = "before", true)`)); err != nil {
		t.Fatal(err)
	}
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("t5", "hot"), nil)
	chromium.Within(t, ctx, 20*time.Second, "the page redrawn", chromedp.WaitReady(`[data-printer="hot-1"] details:not([data-drawn])`))
	if text, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-printer="hot-1"] details[open]')?.innerText ?? "closed"`)); err != nil {
		t.Fatal(err)
	}
	if !technical.MatchString(text) {
		t.Errorf("the details of hot-1, opened before the page redrew, show %q, want them open with technical text", text)
	}

	if dir := os.Getenv("STOREPRINT_SCREENSHOTS"); dir != "" {
		for _, size := range []struct {
			name string
			w, h int64
		}{{"1280x800", 1280, 800}, {"390x844", 390, 844}} {
			png := chromium.Screenshot(t, ctx, base+"/", size.w, size.h, `[data-trouble="true"]`)
			if err := os.WriteFile(dir+"/lan-page-trouble-"+size.name+".png", png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The LAN page with a printer in trouble whose backup is out of paper, on
// a kitchen tablet (1280×800) and on a phone (390×844): it says that no
// printer can take the tickets, never that they print on the backup; it
// names printers and stations as such; it says in one line each what
// "Print again" and "Copy" do; the tickets that need a person are on the
// first screen. Once the tickets moved to the backup and it runs out of
// paper in turn, the failover banner says so too.
func TestBrowser_LANPageBackupTrouble(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultLostAck), gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr, Backup: "pass-1"}, {ID: "pass-1", Addr: pass.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	for _, id := range []string{"b1", "b2", "b3", "b4"} {
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot", "pass"), nil)
	}
	gatewaytest.WaitPrinter(t, base, "hot-1", 30*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.InTrouble && p.NoBackup })

	look := func(t *testing.T, ctx context.Context) string {
		t.Helper()
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		if err != nil {
			t.Fatal(err)
		}
		if m := technical.FindString(text); m != "" {
			t.Errorf("the page shows raw error text %q:\n%s", m, text)
		}
		return text
	}
	sizes := []struct {
		name string
		w, h int
	}{{"1280x800", 1280, 800}, {"390x844", 390, 844}}
	for _, size := range sizes {
		t.Run("NoBackupReady"+size.name, func(t *testing.T) {
			ctx := chromium.New(t, size.w, size.h)
			chromium.Within(t, ctx, 20*time.Second, "open the page",
				chromedp.EmulateViewport(int64(size.w), int64(size.h)),
				chromedp.Navigate(base+"/?token="+gatewaytest.Token),
				chromedp.WaitVisible(`[data-no-backup="hot-1"]`),
				chromedp.WaitVisible(`#alerts [data-status="attention_required"]`))
			text := look(t, ctx)
			for _, want := range []string{
				"No printer can take the tickets of printer hot-1",
				"Printer pass-1", "Out of paper", "Printer hot-1", storeprint.Say(storeprint.WordPrinterNoConfirm, "en"),
				"Station hot → printer hot-1", "Station pass → printer pass-1",
				"Print again: for a ticket that did not come out", "Copy: for a ticket that came out and is needed once more",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the page does not say %q:\n%s", want, text)
				}
			}
			for _, bad := range []string{"now print on", "check the pass"} {
				if strings.Contains(text, bad) {
					t.Errorf("the page says %q:\n%s", bad, text)
				}
			}
			if size.w < 900 {
				// The printers come after the tickets on a phone: the
				// ones in trouble no banner speaks of are named above
				// them.
				for _, want := range []string{"Printer pass-1: Out of paper"} {
					if !strings.Contains(text, want) {
						t.Errorf("the page does not say %q:\n%s", want, text)
					}
				}
			}
			below, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`
				[document.querySelector('#alerts .card'), document.querySelector('[data-no-backup="hot-1"]'),
				 ...(window.innerWidth < 900 ? document.querySelectorAll('[data-summary]') : [])]
					.filter(e => e.getBoundingClientRect().bottom > window.innerHeight)
					.map(e => e.dataset.task || e.dataset.summary || "the banner")`))
			if err != nil {
				t.Fatal(err)
			}
			if len(below) > 0 {
				t.Errorf("below the fold at %s: %v", size.name, below)
			}
		})
	}

	// The backup gets paper: the tickets move there. Then it runs out
	// again: the banner says the backup cannot print either.
	pass.SetFault(printersim.FaultNone)
	gatewaytest.WaitPrinter(t, base, "hot-1", 30*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Failover != nil && p.Failover.Active })
	pass.SetFault(printersim.FaultPaperEnd)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("b5", "hot"), nil)
	gatewaytest.WaitPrinter(t, base, "pass-1", 30*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "paper_end" })
	for _, size := range sizes {
		t.Run("BackupFault"+size.name, func(t *testing.T) {
			ctx := chromium.New(t, size.w, size.h)
			chromium.Within(t, ctx, 20*time.Second, "open the page",
				chromedp.EmulateViewport(int64(size.w), int64(size.h)),
				chromedp.Navigate(base+"/?token="+gatewaytest.Token),
				chromedp.WaitVisible(`[data-failover="hot-1"] [data-backup-fault="pass-1"]`))
			text := look(t, ctx)
			for _, want := range []string{
				"Printer hot-1 failed: the tickets of station hot now print on printer pass-1",
				"Printer pass-1 cannot print either: Out of paper",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the page does not say %q:\n%s", want, text)
				}
			}
			below, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`
				[document.querySelector('#alerts .card'), document.querySelector('[data-backup-fault="pass-1"]')]
					.filter(e => e.getBoundingClientRect().bottom > window.innerHeight)
					.map(e => e.dataset.task || "the backup's fault")`))
			if err != nil {
				t.Fatal(err)
			}
			if len(below) > 0 {
				t.Errorf("below the fold at %s: %v", size.name, below)
			}
			if dir := os.Getenv("STOREPRINT_SCREENSHOTS"); dir != "" {
				png := chromium.Screenshot(t, ctx, base+"/", int64(size.w), int64(size.h), `[data-backup-fault="pass-1"]`)
				if err := os.WriteFile(dir+"/lan-page-backup-trouble-"+size.name+".png", png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
