package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// eposSim is a simulated Epson printer serving ePOS-Print on a loopback
// port.
type eposSim struct {
	*printersim.Printer
	url string
}

func startEPOSSim(t testing.TB, fault printersim.Fault, jobLog bool) *eposSim {
	t.Helper()
	p, url := printertest.StartEPOS(t, printersim.Options{Fault: fault}, printersim.EPOSOptions{JobLog: jobLog})
	return &eposSim{Printer: p, url: url}
}

func eposPrinter(id, url string, jobLog bool, onUncertain string) string {
	return fmt.Sprintf("id = %q\ndriver = \"epos\"\naddress = %q\njob_log = %t\non_uncertain = %q", id, url, jobLog, onUncertain)
}

type receiptJSON struct {
	Attempt       int    `json:"attempt"`
	State         string `json:"state"`
	PayloadSHA256 string `json:"payload_sha256"`
	JobID         string `json:"job_id"`
	Error         string `json:"error"`
	Settled       string `json:"settled"`
}

func getReceipts(t testing.TB, base, taskNo string) []receiptJSON {
	t.Helper()
	var rs []receiptJSON
	if code := gatewaytest.Call(t, "GET", base+"/v1/tasks/"+taskNo+"/receipts", nil, &rs); code != 200 {
		t.Fatalf("GET receipts of %s: status %d", taskNo, code)
	}
	return rs
}

// An ePOS-Print attempt whose connection was cut after the request went
// out is uncertain; a printer that keeps a job log settles it without a
// person, both ways, and without one the printer's policy applies.
func TestMain_EPOSSettle(t *testing.T) {
	t.Parallel()

	t.Run("Printed", func(t *testing.T) {
		t.Parallel()
		// The ticket printed; the connection was cut before the answer.
		ep := startEPOSSim(t, printersim.FaultLostAck, true)
		cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, ""))
		_, base := runGateway(t, cfg)
		no := "order_es-1_station_hot"
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("es-1", "hot"), nil)
		tj := gatewaytest.WaitStatus(t, base, no, "done", 10*time.Second)
		if tj.Attempt != 1 || tj.Reason != "" {
			t.Fatalf("got %+v, want done on the first attempt, nobody asked", tj)
		}
		rs := getReceipts(t, base, no)
		if len(rs) != 1 || rs[0].State != "printed" || !strings.Contains(rs[0].Settled, "printed") || rs[0].JobID == "" {
			t.Fatalf("got receipts %+v, want one printed, settled by the job log", rs)
		}
		if got := ep.Printed(); gatewaytest.CountPaper(got, no) != 1 {
			t.Fatalf("got %d tickets of %s, want 1", gatewaytest.CountPaper(got, no), no)
		}
	})

	t.Run("NotPrinted", func(t *testing.T) {
		t.Parallel()
		// The connection was cut as the ticket arrived: nothing printed;
		// the job log does not know the job, so it is tried again.
		ep := startEPOSSim(t, printersim.FaultDrop, true)
		cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, ""))
		_, base := runGateway(t, cfg)
		no := "order_es-2_station_hot"
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("es-2", "hot"), nil)
		gatewaytest.WaitStatus(t, base, no, "retry_wait", 10*time.Second)
		rs := getReceipts(t, base, no)
		if len(rs) != 1 || rs[0].State != "not_sent" || !strings.Contains(rs[0].Settled, "does not know") {
			t.Fatalf("got receipts %+v, want attempt 1 not_sent, settled by the job log", rs)
		}
		ep.SetFault(printersim.FaultNone)
		tj := gatewaytest.WaitStatus(t, base, no, "done", 20*time.Second)
		if tj.Attempt != 2 || tj.Reason != "" {
			t.Fatalf("got %+v, want done on the second attempt", tj)
		}
		if got := gatewaytest.WaitPrinted(t, ep, 1, 5*time.Second); len(got) != 1 || strings.Contains(got[0].Text, "REPRINT") {
			t.Fatalf("got %+v, want the ticket once, no REPRINT: the first never printed", got)
		}
	})

	t.Run("NoJobLog", func(t *testing.T) {
		t.Parallel()
		// Without a job log nobody knows: hold flags it for a person.
		ep := startEPOSSim(t, printersim.FaultLostAck, false)
		cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, false, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, ""))
		_, base := runGateway(t, cfg)
		no := "order_es-3_station_hot"
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("es-3", "hot"), nil)
		tj := gatewaytest.WaitStatus(t, base, no, "attention_required", 10*time.Second)
		if tj.Reason != "uncertain" {
			t.Fatalf("got %+v, want attention_required (uncertain)", tj)
		}
		rs := getReceipts(t, base, no)
		if len(rs) != 1 || !strings.Contains(rs[0].Settled, "on_uncertain applies") {
			t.Fatalf("got receipts %+v, want the receipt to say the printer could not settle it", rs)
		}
	})

	t.Run("JobLogConfiguredNoneKept", func(t *testing.T) {
		t.Parallel()
		// job_log = true on a printer that keeps none (its spooler
		// function off): the connection closed before it printed. Its
		// empty-request "success" must not settle the ticket as printed.
		ep := startEPOSSim(t, printersim.FaultDrop, false)
		cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, ""))
		_, base := runGateway(t, cfg)
		no := "order_es-4_station_hot"
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("es-4", "hot"), nil)
		tj := gatewaytest.WaitStatus(t, base, no, "attention_required", 10*time.Second)
		if tj.Reason != "uncertain" {
			t.Fatalf("got %+v, want attention_required (uncertain)", tj)
		}
		if n := len(ep.Printed()); n != 0 {
			t.Fatalf("got %d tickets on paper, want none", n)
		}
		var ps []struct {
			Confirms     string `json:"confirms"`
			ConfirmsNote string `json:"confirms_note"`
		}
		if code := gatewaytest.Call(t, "GET", base+"/v1/printers", nil, &ps); code != 200 || len(ps) != 1 {
			t.Fatalf("GET /v1/printers: %d %+v", code, ps)
		}
		if ps[0].Confirms != "epos" || ps[0].ConfirmsNote != "printer.no_job_log" {
			t.Fatalf("got confirms %q note %q, want epos and printer.no_job_log", ps[0].Confirms, ps[0].ConfirmsNote)
		}
	})
}

