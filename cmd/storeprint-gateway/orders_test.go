package main

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A POS asks about its order by its id: the order's tickets, where each
// prints and how it stands, copies included; an unknown order is 404.
func TestMain_GetOrder(t *testing.T) {
	t.Parallel()
	hot, pass := startSim(t, printersim.FaultNone), startSim(t, printersim.FaultPaperEnd)
	cfg := writeConfig(t, t.TempDir(), []printerConf{{id: "hot-1", addr: hot.addr}, {id: "pass-1", addr: pass.addr}},
		[]stationConf{{name: "hot", printer: "hot-1"}, {name: "pass", printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	posted := time.Now()
	if code := call(t, "POST", base+"/v1/orders", order("go-1", "hot", "pass"), nil); code != 201 {
		t.Fatalf("order: got %d", code)
	}
	hotNo, passNo := "order_go-1_station_hot", "order_go-1_station_pass"
	waitStatus(t, base, hotNo, "done", 10*time.Second)
	if code := call(t, "POST", base+"/v1/tasks/"+hotNo+"/reprint", map[string]string{"operator": "amy", "reason": "spilt"}, nil); code != 201 {
		t.Fatalf("copy: got %d", code)
	}
	type orderState struct {
		OrderID    string    `json:"order_id"`
		AcceptedAt time.Time `json:"accepted_at"`
		Tasks      []struct {
			TaskNo    string     `json:"task_no"`
			Station   string     `json:"station"`
			PrinterID string     `json:"printer_id"`
			Status    string     `json:"status"`
			PrintedAt *time.Time `json:"printed_at"`
		} `json:"tasks"`
	}
	t.Run("OK", func(t *testing.T) {
		var o orderState
		if code := call(t, "GET", base+"/v1/orders/go-1", nil, &o); code != 200 {
			t.Fatalf("GET /v1/orders/go-1: got %d", code)
		}
		if o.OrderID != "go-1" || o.AcceptedAt.Before(posted.Add(-time.Second)) || o.AcceptedAt.After(time.Now()) {
			t.Fatalf("got %+v, want go-1 accepted when posted", o)
		}
		if len(o.Tasks) != 3 {
			t.Fatalf("got tasks %+v, want hot, its copy and pass", o.Tasks)
		}
		got := map[string]string{}
		for _, tk := range o.Tasks {
			got[tk.TaskNo] = tk.Station + " " + tk.PrinterID + " " + tk.Status
			if (tk.Status == "done") != (tk.PrintedAt != nil) {
				t.Errorf("task %s: status %s with printed_at %v", tk.TaskNo, tk.Status, tk.PrintedAt)
			}
		}
		if got[hotNo] != "hot hot-1 done" || got[passNo] == "" || got[passNo][:len("pass pass-1")] != "pass pass-1" || got[hotNo+"_copy_1"] == "" {
			t.Fatalf("got %v, want hot done on hot-1, pass waiting on pass-1 and the copy", got)
		}
		if o.Tasks[0].TaskNo != hotNo || o.Tasks[1].TaskNo != hotNo+"_copy_1" {
			t.Errorf("got order %s, %s first, want the hot ticket then its copy", o.Tasks[0].TaskNo, o.Tasks[1].TaskNo)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		var e struct{ Error string }
		if code := call(t, "GET", base+"/v1/orders/nope", nil, &e); code != 404 || e.Error == "" {
			t.Fatalf("unknown order: got %d %q, want 404 with an error", code, e.Error)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		if code := callToken(t, "", "GET", base+"/v1/orders/go-1", nil, nil); code != 401 {
			t.Fatalf("without a token: got %d, want 401", code)
		}
	})
}
