package printersim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

func TestPrinter_Handler(t *testing.T) {
	t.Parallel()
	setupControl := func(t *testing.T) (*printersim.Printer, string, string) {
		t.Helper()
		p, addr := printertest.StartTCP(t, printersim.Options{})
		srv := httptest.NewServer(p.Handler())
		t.Cleanup(srv.Close)
		return p, addr, srv.URL
	}
	do := func(t *testing.T, method, url, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("got Content-Type %q, want application/json", ct)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("body %q is not a JSON object: %v", b, err)
		}
		return resp.StatusCode, v
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p, _, url := setupControl(t)
		if code, v := do(t, "GET", url+"/fault", ""); code != 200 || v["fault"] != "none" {
			t.Fatalf("GET: got %d %v, want 200 none", code, v)
		}
		if code, v := do(t, "PUT", url+"/fault", `{"fault":"paper_end"}`); code != 200 || v["fault"] != "paper_end" {
			t.Fatalf("PUT: got %d %v, want 200 paper_end", code, v)
		}
		if got := p.Fault(); got != printersim.FaultPaperEnd {
			t.Fatalf("got fault %v, want paper_end", got)
		}
		if code, v := do(t, "POST", url+"/fault", `{"fault":"none"}`); code != 200 || v["fault"] != "none" {
			t.Fatalf("POST: got %d %v, want 200 none", code, v)
		}
	})

	t.Run("Printed", func(t *testing.T) {
		t.Parallel()
		_, addr, url := setupControl(t)
		c := dial(t, addr)
		c.send(append(ticket(t, "order_1_station_hot"), escpos.ProcessIDRequest("0001")...))
		c.confirmation()
		resp, err := http.Get(url + "/printed")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got []printersim.Ticket
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].TaskNo != "order_1_station_hot" {
			t.Fatalf("got %+v, want the printed ticket", got)
		}
	})

	t.Run("Err", func(t *testing.T) {
		t.Parallel()
		p, _, url := setupControl(t)
		tests := []struct {
			name, method, path, body string
			code                     int
			inError                  string
		}{
			{"UnknownFault", "PUT", "/fault", `{"fault":"jammed"}`, 400, `unknown fault "jammed"`},
			{"Malformed", "PUT", "/fault", `{"fault":`, 400, "malformed JSON"},
			{"UnknownField", "PUT", "/fault", `{"fualt":"offline"}`, 400, "fualt"},
			{"Missing", "POST", "/fault", `{}`, 400, `"fault" is required`},
			{"Method", "DELETE", "/fault", "", 405, "DELETE"},
			{"Path", "GET", "/faults", "", 404, "/faults"},
		}
		for _, tt := range tests {
			code, v := do(t, tt.method, url+tt.path, tt.body)
			msg, _ := v["error"].(string)
			if code != tt.code || !strings.Contains(msg, tt.inError) {
				t.Errorf("%s: got %d %q, want %d with %q", tt.name, code, msg, tt.code, tt.inError)
			}
		}
		if got := p.Fault(); got != printersim.FaultNone {
			t.Fatalf("got fault %v after bad requests, want it unchanged", got)
		}
	})
}