// A gateway killed during an ePOS-Print attempt asks the printer's job
// log at start-up instead of applying on_uncertain.
func TestProcess_EPOSRecovery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failpoint string
		paper     int    // tickets on paper when the process dies
		attempts  int    // the attempt that is done in the end
		receipt   string // the first attempt's receipt after the restart
	}{
		{"after-prepared", 0, 2, "not_sent"},
		{"before-submitted", 1, 1, "printed"},
	} {
		t.Run(tc.failpoint, func(t *testing.T) {
			t.Parallel()
			ep := startEPOSSim(t, printersim.FaultNone, true)
			cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
				[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, ""))
			p := startProc(t, cfg, "STOREPRINT_FAILPOINT="+tc.failpoint)
			no := "order_er-1_station_hot"
			// The process may stop at the failpoint before the 201 is out;
			// the order is durable before the attempt starts either way.
			if code, err := postQuiet(p.base, gatewaytest.Order("er-1", "hot")); err == nil && code != 201 {
				t.Fatalf("order: got %d, want 201", code)
			}
			p.waitExit(t, 20*time.Second)
			if tc.paper > 0 {
				gatewaytest.WaitPrinted(t, ep, tc.paper, 10*time.Second)
			}
			p2 := startProc(t, cfg)
			gatewaytest.Settle(t, p2.base, 30*time.Second)
			tj := gatewaytest.GetTask(t, p2.base, no)
			if tj.Status != "done" || tj.Attempt != tc.attempts {
				t.Fatalf("got %+v, want done on attempt %d without a person", tj, tc.attempts)
			}
			rs := getReceipts(t, p2.base, no)
			if len(rs) == 0 || rs[0].State != tc.receipt || rs[0].Settled == "" {
				t.Fatalf("got receipts %+v, want attempt 1 %s, settled by the job log", rs, tc.receipt)
			}
			if got := gatewaytest.WaitPrinted(t, ep, 1, 5*time.Second); len(got) != 1 {
				t.Fatalf("got %d tickets, want exactly 1", len(got))
			}
		})
	}
}
