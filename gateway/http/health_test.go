package http_test

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// GET /healthz without a token: the store's state, the data disk as last
// read and no sync link (null) on a gateway without [cloud]; the board
// shows the same disk, and no cloud at all.
func TestServer_Healthz(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	_, base := runGateway(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	type disk struct {
		FreeBytes    uint64    `json:"free_bytes"`
		ReserveBytes uint64    `json:"reserve_bytes"`
		Low          bool      `json:"low"`
		CheckedAt    time.Time `json:"checked_at"`
	}
	var h struct {
		Status  string          `json:"status"`
		Cloud   *map[string]any `json:"cloud"`
		Storage struct {
			Disk     *disk           `json:"disk"`
			Recovery *map[string]any `json:"recovery"`
		} `json:"storage"`
	}
	if code := gatewaytest.CallToken(t, "", "GET", base+"/healthz", nil, &h); code != 200 || h.Status != "ok" {
		t.Fatalf("GET /healthz: got %d %q, want 200 ok", code, h.Status)
	}
	if h.Cloud != nil {
		t.Errorf("cloud: got %v, want null without [cloud]", *h.Cloud)
	}
	if d := h.Storage.Disk; d == nil || d.FreeBytes == 0 || d.ReserveBytes != 1 || d.Low || d.CheckedAt.IsZero() {
		t.Errorf("storage.disk: got %+v, want the data disk's free space over a reserve of 1 byte", d)
	}
	if h.Storage.Recovery != nil {
		t.Errorf("storage.recovery: got %v, want none on a new store", *h.Storage.Recovery)
	}

	var board map[string]any
	if code := gatewaytest.Call(t, "GET", base+"/v1/board", nil, &board); code != 200 {
		t.Fatalf("GET /v1/board: got %d", code)
	}
	if _, ok := board["cloud"]; ok {
		t.Errorf("board: got cloud %v, want no cloud without [cloud]", board["cloud"])
	}
	if st, _ := board["storage"].(map[string]any); st == nil || st["disk"] == nil {
		t.Errorf("board: got storage %v, want the data disk", board["storage"])
	}
}
