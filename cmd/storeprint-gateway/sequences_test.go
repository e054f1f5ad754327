package main

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// Routine sequences of clicks at a busy pass, on the real gateway process:
// none may stop the printer. Each ends with a fresh order, which must
// print within 10 s, and nothing of a voided order comes out after the
// void.
func TestProcess_OperatorSequences(t *testing.T) {
	t.Parallel()
	note := map[string]any{"operator": "amy", "reason": "guest asked"}
	for _, tc := range []struct {
		name  string
		fault printersim.Fault // the printer's trouble while the sequence runs
		run   func(t *testing.T, base string, hot *gatewaytest.Sim)
	}{
		{"VoidPrintedThenCopy", printersim.FaultNone, func(t *testing.T, base string, hot *gatewaytest.Sim) {
			gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("s1", "hot"), nil)
			gatewaytest.WaitStatus(t, base, "order_s1_station_hot", "done", 10*time.Second)
			gatewaytest.Call(t, "POST", base+"/v1/orders/s1/void", note, nil)
			wantVoidRefusal(t, base, "/v1/tasks/order_s1_station_hot/reprint", note)
		}},
		{"LostConfirmationVoidThenMakeUp", printersim.FaultLostAck, func(t *testing.T, base string, hot *gatewaytest.Sim) {
			gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("s2", "hot"), nil)
			gatewaytest.WaitStatus(t, base, "order_s2_station_hot", "attention_required", 15*time.Second)
			gatewaytest.Call(t, "POST", base+"/v1/orders/s2/void", note, nil)
			wantVoidRefusal(t, base, "/v1/tasks/order_s2_station_hot/retry", note)
		}},
		{"LostConfirmationVoidThenCopy", printersim.FaultLostAck, func(t *testing.T, base string, hot *gatewaytest.Sim) {
			gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("s3", "hot"), nil)
			gatewaytest.WaitStatus(t, base, "order_s3_station_hot", "attention_required", 15*time.Second)
			gatewaytest.Call(t, "POST", base+"/v1/orders/s3/void", note, nil)
			wantVoidRefusal(t, base, "/v1/tasks/order_s3_station_hot/reprint", note)
		}},
		{"PaperEndCopyThenVoid", printersim.FaultPaperEnd, func(t *testing.T, base string, hot *gatewaytest.Sim) {
			gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("s4", "hot"), nil)
			gatewaytest.WaitPrinter(t, base, "hot-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "paper_end" })
			if code := gatewaytest.Call(t, "POST", base+"/v1/tasks/order_s4_station_hot/reprint", note, nil); code != 201 {
				t.Fatalf("copy of a waiting ticket: got %d, want 201", code)
			}
			gatewaytest.Call(t, "POST", base+"/v1/orders/s4/void", note, nil)
			for _, no := range []string{"order_s4_station_hot", "order_s4_station_hot_copy_1"} {
				if tj := gatewaytest.GetTask(t, base, no); tj.Status != "cancelled" {
					t.Errorf("%s after the void: got %s, want cancelled", no, tj.Status)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hot := gatewaytest.StartSim(t, tc.fault)
			cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
				[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
			p := startProc(t, cfg)
			tc.run(t, p.base, hot)
			before := len(hot.Printed())

			hot.SetFault(printersim.FaultNone)
			gatewaytest.Call(t, "POST", p.base+"/v1/orders", gatewaytest.Order("fresh", "hot"), nil)
			gatewaytest.WaitStatus(t, p.base, "order_fresh_station_hot", "done", 10*time.Second)
			for _, tk := range hot.Printed()[before:] {
				if tk.TaskNo != "order_fresh_station_hot" {
					t.Errorf("after the void, %s came out", tk.TaskNo)
				}
			}
		})
	}
}

// wantVoidRefusal posts a make-up print or copy of a voided order's ticket
// and wants a 409 that names the void.
func wantVoidRefusal(t *testing.T, base, path string, body any) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if code := gatewaytest.Call(t, "POST", base+path, body, &e); code != 409 || !strings.Contains(e.Error, "voided") {
		t.Fatalf("POST %s: got %d %q, want 409 naming the void", path, code, e.Error)
	}
}
