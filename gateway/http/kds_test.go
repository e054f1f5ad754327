package http_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A device paired as a display is that screen and nothing else: it polls
// and bumps and recalls on its own display, and is refused everything
// else; bad requests are 4xx naming the problem.
func TestServer_DisplayDevice(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.ConfigOf(t, t.TempDir(),
		[]string{fmt.Sprintf("id = \"hot-1\"\ndriver = \"tcp\"\naddress = %q", hot.Addr)},
		[]string{"name = \"hot\"\ndisplay = \"kds-hot\"", "name = \"cold\"\ndisplay = \"kds-cold\""},
		"\n[[displays]]\nid = \"kds-hot\"\nbackup = \"hot-1\"\n\n[[displays]]\nid = \"kds-cold\"\n")
	_, base := runGateway(t, cfg)

	var e struct {
		Error string `json:"error"`
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "display"}, &e); code != 400 {
		t.Fatalf("pairing a display without its id: got %d %q, want 400", code, e.Error)
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "display", "display": "kds-nope"}, &e); code != 400 {
		t.Fatalf("pairing an unknown display: got %d %q, want 400", code, e.Error)
	}
	// Named after its screen, a display device is that screen.
	var named struct {
		Display string `json:"display"`
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "display", "name": "kds-cold"}, &named); code != 201 || named.Display != "kds-cold" {
		t.Fatalf("pairing a display named after it: got %d %+v, want 201 for kds-cold", code, named)
	}
	var c pairingJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/pairing", map[string]string{"role": "display", "display": "kds-hot"}, &c); code != 201 {
		t.Fatalf("POST /v1/pairing: got %d %q", code, c.Error)
	}
	var d pairedJSON
	if code := gatewaytest.CallToken(t, "", "POST", base+"/v1/pair", map[string]string{"code": c.Code, "name": "hot line tablet"}, &d); code != 201 || d.Role != "display" {
		t.Fatalf("POST /v1/pair: got %d %+v", code, d)
	}

	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("d1", "hot"), nil)
	no := "order_d1_station_hot"
	var poll struct {
		Generation uint64 `json:"generation"`
		Tickets    []struct {
			TaskNo string `json:"task_no"`
			Shown  bool   `json:"shown"`
		} `json:"tickets"`
	}
	if code := gatewaytest.CallToken(t, d.Token, "POST", base+"/v1/displays/kds-hot/poll", map[string]any{}, &poll); code != 200 || len(poll.Tickets) != 1 || poll.Tickets[0].TaskNo != no || poll.Tickets[0].Shown {
		t.Fatalf("first poll: got %d %+v, want %s not shown yet", code, poll, no)
	}
	if code := gatewaytest.CallToken(t, d.Token, "POST", base+"/v1/displays/kds-hot/poll", map[string]any{"shown": []string{no}}, &poll); code != 200 || !poll.Tickets[0].Shown {
		t.Fatalf("poll with it shown: got %d %+v, want it shown", code, poll)
	}
	if got := gatewaytest.GetTask(t, base, no); got.Status != "printing" || got.PrinterID != "kds-hot" {
		t.Fatalf("shown: got %+v, want printing on kds-hot", got)
	}

	for _, tc := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"POST", "/v1/displays/kds-cold/poll", map[string]any{}, 403},
		{"POST", "/v1/tasks/" + no + "/bump", map[string]string{"display_id": "kds-cold"}, 403},
		{"GET", "/v1/tasks/" + no, nil, 403},
		{"GET", "/v1/displays", nil, 403},
		{"POST", "/v1/orders", gatewaytest.Order("d2", "hot"), 403},
		{"POST", "/v1/tasks/" + no + "/bump", map[string]string{}, 400},
		{"POST", "/v1/tasks/" + no + "/bump", `{"display_id": "kds-hot", "x": 1}`, 400},
		{"POST", "/v1/tasks/" + no + "/recall", map[string]string{"display_id": "kds-hot"}, 409},
		{"POST", "/v1/tasks/order_nope_station_hot/bump", map[string]string{"display_id": "kds-hot"}, 404},
	} {
		e.Error = ""
		if code := gatewaytest.CallToken(t, d.Token, tc.method, base+tc.path, tc.body, &e); code != tc.want || e.Error == "" {
			t.Errorf("%s %s %v: got %d %q, want %d with an error", tc.method, tc.path, tc.body, code, e.Error, tc.want)
		}
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/displays/kds-nope/poll", map[string]any{}, &e); code != 404 {
		t.Errorf("poll of an unknown display: got %d %q, want 404", code, e.Error)
	}

	var task gatewaytest.TaskJSON
	if code := gatewaytest.CallToken(t, d.Token, "POST", base+"/v1/tasks/"+no+"/bump", map[string]string{"display_id": "kds-hot"}, &task); code != 200 || task.Status != "done" {
		t.Fatalf("bump: got %d %+v, want done", code, task)
	}
	waitBumped(t, base, no, time.Second)
	if code := gatewaytest.CallToken(t, d.Token, "POST", base+"/v1/tasks/"+no+"/recall", map[string]string{"display_id": "kds-hot"}, &task); code != 200 || task.Status != "done" {
		t.Fatalf("recall: got %d %+v, want it shown again, still done", code, task)
	}
	var audit []struct {
		Action   string `json:"action"`
		Operator string `json:"operator"`
		Reason   string `json:"reason"`
		After    string `json:"after"`
	}
	gatewaytest.Call(t, "GET", base+"/v1/audit", nil, &audit)
	seen := map[string]bool{}
	for _, a := range audit {
		if a.Operator == "device:"+d.DeviceID && (a.Action == "bump" || a.Action == "recall") {
			seen[a.Action] = true
		}
	}
	if !seen["bump"] || !seen["recall"] {
		t.Fatalf("audit: got %+v, want the bump and the recall by device:%s", audit, d.DeviceID)
	}
	if n := len(hot.Printed()); n != 0 {
		t.Fatalf("got %d tickets on paper, want none", n)
	}
}
