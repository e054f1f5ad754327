package main

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
)

type deviceJSON struct {
	DeviceID  string     `json:"device_id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// waitFor polls cond until it holds, failing after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// HQ sees the devices paired at a store, from the store's audit trail, and
// revokes one through the audited command path: the gateway refuses its
// token once the command arrives, and the revocation comes back.
func TestChain_Devices(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-devices")
	_, hotAddr := startSim(t)
	g := startGateway(t, st, strings.TrimPrefix(node.base, "http://"), map[string]string{"hot-1": hotAddr})

	var code struct{ Code string }
	if c := do(t, posToken, "POST", g.base+"/v1/pairing", map[string]string{"role": "pos", "name": "counter 1"}, &code); c != 201 {
		t.Fatalf("POST /v1/pairing: got %d", c)
	}
	var dev struct {
		DeviceID string `json:"device_id"`
		Token    string `json:"token"`
	}
	if c := do(t, "", "POST", g.base+"/v1/pair", map[string]string{"code": code.Code}, &dev); c != 201 {
		t.Fatalf("POST /v1/pair: got %d", c)
	}
	if c := do(t, dev.Token, "GET", g.base+"/v1/printers", nil, nil); c != 200 {
		t.Fatalf("the new device at the gateway: got %d", c)
	}

	devices := func() []deviceJSON {
		var ds []deviceJSON
		if c := do(t, adminToken, "GET", node.base+"/v1/stores/"+st.id+"/devices", nil, &ds); c != 200 {
			t.Fatalf("GET devices: got %d", c)
		}
		return ds
	}
	waitFor(t, 20*time.Second, "the cloud shows the paired device", func() bool {
		ds := devices()
		return len(ds) == 1 && ds[0].DeviceID == dev.DeviceID && ds[0].Name == "counter 1" && ds[0].Role == "pos" && ds[0].RevokedAt == nil
	})

	var cmd struct {
		Kind     string `json:"kind"`
		DeviceID string `json:"device_id"`
	}
	if c := do(t, adminToken, "DELETE", node.base+"/v1/stores/"+st.id+"/devices/"+dev.DeviceID, map[string]string{"reason": "till stolen", "operator": "hq-amy"}, &cmd); c != 202 || cmd.Kind != "device_revoke" || cmd.DeviceID != dev.DeviceID {
		t.Fatalf("DELETE device at HQ: got %d %+v, want 202 device_revoke", c, cmd)
	}
	start := time.Now()
	waitFor(t, 20*time.Second, "the gateway refuses the revoked device", func() bool {
		return do(t, dev.Token, "GET", g.base+"/v1/printers", nil, nil) == 401
	})
	t.Logf("the gateway refused the device %s after HQ's revocation", time.Since(start).Round(time.Millisecond))
	waitFor(t, 20*time.Second, "the cloud shows the device revoked", func() bool {
		ds := devices()
		return len(ds) == 1 && ds[0].RevokedAt != nil
	})
	var audit []struct{ Action, Operator string }
	do(t, posToken, "GET", g.base+"/v1/audit", nil, &audit)
	found := false
	for _, a := range audit {
		found = found || (a.Action == "device_revoke" && a.Operator == "hq:hq-amy")
	}
	if !found {
		t.Fatalf("the gateway's audit log %+v lacks HQ's revocation", audit)
	}
	var e struct{ Error string }
	if c := do(t, adminToken, "DELETE", node.base+"/v1/stores/"+st.id+"/devices/"+dev.DeviceID, nil, &e); c != 409 {
		t.Fatalf("revoking again: got %d %q, want 409", c, e.Error)
	}
	if c := do(t, adminToken, "DELETE", node.base+"/v1/stores/"+st.id+"/devices/dev-nope", nil, &e); c != 404 {
		t.Fatalf("an unknown device: got %d %q, want 404", c, e.Error)
	}
}
