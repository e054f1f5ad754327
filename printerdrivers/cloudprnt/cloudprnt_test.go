package cloudprnt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/starprnt"
)

// poll is the simulated printers' poll interval in the tests.
const poll = 50 * time.Millisecond

var macs atomic.Uint32

// newMAC returns a MAC address no other test uses.
func newMAC() string {
	n := macs.Add(1)
	return strings.ToLower(strings.Join([]string{"00", "11", "62", hex2(n >> 16), hex2(n >> 8), hex2(n)}, ":"))
}

func hex2(n uint32) string {
	return string("0123456789abcdef"[n>>4&0xf]) + string("0123456789abcdef"[n&0xf])
}

func harness(emulation string) printertest.Harness {
	return printertest.Harness{
		Open: func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, printertest.Sim) {
			srv, url := start(t)
			mac := newMAC()
			p := open(t, srv, cfg, mac, emulation, "")
			sim := printertest.StartCloudPRNT(t, url, opts, printersim.CloudPRNTOptions{MAC: mac, PollInterval: poll, Emulation: emulation})
			return p, sim
		},
		Unreachable: func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer {
			srv, _ := start(t)
			return open(t, srv, cfg, newMAC(), emulation, "") // nothing ever polls
		},
		LastLine: func(t *testing.T, payload []byte) string { return lastLine(t, emulation, payload) },
	}
}

func start(t *testing.T) (*cloudprnt.Server, string) {
	srv := cloudprnt.NewServer(cloudprnt.ServerOptions{})
	return srv, printertest.ServeHTTP(t, srv)
}

