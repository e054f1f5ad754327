package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// eposSim is a simulated Epson printer serving ePOS-Print on a loopback
// port.
type eposSim struct {
	*printersim.Printer
	url string
}

func startEPOSSim(t testing.TB, fault printersim.Fault, jobLog bool) *eposSim {
	t.Helper()
	p, err := printersim.New(printersim.Options{Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.ServeEPOS(ln, printersim.EPOSOptions{JobLog: jobLog}) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-served; err != nil && !errors.Is(err, printersim.ErrClosed) {
			t.Errorf("ePOS-Print simulator: %v", err)
		}
	})
	return &eposSim{Printer: p, url: "http://" + ln.Addr().String()}
}

// writeGatewayConfig writes a gateway config with the given [[printers]]
// bodies (every key but the timeouts) and one station per printer,
// station i printing on printers[i].
func writeGatewayConfig(t testing.TB, dataDir string, printers []string, stations []string, extra string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = \"store-test\"\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n%s", dataDir, token, extra)
	for _, p := range printers {
		fmt.Fprintf(&b, "\n[[printers]]\n%s\nconnect_timeout = \"1s\"\nconfirm_timeout = \"2s\"\n", strings.TrimSpace(p))
	}
	for _, s := range stations {
		fmt.Fprintf(&b, "\n[[stations]]\n%s\n", strings.TrimSpace(s))
	}
	path := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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
	if code := call(t, "GET", base+"/v1/tasks/"+taskNo+"/receipts", nil, &rs); code != 200 {
		t.Fatalf("GET receipts of %s: status %d", taskNo, code)
	}
	return rs
}

func waitEPOSPrinted(t testing.TB, s *eposSim, n int, timeout time.Duration) []printersim.Ticket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	got, err := s.WaitPrinted(ctx, n)
	if err != nil {
		t.Fatalf("waiting for %d tickets: %v", n, err)
	}
	return got
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
		cfg := writeGatewayConfig(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, "")
		_, base := runGateway(t, cfg)
		no := "order_es-1_station_hot"
		call(t, "POST", base+"/v1/orders", order("es-1", "hot"), nil)
		tj := waitStatus(t, base, no, "done", 10*time.Second)
		if tj.Attempt != 1 || tj.Reason != "" {
			t.Fatalf("got %+v, want done on the first attempt, nobody asked", tj)
		}
		rs := getReceipts(t, base, no)
		if len(rs) != 1 || rs[0].State != "printed" || !strings.Contains(rs[0].Settled, "printed") || rs[0].JobID == "" {
			t.Fatalf("got receipts %+v, want one printed, settled by the job log", rs)
		}
		if got := ep.Printed(); countPaper(got, no) != 1 {
			t.Fatalf("got %d tickets of %s, want 1", countPaper(got, no), no)
		}
	})

	t.Run("NotPrinted", func(t *testing.T) {
		t.Parallel()
		// The connection was cut as the ticket arrived: nothing printed;
		// the job log does not know the job, so it is tried again.
		ep := startEPOSSim(t, printersim.FaultDrop, true)
		cfg := writeGatewayConfig(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, "")
		_, base := runGateway(t, cfg)
		no := "order_es-2_station_hot"
		call(t, "POST", base+"/v1/orders", order("es-2", "hot"), nil)
		waitStatus(t, base, no, "retry_wait", 10*time.Second)
		rs := getReceipts(t, base, no)
		if len(rs) != 1 || rs[0].State != "not_sent" || !strings.Contains(rs[0].Settled, "does not know") {
			t.Fatalf("got receipts %+v, want attempt 1 not_sent, settled by the job log", rs)
		}
		ep.SetFault(printersim.FaultNone)
		tj := waitStatus(t, base, no, "done", 20*time.Second)
		if tj.Attempt != 2 || tj.Reason != "" {
			t.Fatalf("got %+v, want done on the second attempt", tj)
		}
		if got := waitEPOSPrinted(t, ep, 1, 5*time.Second); len(got) != 1 || strings.Contains(got[0].Text, "REPRINT") {
			t.Fatalf("got %+v, want the ticket once, no REPRINT: the first never printed", got)
		}
	})

	t.Run("NoJobLog", func(t *testing.T) {
		t.Parallel()
		// Without a job log nobody knows: hold flags it for a person.
		ep := startEPOSSim(t, printersim.FaultLostAck, false)
		cfg := writeGatewayConfig(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, false, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, "")
		_, base := runGateway(t, cfg)
		no := "order_es-3_station_hot"
		call(t, "POST", base+"/v1/orders", order("es-3", "hot"), nil)
		tj := waitStatus(t, base, no, "attention_required", 10*time.Second)
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
		cfg := writeGatewayConfig(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
			[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, "")
		_, base := runGateway(t, cfg)
		no := "order_es-4_station_hot"
		call(t, "POST", base+"/v1/orders", order("es-4", "hot"), nil)
		tj := waitStatus(t, base, no, "attention_required", 10*time.Second)
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
		if code := call(t, "GET", base+"/v1/printers", nil, &ps); code != 200 || len(ps) != 1 {
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
			cfg := writeGatewayConfig(t, t.TempDir(), []string{eposPrinter("ep-1", ep.url, true, "hold")},
				[]string{`name = "hot"` + "\n" + `printer = "ep-1"`}, "")
			p := startProc(t, cfg, "STOREPRINT_FAILPOINT="+tc.failpoint)
			no := "order_er-1_station_hot"
			// The process may stop at the failpoint before the 201 is out;
			// the order is durable before the attempt starts either way.
			if code, err := postQuiet(p.base, order("er-1", "hot")); err == nil && code != 201 {
				t.Fatalf("order: got %d, want 201", code)
			}
			p.waitExit(t, 20*time.Second)
			if tc.paper > 0 {
				waitEPOSPrinted(t, ep, tc.paper, 10*time.Second)
			}
			p2 := startProc(t, cfg)
			settle(t, p2.base, 30*time.Second)
			tj := getTask(t, p2.base, no)
			if tj.Status != "done" || tj.Attempt != tc.attempts {
				t.Fatalf("got %+v, want done on attempt %d without a person", tj, tc.attempts)
			}
			rs := getReceipts(t, p2.base, no)
			if len(rs) == 0 || rs[0].State != tc.receipt || rs[0].Settled == "" {
				t.Fatalf("got receipts %+v, want attempt 1 %s, settled by the job log", rs, tc.receipt)
			}
			if got := waitEPOSPrinted(t, ep, 1, 5*time.Second); len(got) != 1 {
				t.Fatalf("got %d tickets, want exactly 1", len(got))
			}
		})
	}
}
