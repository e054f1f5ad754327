package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// One gateway with a printer of each kind that confirms its prints: raw
// TCP, a serial line, Epson ePOS-Print and Star CloudPRNT (polling the
// gateway). Every ticket of every order comes out on its station's
// printer exactly once.
func TestMain_EveryKind(t *testing.T) {
	t.Parallel()
	tcpSim := gatewaytest.StartSim(t, printersim.FaultNone)
	serialSim, tty := printertest.StartSerial(t, printersim.Options{})
	eposSim := startEPOSSim(t, printersim.FaultNone, true)
	const mac = "00:11:62:0a:0b:0c"
	cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{
		fmt.Sprintf("id = \"hot-1\"\ndriver = \"tcp\"\naddress = %q", tcpSim.Addr),
		fmt.Sprintf("id = \"bar-1\"\ndriver = \"serial\"\naddress = %q", tty),
		eposPrinter("cold-1", eposSim.url, true, "hold"),
		fmt.Sprintf("id = \"pass-1\"\ndriver = \"cloudprnt\"\nmac = %q\npassword = \"pass-pw\"\nemulation = \"starprnt\"", mac),
	}, []string{
		"name = \"hot\"\nprinter = \"hot-1\"",
		"name = \"bar\"\nprinter = \"bar-1\"",
		"name = \"cold\"\nprinter = \"cold-1\"",
		"name = \"pass\"\nprinter = \"pass-1\"",
	}, ""))
	_, base := runGateway(t, cfg)
	cloudSim := printertest.StartCloudPRNT(t, base+"/v1/cloudprnt", printersim.Options{},
		printersim.CloudPRNTOptions{MAC: mac, User: "pass-1", Password: "pass-pw", PollInterval: 50 * time.Millisecond})

	const orders = 5
	stations := []string{"hot", "bar", "cold", "pass"}
	for i := range orders {
		if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(fmt.Sprintf("k-%d", i), stations...), nil); code != 201 {
			t.Fatalf("order %d: got %d, want 201", i, code)
		}
	}
	for i := range orders {
		for _, st := range stations {
			gatewaytest.WaitStatus(t, base, fmt.Sprintf("order_k-%d_station_%s", i, st), "done", 30*time.Second)
		}
	}
	for st, sim := range map[string]gatewaytest.Paper{"hot": tcpSim, "bar": serialSim, "cold": eposSim, "pass": cloudSim} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := sim.WaitPrinted(ctx, orders)
		cancel()
		if err != nil {
			t.Fatalf("station %s: %v", st, err)
		}
		if len(got) != orders {
			t.Errorf("station %s: got %d tickets, want %d", st, len(got), orders)
		}
		for i := range orders {
			if no := fmt.Sprintf("order_k-%d_station_%s", i, st); gatewaytest.CountPaper(got, no) != 1 {
				t.Errorf("station %s: got %d tickets of %s, want exactly 1", st, gatewaytest.CountPaper(got, no), no)
			}
		}
	}
}

// A CloudPRNT printer's password cannot be guessed fast: 40 wrong
// passwords from one address meet 429 before the end, each failure is
// logged with the address and the MAC address and never the password, and
// an unknown MAC address is answered as a wrong password is. Once time
// passes, the printer with its password is served again.
func TestMain_CloudPRNTPasswordGuesses(t *testing.T) {
	t.Parallel()
	const mac = "00:11:62:0a:0b:0d"
	cfg := writeConfig(t, gatewaytest.ConfigOf(t, t.TempDir(), []string{
		fmt.Sprintf("id = \"pass-1\"\ndriver = \"cloudprnt\"\nmac = %q\npassword = \"pass-pw\"\nemulation = \"starprnt\"", mac),
	}, []string{"name = \"pass\"\nprinter = \"pass-1\""}, ""))
	clock := &gatewaytest.MovingClock{}
	logs := &testlog.Buffer{}
	_, base := runGateway(t, cfg, func(m *Main) { m.Clock, m.Stderr = clock, logs })
	poll := func(mac, pass string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/cloudprnt", strings.NewReader(`{"printerMAC":"`+mac+`","statusCode":"200 OK"}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("pass-1", pass)
		resp, err := gatewaytest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	wrongCode, wrongBody := poll(mac, "guess-00")
	unknownCode, unknownBody := poll("00:11:62:0a:0b:ff", "guess-00")
	if wrongCode != 401 || unknownCode != wrongCode || unknownBody != wrongBody {
		t.Fatalf("a wrong password: %d %s; an unknown MAC: %d %s; want the same 401", wrongCode, wrongBody, unknownCode, unknownBody)
	}
	limitedAt := 0
	for i := 1; i < 40; i++ {
		code, _ := poll(mac, fmt.Sprintf("guess-%02d", i))
		if code == 429 && limitedAt == 0 {
			limitedAt = i + 1
		}
		if code != 401 && code != 429 {
			t.Fatalf("wrong password %d: got %d, want 401 or 429", i+1, code)
		}
	}
	if limitedAt == 0 {
		t.Fatal("40 wrong passwords: got no 429")
	}
	log := logs.String()
	if n := strings.Count(log, "cloudprnt login refused"); n < 40 {
		t.Fatalf("got %d refused logins logged, want every one of the 40:\n%s", n, log)
	}
	if strings.Contains(log, "guess-") || strings.Contains(log, "pass-pw") {
		t.Fatal("the log shows a password")
	}
	if !strings.Contains(log, "mac=00:11:62:0a:0b:0d") || !strings.Contains(log, "addr=127.0.0.1") {
		t.Fatalf("the failures are logged without the MAC or the address:\n%s", log)
	}
	clock.Add(time.Minute)
	if code, body := poll(mac, "pass-pw"); code != 200 {
		t.Fatalf("the printer with its password a minute later: got %d %s, want 200", code, body)
	}
	t.Logf("40 wrong passwords: 429 from the %dth on", limitedAt)
}