func open(t *testing.T, srv *cloudprnt.Server, cfg gateway.PrinterConfig, mac, emulation, password string) *cloudprnt.Printer {
	t.Helper()
	cfg.Options = cloudprnt.Options{MAC: mac, Emulation: emulation, Password: password}
	p, err := cloudprnt.New(cfg, "store-001", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func lastLine(t *testing.T, emulation string, payload []byte) string {
	t.Helper()
	var lines []string
	if emulation == "escpos" {
		d, err := escpos.NewDecoder(escpos.GB18030)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range d.Decode(payload) {
			if ev.Kind == escpos.EventLine {
				lines = append(lines, ev.Text)
			}
		}
	} else {
		d, err := starprnt.NewDecoder("gb18030")
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range d.Decode(payload) {
			if ev.Kind == starprnt.EventLine {
				lines = append(lines, ev.Text)
			}
		}
	}
	return printertest.LastText(lines)
}

func TestPrinter_Conformance(t *testing.T) {
	t.Parallel()
	t.Run("StarPRNT", func(t *testing.T) {
		t.Parallel()
		printertest.Exercise(t, harness("starprnt"))
	})
	t.Run("ESCPOS", func(t *testing.T) {
		t.Parallel()
		printertest.Exercise(t, harness("escpos"))
	})
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestServer(t *testing.T) {
	t.Parallel()
	post := func(t *testing.T, url string, body any, user, pass string) int {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
		if pass != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	t.Run("ErrUnknownMAC", func(t *testing.T) {
		t.Parallel()
		srv, url := start(t)
		open(t, srv, printertest.Config(time.Second), "00:11:62:00:00:01", "starprnt", "")
		// The same answer as a wrong password: it does not tell which
		// MAC addresses are configured.
		if code := post(t, url, protocol.Poll{PrinterMAC: "00:11:62:00:00:02", StatusCode: "200 OK"}, "star", "guess"); code != http.StatusUnauthorized {
			t.Fatalf("got %d, want 401 for a MAC no printer has", code)
		}
	})

	t.Run("Password", func(t *testing.T) {
		t.Parallel()
		srv, url := start(t)
		mac := "00:11:62:00:00:03"
		open(t, srv, printertest.Config(time.Second), mac, "starprnt", "s3cret")
		poll := protocol.Poll{PrinterMAC: mac, StatusCode: "200 OK"}
		if code := post(t, url, poll, "", ""); code != http.StatusUnauthorized {
			t.Fatalf("got %d without credentials, want 401", code)
		}
		if code := post(t, url, poll, "star", "wrong"); code != http.StatusUnauthorized {
			t.Fatalf("got %d with a wrong password, want 401", code)
		}
		if code := post(t, url, poll, "star", "s3cret"); code != http.StatusOK {
			t.Fatalf("got %d with the password, want 200", code)
		}
	})

	t.Run("ErrBadPoll", func(t *testing.T) {
		t.Parallel()
		_, url := start(t)
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"printerMAC":`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e map[string]string
		if resp.StatusCode != http.StatusBadRequest || json.NewDecoder(resp.Body).Decode(&e) != nil || e["error"] == "" {
			t.Fatalf("got %d %v, want 400 with an error naming the problem", resp.StatusCode, e)
		}
	})

	t.Run("PasswordPrints", func(t *testing.T) {
		t.Parallel()
		srv, url := start(t)
		mac := newMAC()
		p := open(t, srv, printertest.Config(5*time.Second), mac, "starprnt", "s3cret")
		sim := printertest.StartCloudPRNT(t, url, printersim.Options{},
			printersim.CloudPRNTOptions{MAC: mac, PollInterval: poll, User: "star", Password: "s3cret"})
		if err := p.Print(waitCtx(t), &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0042"}); err != nil {
			t.Fatal(err)
		}
		if got := sim.Printed(); len(got) != 1 || got[0].TaskNo != "order_1_station_hot" {
			t.Fatalf("got %+v, want the ticket once", got)
		}
	})

	t.Run("Silent", func(t *testing.T) {
		t.Parallel()
		// A printer that stops polling is offline after three intervals
		// (at least a second each), on the server's clock.
		var now atomic.Int64
		now.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
		srv := cloudprnt.NewServer(cloudprnt.ServerOptions{Now: func() time.Time { return time.Unix(0, now.Load()) }})
		url := printertest.ServeHTTP(t, srv)
		mac := newMAC()
		p := open(t, srv, printertest.Config(time.Second), mac, "starprnt", "")
		sim := printertest.StartCloudPRNT(t, url, printersim.Options{}, printersim.CloudPRNTOptions{MAC: mac, PollInterval: poll})
		sim.SetFault(printersim.FaultNone) // a second poll: the interval is known
		sim.SetFault(printersim.FaultDown)
		for _, tt := range []struct {
			after time.Duration
			want  storeprint.PrinterState
		}{{0, storeprint.PrinterReady}, {2900 * time.Millisecond, storeprint.PrinterReady}, {200 * time.Millisecond, storeprint.PrinterOffline}} {
			now.Add(int64(tt.after))
			if st, err := p.Status(waitCtx(t)); err != nil || st.State != tt.want {
				t.Fatalf("after %s more: got %+v, %v; want %s", tt.after, st, err, tt.want)
			}
		}
	})
}

func TestResult(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code  string
		want  protocol.Outcome
		state storeprint.PrinterState
	}{
		{"200 OK", protocol.Printed, storeprint.PrinterReady},
		{"211 Paper low", protocol.Printed, storeprint.PrinterReady},
		{"510 Incompatible media type", protocol.NotPrinted, storeprint.PrinterReady},
		{"520 Timeout", protocol.NotPrinted, storeprint.PrinterReady},
		{"410 Out of paper", protocol.Failed, storeprint.PrinterPaperEnd},
		{"420 Cover open", protocol.Failed, storeprint.PrinterCoverOpen},
		{"4100", protocol.Failed, storeprint.PrinterPaperEnd},
		{"OK", protocol.Printed, storeprint.PrinterReady}, // "set to OK", as one page of Star's guide words it
		{" ok ", protocol.Printed, storeprint.PrinterReady},
		{"NOT OK", protocol.Failed, ""},
	} {
		got, st := protocol.Result(tt.code)
		if got != tt.want || st != tt.state {
			t.Errorf("Result(%q): got %v/%q, want %v/%q", tt.code, got, st, tt.want, tt.state)
		}
	}
}

func FuzzParsePoll(f *testing.F) {
	f.Add([]byte(`{"status":"23 86 00 00","printerMAC":"00:11:62:1d:9a:b7","statusCode":"200%20OK","printingInProgress":false}`))
	f.Add([]byte(`{"statusCode":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := protocol.ParsePoll(bytes.NewReader(b))
		if err != nil {
			return
		}
		if strings.TrimSpace(p.StatusCode) == "" {
			t.Fatalf("accepted a poll without statusCode: %+v", p)
		}
		_ = protocol.State(p.StatusCode) // any code maps to a state
	})
}

// The test plays the printer: the gateway's attempt goes on as soon as
// the printer fetched the ticket (not at its next poll, which never comes
// here), and a confirmation with code "OK", as Star's guide words it on
// one page, counts as "200 OK".
func TestPrinter_FetchAndCodeOK(t *testing.T) {
	t.Parallel()
	srv, url := start(t)
	mac := newMAC()
	p := open(t, srv, printertest.Config(5*time.Second), mac, "escpos", "")
	do := func(method, u string, body any) *http.Response {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(waitCtx(t), method, u, r)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	poll := func() protocol.PollReply {
		t.Helper()
		resp := do(http.MethodPost, url, protocol.Poll{PrinterMAC: mac, StatusCode: "200 OK"})
		defer resp.Body.Close()
		var reply protocol.PollReply
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
			t.Fatal(err)
		}
		return reply
	}
	poll() // online

	submitted := make(chan struct{})
	job := &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001",
		Submitted: func(context.Context, string) { close(submitted) }}
	done := make(chan error, 1)
	go func() { done <- p.Print(waitCtx(t), job) }()
	var reply protocol.PollReply
	for !reply.JobReady {
		reply = poll() // until the ticket is offered
	}
	q := "?mac=" + neturl.QueryEscape(mac) + "&token=" + neturl.QueryEscape(reply.JobToken)
	resp := do(http.MethodGet, url+q+"&type="+neturl.QueryEscape(reply.MediaTypes[0]), nil)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-submitted: // the fetch woke the attempt: no poll since
	case err := <-done:
		t.Fatalf("Print: got %v before the confirmation", err)
	case <-waitCtx(t).Done():
		t.Fatal("the fetched ticket was not seen as sent without another poll")
	}
	resp = do(http.MethodDelete, url+q+"&code=OK", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d for code=OK, want 200", resp.StatusCode)
	}
	if err := <-done; err != nil {
		t.Fatalf("Print: got %v, want nil: code OK is 200 OK", err)
	}
	if job.Confirms != storeprint.ConfirmCloudPRNT {
		t.Errorf("got confirmed by %q, want cloudprnt", job.Confirms)
	}
}
