package http_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

type pairingJSON struct {
	Code      string    `json:"code"`
	Role      string    `json:"role"`
	ExpiresAt time.Time `json:"expires_at"`
	URL       string    `json:"url"`
	QR        string    `json:"qr_png"`
	Error     string    `json:"error"`
}

type pairedJSON struct {
	DeviceID string `json:"device_id"`
	Role     string `json:"role"`
	Name     string `json:"name"`
	Token    string `json:"token"`
	Error    string `json:"error"`
}

// pairDevice issues a code with tok and pairs a device with it.
func pairDevice(t *testing.T, base, tok, role, name string) pairedJSON {
	t.Helper()
	var c pairingJSON
	if code := gatewaytest.CallToken(t, tok, "POST", base+"/v1/pairing", map[string]string{"role": role}, &c); code != 201 {
		t.Fatalf("POST /v1/pairing %s: got %d %q, want 201", role, code, c.Error)
	}
	var d pairedJSON
	if code := gatewaytest.CallToken(t, "", "POST", base+"/v1/pair", map[string]string{"code": c.Code, "name": name}, &d); code != 201 {
		t.Fatalf("POST /v1/pair: got %d %q, want 201", code, d.Error)
	}
	return d
}

// Pairing end to end: a code pairs one device once, within ten minutes;
// wrong codes are limited per address and bar that address (only) from
// the codes they were tried against; a code comes as JSON only; each role may do what it may and no more; a revoked device is
// refused at once, its live stream ended; all of it audited.
func TestServer_Pairing(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	clock := &gatewaytest.MovingClock{}
	_, base := runGateway(t, cfg, func(m *gw) { m.Clock = clock })

	var c pairingJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "pos", "name": "counter 1"}, &c); code != 201 {
		t.Fatalf("POST /v1/pairing: got %d %q", code, c.Error)
	}
	if len(c.Code) != 6 || strings.Trim(c.Code, "0123456789") != "" {
		t.Fatalf("got code %q, want six digits", c.Code)
	}
	if d := c.ExpiresAt.Sub(clock.Now()); d < 9*time.Minute || d > 10*time.Minute {
		t.Fatalf("code expires in %s, want 10 minutes", d)
	}
	if !strings.HasSuffix(c.URL, "/?pair="+c.Code) || !strings.HasPrefix(c.QR, "data:image/png;base64,") {
		t.Fatalf("got url %q and qr %.40q, want the gateway URL with the code and a PNG", c.URL, c.QR)
	}

	var pos pairedJSON
	t.Run("OK", func(t *testing.T) {
		if code := gatewaytest.CallToken(t, "", "POST", base+"/v1/pair", map[string]string{"code": c.Code}, &pos); code != 201 {
			t.Fatalf("POST /v1/pair: got %d %q", code, pos.Error)
		}
		if pos.Role != "pos" || pos.Name != "counter 1" || !strings.HasPrefix(pos.Token, "spd1.") {
			t.Fatalf("got %+v, want a pos device named counter 1 with a token", pos)
		}
		var me struct{ Role, DeviceID string }
		if code := gatewaytest.CallToken(t, pos.Token, "GET", base+"/v1/me", nil, &me); code != 200 || me.Role != "pos" {
			t.Fatalf("GET /v1/me: got %d %+v", code, me)
		}
	})
	t.Run("ErrReuse", func(t *testing.T) {
		var e pairedJSON
		if code := gatewaytest.CallToken(t, "", "POST", base+"/v1/pair", map[string]string{"code": c.Code, "name": "again"}, &e); code != 401 {
			t.Fatalf("a used code: got %d %q, want 401", code, e.Error)
		}
	})
	t.Run("Roles", func(t *testing.T) {
		var res gatewaytest.OrderJSON
		if code := gatewaytest.CallToken(t, pos.Token, "POST", base+"/v1/orders", gatewaytest.Order("pos-1", "hot"), &res); code != 201 {
			t.Fatalf("pos order: got %d", code)
		}
		gatewaytest.WaitStatus(t, base, "order_pos-1_station_hot", "done", 10*time.Second)
		if code := gatewaytest.CallToken(t, pos.Token, "POST", base+"/v1/tasks/order_pos-1_station_hot/reprint", map[string]string{"operator": "amy", "reason": "spilt"}, nil); code != 201 {
			t.Fatalf("pos copy: got %d, want 201", code)
		}
		for _, tc := range []struct{ method, path string }{
			{"POST", "/v1/tasks/order_pos-1_station_hot/retry"},   // staff
			{"POST", "/v1/tasks/order_pos-1_station_hot/resolve"}, // staff
			{"POST", "/v1/printers/hot-1/test-page"},              // staff
			{"POST", "/v1/printers/hot-1/acknowledge"},            // staff
			{"GET", "/v1/audit"},                                  // staff
			{"POST", "/v1/pairing"},                               // staff
			{"GET", "/v1/devices"},                                // admin
			{"DELETE", "/v1/devices/" + pos.DeviceID},             // admin
			{"POST", "/v1/stations/hot/print-stale"},              // staff
		} {
			var e struct{ Error string }
			body := map[string]string{"operator": "amy", "reason": "try", "outcome": "printed"}
			if tc.path == "/v1/pairing" {
				body = map[string]string{"role": "pos"}
			}
			if code := gatewaytest.CallToken(t, pos.Token, tc.method, base+tc.path, body, &e); code != 403 || !strings.Contains(e.Error, "token") {
				t.Errorf("pos %s %s: got %d %q, want 403", tc.method, tc.path, code, e.Error)
			}
		}
		staff := pairDevice(t, base, gatewaytest.Token, "staff", "kitchen tablet")
		if code := gatewaytest.CallToken(t, staff.Token, "POST", base+"/v1/printers/hot-1/test-page", nil, nil); code != 201 {
			t.Errorf("staff test page: got %d, want 201", code)
		}
		if code := gatewaytest.CallToken(t, staff.Token, "GET", base+"/v1/devices", nil, nil); code != 403 {
			t.Errorf("staff devices: got %d, want 403", code)
		}
		var e pairingJSON
		if code := gatewaytest.CallToken(t, staff.Token, "POST", base+"/v1/pairing", map[string]string{"role": "admin"}, &e); code != 403 {
			t.Errorf("staff pairing an admin: got %d %q, want 403", code, e.Error)
		}
		pairDevice(t, base, staff.Token, "pos", "counter 2") // staff may pair pos
	})
	t.Run("ErrExpired", func(t *testing.T) {
		var c pairingJSON
		gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "pos"}, &c)
		clock.Add(10*time.Minute + time.Second)
		var e pairedJSON
		if code := gatewaytest.CallToken(t, "", "POST", base+"/v1/pair", map[string]string{"code": c.Code, "name": "late"}, &e); code != 401 {
			t.Fatalf("after 10 minutes: got %d %q, want 401", code, e.Error)
		}
		clock.Add(time.Minute) // the wrong try above is forgiven
	})
	t.Run("ErrWrongCodes", func(t *testing.T) {
		var live pairingJSON
		gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "pos"}, &live)
		wrong := "000000"
		if live.Code == wrong {
			wrong = "000001"
		}
		try := func() (int, string) {
			req, _ := http.NewRequest("POST", base+"/v1/pair", strings.NewReader(`{"code":"`+wrong+`","name":"guess"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := gatewaytest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Retry-After")
		}
		for i := 0; i < 5; i++ {
			if code, _ := try(); code != 401 {
				t.Fatalf("wrong code %d: got %d, want 401", i+1, code)
			}
		}
		code, after := try()
		if code != 429 || after == "" {
			t.Fatalf("sixth wrong code within a minute: got %d Retry-After %q, want 429 with Retry-After", code, after)
		}
		// A minute later five more may be tried: ten in all kill the code.
		clock.Add(time.Minute)
		for i := 0; i < 5; i++ {
			if code, _ := try(); code != 401 {
				t.Fatalf("wrong code %d after a minute: got %d, want 401", i+6, code)
			}
		}
		clock.Add(time.Minute)
		var e pairedJSON
		if code := gatewaytest.CallToken(t, "", "POST", base+"/v1/pair", map[string]string{"code": live.Code, "name": "too late"}, &e); code != 401 {
			t.Fatalf("the right code after 10 wrong ones from its address: got %d, want 401 (barred to it)", code)
		}
		// The wrong codes of one address end nobody else's: the code
		// still pairs a device at another address.
		other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
			LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
		if code := gatewaytest.CallWith(t, other, "", "POST", base+"/v1/pair", map[string]string{"code": live.Code, "name": "elsewhere"}, &e); code != 201 {
			t.Fatalf("the code from another address: got %d %q, want 201", code, e.Error)
		}
		if code := gatewaytest.CallWith(t, other, e.Token, "DELETE", base+"/v1/devices/"+e.DeviceID, nil, nil); code != 403 {
			t.Fatalf("a pos device revoking itself: got %d, want 403", code)
		}
		if code := gatewaytest.Call(t, "DELETE", base+"/v1/devices/"+e.DeviceID, nil, nil); code != 204 && code != 200 {
			t.Fatalf("revoke the device paired elsewhere: got %d", code)
		}
		clock.Add(time.Minute)
	})
	// A page of another origin can post text/plain without asking first:
	// a pairing code comes as JSON only.
	t.Run("ErrNotJSON", func(t *testing.T) {
		var live pairingJSON
		gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "pos"}, &live)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
			req, _ := http.NewRequest("POST", base+"/v1/pair", strings.NewReader(`{"code":"`+live.Code+`"}`))
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, err := gatewaytest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e pairedJSON
			json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(e.Error, "application/json") {
				t.Fatalf("Content-Type %q: got %d %q, want 400 naming application/json", ct, resp.StatusCode, e.Error)
			}
		}
		clock.Add(time.Minute)
	})
	t.Run("Revoke", func(t *testing.T) {
		var devices []struct {
			DeviceID   string     `json:"device_id"`
			Name       string     `json:"name"`
			Role       string     `json:"role"`
			LastUsedAt *time.Time `json:"last_used_at"`
		}
		if code := gatewaytest.Call(t, "GET", base+"/v1/devices", nil, &devices); code != 200 || len(devices) != 3 {
			t.Fatalf("GET /v1/devices: got %d %+v, want 3 devices", code, devices)
		}
		if devices[0].DeviceID != pos.DeviceID || devices[0].LastUsedAt == nil {
			t.Fatalf("got %+v first, want %s, last used set", devices[0], pos.DeviceID)
		}
		// A live stream with the token, ended by the revocation.
		req, _ := http.NewRequest("GET", base+"/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+pos.Token)
		resp, err := gatewaytest.Client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /v1/events: %v %v", resp, err)
		}
		defer resp.Body.Close()
		ended := make(chan time.Time, 1)
		first := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			once := false
			for sc.Scan() {
				if !once && strings.HasPrefix(sc.Text(), "data:") {
					once = true
					close(first)
				}
			}
			ended <- time.Now()
		}()
		<-first

		var d struct {
			DeviceID string `json:"device_id"`
		}
		if code := gatewaytest.Call(t, "DELETE", base+"/v1/devices/"+pos.DeviceID, map[string]string{"operator": "boss", "reason": "till stolen"}, &d); code != 200 || d.DeviceID != pos.DeviceID {
			t.Fatalf("DELETE: got %d %+v", code, d)
		}
		revoked := time.Now()
		var e struct{ Error string }
		if code := gatewaytest.CallToken(t, pos.Token, "GET", base+"/v1/tasks", nil, &e); code != 401 {
			t.Fatalf("the revoked token right after: got %d, want 401", code)
		}
		t.Logf("revoked token refused %s after the revocation's answer", time.Since(revoked).Round(time.Microsecond))
		select {
		case at := <-ended:
			t.Logf("the revoked device's live stream ended %s after the revocation", at.Sub(revoked).Round(time.Millisecond))
		case <-time.After(5 * time.Second):
			t.Fatal("the revoked device's live stream did not end")
		}
		if code := gatewaytest.Call(t, "DELETE", base+"/v1/devices/"+pos.DeviceID, nil, nil); code != 404 {
			t.Fatalf("revoking twice: got %d, want 404", code)
		}
	})
	t.Run("Audited", func(t *testing.T) {
		var audit []struct {
			Action, Operator, Reason, Before, After string
		}
		gatewaytest.Call(t, "GET", base+"/v1/audit", nil, &audit)
		count := map[string]int{}
		for _, a := range audit {
			count[a.Action]++
			for _, s := range []string{a.Before, a.After, a.Reason} {
				if strings.Contains(s, pos.Token) || strings.Contains(s, "spd1.") {
					t.Fatalf("the audit log holds a token: %+v", a)
				}
			}
		}
		if count["pairing_create"] != 6 || count["device_pair"] != 4 || count["device_revoke"] != 2 {
			t.Fatalf("got audit actions %v, want 6 pairing_create, 4 device_pair, 2 device_revoke", count)
		}
	})
}

// Bad tokens are limited per client address and logged without the token;
// the limit lifts as time passes. The token is checked first: after 60
// bad tokens from an address, a valid token from it is served.
func TestServer_BadTokens(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	clock := &gatewaytest.MovingClock{}
	logs := &testlog.Buffer{}
	_, base := runGateway(t, cfg, func(m *gw) { m.Clock, m.Stderr = clock, logs })
	const guess = "guessed-token-0001"
	for i := 0; i < 60; i++ {
		want := 401
		if i >= 10 {
			want = 429
		}
		req, _ := http.NewRequest("GET", base+"/v1/tasks", nil)
		req.Header.Set("Authorization", "Bearer "+guess)
		resp, err := gatewaytest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || (want == 429) != (resp.Header.Get("Retry-After") != "") {
			t.Fatalf("bad token %d: got %d Retry-After %q, want %d", i+1, resp.StatusCode, resp.Header.Get("Retry-After"), want)
		}
	}
	if code := gatewaytest.Call(t, "GET", base+"/v1/tasks", nil, nil); code != 200 {
		t.Fatalf("a valid token after 60 bad ones from its address: got %d, want 200", code)
	}
	clock.Add(time.Second)
	if code := gatewaytest.CallToken(t, guess, "GET", base+"/v1/tasks", nil, nil); code != 401 {
		t.Fatalf("a bad token a second later: got %d, want 401", code)
	}
	log := logs.String()
	if strings.Count(log, `msg="bad token"`) != 61 || !strings.Contains(log, "addr=127.0.0.1") {
		t.Fatalf("want 61 bad tokens logged with the address, got:\n%s", log)
	}
	if strings.Contains(log, guess) {
		t.Fatal("the log shows the bad token")
	}
}

// A Host that is not the gateway's is refused before anything else.
func TestServer_Host(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.ConfigTop(t, t.TempDir(), "hostnames = [\"gateway.local\"]\n", []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	m, base := runGateway(t, cfg)
	_, port, _ := strings.Cut(m.HTTP.Addr(), ":")
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST", 200},
		{"gateway.local:" + port, 200},
		{"[::1]:" + port, 200},
		{"evil.example:" + port, 421},
		{"gateway.local.evil.example", 421},
		{"192.0.2.1:" + port, 421},
	} {
		req, _ := http.NewRequest("GET", base+"/v1/tasks", nil)
		req.Host = tc.host
		req.Header.Set("Authorization", "Bearer "+gatewaytest.Token)
		resp, err := gatewaytest.Client.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", tc.host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %s: got %d, want %d", tc.host, resp.StatusCode, tc.want)
		}
	}
}

// A preflight from an allowed origin gets the CORS and Private Network
// Access answer; another origin gets no CORS headers.
func TestServer_CORS(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.ConfigTop(t, t.TempDir(), "allowed_origins = [\"https://pos.example.com\"]\n", []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest("OPTIONS", base+"/v1/orders", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		req.Header.Set("Access-Control-Request-Private-Network", "true")
		// CORS preflights are the browser's, not operations of the API.
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("https://pos.example.com")
	for k, want := range map[string]string{
		"Access-Control-Allow-Origin":          "https://pos.example.com",
		"Access-Control-Allow-Methods":         "GET, POST, DELETE",
		"Access-Control-Allow-Headers":         "Authorization, Content-Type",
		"Access-Control-Allow-Private-Network": "true",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("allowed origin: %s: got %q, want %q", k, got, want)
		}
	}
	if resp.StatusCode != 204 {
		t.Errorf("allowed origin: got %d, want 204", resp.StatusCode)
	}
	resp = preflight("https://evil.example")
	for k := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("another origin got %s", k)
		}
	}
	// The answer to an allowed origin's request carries its origin.
	req, _ := gatewaytest.NewJSONRequest("POST", base+"/v1/orders", gatewaytest.Order("cors-1", "hot"))
	req.Header.Set("Origin", "https://pos.example.com")
	r2, err := gatewaytest.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 201 || r2.Header.Get("Access-Control-Allow-Origin") != "https://pos.example.com" {
		t.Fatalf("got %d with Allow-Origin %q", r2.StatusCode, r2.Header.Get("Access-Control-Allow-Origin"))
	}
}
