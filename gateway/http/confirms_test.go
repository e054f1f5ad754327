package http_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// Printers as kitchens buy them: an Epson TM (answers GS ( H), a low-cost
// ESC/POS printer (answers GS r, not GS ( H) and one that answers only
// DLE EOT, each the printer of its own station, with confirm left at its
// default (auto). Every ticket comes out once and is done without a
// person; each printer says how it confirms, and each printed receipt
// names its method.
func TestServer_PrinterModels(t *testing.T) {
	t.Parallel()
	models := []struct {
		station string
		model   printersim.Model
		want    string
	}{
		{"hot", printersim.ModelTM, "process_id"},
		{"bar", printersim.ModelBasic, "transmit_status"},
		{"cold", printersim.ModelDumb, "status"},
	}
	var printers, stations []string
	sims := map[string]*printersim.Printer{}
	for _, m := range models {
		sim, addr := printertest.StartTCP(t, printersim.Options{Model: m.model})
		sims[m.station] = sim
		printers = append(printers, fmt.Sprintf("id = %q\ndriver = \"tcp\"\naddress = %q", m.station+"-1", addr))
		stations = append(stations, fmt.Sprintf("name = %q\nprinter = %q", m.station, m.station+"-1"))
	}
	cfg := gatewaytest.ConfigOf(t, t.TempDir(), printers, stations, "")
	_, base := runGateway(t, cfg)

	const orders = 20 // 60 tickets
	for i := range orders {
		if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(fmt.Sprintf("m-%d", i), "hot", "bar", "cold"), nil); code != 201 {
			t.Fatalf("order %d: got %d, want 201", i, code)
		}
	}
	for _, m := range models {
		for i := range orders {
			taskNo := fmt.Sprintf("order_m-%d_station_%s", i, m.station)
			gatewaytest.WaitStatus(t, base, taskNo, "done", 2*time.Minute)
			var receipts []struct {
				State       string `json:"state"`
				ConfirmedBy string `json:"confirmed_by"`
			}
			if code := gatewaytest.Call(t, "GET", base+"/v1/tasks/"+taskNo+"/receipts", nil, &receipts); code != 200 {
				t.Fatalf("GET receipts of %s: %d", taskNo, code)
			}
			printed := 0
			for _, r := range receipts {
				if r.State == "printed" || r.State == "confirmed" {
					printed++
					if r.ConfirmedBy != m.want {
						t.Errorf("%s: got a printed receipt confirmed_by %q, want %q", taskNo, r.ConfirmedBy, m.want)
					}
				}
			}
			if printed != 1 {
				t.Errorf("%s: got %d printed receipts (%+v), want 1", taskNo, printed, receipts)
			}
		}
		got := gatewaytest.WaitPrinted(t, sims[m.station], orders, 10*time.Second)
		if len(got) != orders {
			t.Errorf("station %s: got %d tickets on paper, want %d", m.station, len(got), orders)
		}
		for i := range orders {
			if no := fmt.Sprintf("order_m-%d_station_%s", i, m.station); gatewaytest.CountPaper(got, no) != 1 {
				t.Errorf("station %s: got %d tickets of %s, want exactly 1", m.station, gatewaytest.CountPaper(got, no), no)
			}
		}
	}

	var ps []struct {
		ID           string `json:"id"`
		Confirms     string `json:"confirms"`
		ConfirmsNote string `json:"confirms_note"`
		InTrouble    bool   `json:"in_trouble"`
	}
	if code := gatewaytest.Call(t, "GET", base+"/v1/printers", nil, &ps); code != 200 {
		t.Fatalf("GET /v1/printers: %d", code)
	}
	confirms := map[string]string{}
	for _, p := range ps {
		confirms[p.ID] = p.Confirms
		if p.InTrouble {
			t.Errorf("printer %s is in trouble, want none", p.ID)
		}
		if wantNote := p.ID == "cold-1"; (p.ConfirmsNote != "") != wantNote {
			t.Errorf("printer %s: got confirms_note %q, want one only for the printer confirmed by status", p.ID, p.ConfirmsNote)
		}
	}
	for _, m := range models {
		if got := confirms[m.station+"-1"]; got != m.want {
			t.Errorf("printer %s-1 (%s): got confirms %q, want %q", m.station, m.model, got, m.want)
		}
	}
	var attention []gatewaytest.TaskJSON
	if code := gatewaytest.Call(t, "GET", base+"/v1/tasks?status=attention_required", nil, &attention); code != 200 || len(attention) != 0 {
		t.Errorf("got %d, %d tasks needing a person, want none", code, len(attention))
	}
}

// The LAN page says which printer is confirmed by its status only, in a
// real browser; a TM printer's card says nothing of it.
func TestBrowser_LANPageConfirms(t *testing.T) {
	t.Parallel()
	_, tmAddr := printertest.StartTCP(t, printersim.Options{Model: printersim.ModelTM})
	_, dumbAddr := printertest.StartTCP(t, printersim.Options{Model: printersim.ModelDumb})
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: tmAddr}, {ID: "cold-1", Addr: dumbAddr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}})
	_, base := runGateway(t, cfg)
	ctx := chromium.New(t, 1280, 900)
	chromium.Within(t, ctx, 20*time.Second, "open the page",
		chromedp.Navigate(base+"/?token="+gatewaytest.Token),
		chromedp.WaitVisible(`[data-printer="cold-1"] [data-confirms="status"]`))
	text, err := chromedp.Run(ctx, chromedp.Text(`[data-printer="cold-1"] [data-confirms="status"]`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "status only") {
		t.Fatalf("got %q on the status-confirmed printer's card, want it to say it confirms by its status only", text)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-printer="hot-1"] [data-confirms]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("got %d confirmation notes on the TM printer's card, want none", n)
	}
}
