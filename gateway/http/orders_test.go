package http_test

import (
	"fmt"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// Many concurrent POS clients, real sockets, two printers: every task on
// paper exactly once and no task done without paper.
func TestServer_Orders(t *testing.T) {
	t.Parallel()
	hot, cold := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(),
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}, {Name: "bar", Printer: "cold-1"}})
	_, base := runGateway(t, cfg)

	const orders, clients = 1000, 16
	var wg stdsync.WaitGroup
	var hotN, coldN atomic.Int64
	next := make(chan int)
	go func() {
		for i := 0; i < orders; i++ {
			next <- i
		}
		close(next)
	}()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				stations := []string{"hot"}
				switch i % 3 {
				case 1:
					stations = []string{"hot", "cold"}
				case 2:
					stations = []string{"cold", "bar"}
				}
				var res gatewaytest.OrderJSON
				if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(fmt.Sprintf("o%04d", i), stations...), &res); code != 201 {
					t.Errorf("order %d: got status %d, want 201", i, code)
					return
				}
				for _, tk := range res.Tasks {
					if tk.PrinterID == "hot-1" {
						hotN.Add(1)
					} else {
						coldN.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	paper := append(gatewaytest.WaitPrinted(t, hot, int(hotN.Load()), 2*time.Minute), gatewaytest.WaitPrinted(t, cold, int(coldN.Load()), 2*time.Minute)...)
	seen := map[string]int{}
	for _, tk := range paper {
		seen[tk.TaskNo]++
	}
	gatewaytest.Settle(t, base, time.Minute)
	var done []gatewaytest.TaskJSON
	gatewaytest.Call(t, "GET", base+"/v1/tasks?status=done&limit=100000", nil, &done)
	if len(done) != len(paper) {
		t.Errorf("got %d done tasks and %d tickets on paper, want equal", len(done), len(paper))
	}
	for _, d := range done {
		if seen[d.TaskNo] != 1 {
			t.Errorf("task %s is done with %d tickets on paper, want 1", d.TaskNo, seen[d.TaskNo])
		}
	}
	for no, n := range seen {
		if n != 1 {
			t.Errorf("task %s printed %d times", no, n)
		}
	}
	// Nothing extra arrives afterwards.
	if got := len(hot.Printed()) + len(cold.Printed()); got != len(paper) {
		t.Errorf("got %d tickets after the run, want %d", got, len(paper))
	}
}

func TestServer_Idempotency(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)

	body := gatewaytest.Order("idem-1", "hot", "cold")
	var first, again gatewaytest.OrderJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", body, &first); code != 201 {
		t.Fatalf("got %d, want 201", code)
	}
	gatewaytest.WaitPrinted(t, hot, 2, 10*time.Second)
	gatewaytest.WaitStatus(t, base, "order_idem-1_station_hot", "done", 10*time.Second)
	for i := 0; i < 3; i++ {
		if code := gatewaytest.Call(t, "POST", base+"/v1/orders", body, &again); code != 200 {
			t.Fatalf("replay %d: got %d, want 200", i, code)
		}
		if fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("replay %d: got %v, want the first answer %v", i, again, first)
		}
	}
	changed := gatewaytest.Order("idem-1", "hot")
	var e struct{ Error string }
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", changed, &e); code != 409 || e.Error == "" {
		t.Fatalf("different body: got %d %q, want 409 with an error", code, e.Error)
	}
	if n := len(hot.Printed()); n != 2 {
		t.Fatalf("got %d tickets, want 2", n)
	}
	if tj := gatewaytest.GetTask(t, base, "order_idem-1_station_hot"); tj.Status != "done" || tj.Attempt != 1 {
		t.Fatalf("got %+v, want done after 1 attempt", tj)
	}
	var audit []struct{ Action string }
	gatewaytest.Call(t, "GET", base+"/v1/audit", nil, &audit)
	if len(audit) != 3 || audit[0].Action != "duplicate_prevented" {
		t.Fatalf("got audit %v, want the 3 replays counted as duplicates prevented", audit)
	}
}

func TestServer_BadInput(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	var ok gatewaytest.OrderJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("keep-1", "hot"), &ok); code != 201 {
		t.Fatalf("got %d, want 201", code)
	}
	gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	gatewaytest.WaitStatus(t, base, "order_keep-1_station_hot", "done", 10*time.Second)

	big := `{"order_id":"big","items":[{"name":"` + strings.Repeat("x", 1<<20) + `","qty":1,"station":"hot"}]}`
	for _, tc := range []struct {
		name, method, path, tok string
		body                    any
		want                    int
		mention                 string
	}{
		{"NoToken", "POST", "/v1/orders", "", gatewaytest.Order("x1", "hot"), 401, "token"},
		{"BadToken", "POST", "/v1/orders", "wrong-token", gatewaytest.Order("x1", "hot"), 401, "token"},
		{"MalformedJSON", "POST", "/v1/orders", gatewaytest.Token, `{"order_id": "x2", "items": [`, 400, "JSON"},
		{"WrongType", "POST", "/v1/orders", gatewaytest.Token, `{"order_id": "x2", "items": [{"name":"a","qty":"one","station":"hot"}]}`, 400, "items[0].qty must be an integer, not a string"},
		{"WrongTypeSecondItem", "POST", "/v1/orders", gatewaytest.Token, `{"order_id": "x2", "items": [{"name":"a","qty":1,"station":"hot"},{"name":"b","qty":1.5,"station":"hot"}]}`, 400, "items[1].qty must be an integer, not 1.5"},
		{"ItemsNotAList", "POST", "/v1/orders", gatewaytest.Token, `{"order_id": "x2", "items": {"name":"a"}}`, 400, "items must be a list, not an object"},
		{"NotAnObject", "POST", "/v1/orders", gatewaytest.Token, `[1]`, 400, "the body must be a JSON object, not a list"},
		{"UnknownStation", "POST", "/v1/orders", gatewaytest.Token, gatewaytest.Order("x3", "hot", "nowhere"), 400, `items[1].station "nowhere" is not a station of this store (its stations: hot)`},
		{"NullName", "POST", "/v1/orders", gatewaytest.Token, `{"order_id":"x8","items":[{"name":null,"qty":1,"station":"hot"}]}`, 400, "items[0].name is required"},
		{"EmptyItems", "POST", "/v1/orders", gatewaytest.Token, map[string]any{"order_id": "x4", "items": []any{}}, 400, "items"},
		{"BadOrderID", "POST", "/v1/orders", gatewaytest.Token, gatewaytest.Order("bad id!", "hot"), 400, "order_id"},
		{"DotDotOrderID", "POST", "/v1/orders", gatewaytest.Token, gatewaytest.Order("..", "hot"), 400, `order_id ".." is not an id`},
		{"DotOrderID", "POST", "/v1/orders", gatewaytest.Token, gatewaytest.Order(".", "hot"), 400, `order_id "." is not an id`},
		{"RightToLeftOverride", "POST", "/v1/orders", gatewaytest.Token, `{"order_id":"x8","items":[{"name":"鸡\u202e丁","qty":1,"station":"hot"}]}`, 400, "items[0].name contains the bidirectional control character U+202E"},
		{"IsolateInNote", "POST", "/v1/orders", gatewaytest.Token, `{"order_id":"x9","note":"\u2067x","items":[{"name":"a","qty":1,"station":"hot"}]}`, 400, "note contains the bidirectional control character U+2067"},
		{"InvalidUTF8", "POST", "/v1/orders", gatewaytest.Token, "{\"order_id\":\"x10\",\"items\":[{\"name\":\"a\xffb\",\"qty\":1,\"station\":\"hot\"}]}", 400, "not valid UTF-8 (at byte 37)"},
		{"UnknownField", "POST", "/v1/orders", gatewaytest.Token, `{"order_id":"x6","tabel":"A1","items":[{"name":"a","qty":1,"station":"hot"}]}`, 400, `unknown field "tabel"`},
		{"UnknownItemField", "POST", "/v1/orders", gatewaytest.Token, `{"order_id":"x7","items":[{"name":"a","qty":1,"station":"hot","price":3}]}`, 400, `items[0].price: unknown field "price"`},
		{"ZeroQty", "POST", "/v1/orders", gatewaytest.Token, `{"order_id":"x5","items":[{"name":"a","qty":0,"station":"hot"}]}`, 400, "qty"},
		{"TooLarge", "POST", "/v1/orders", gatewaytest.Token, big, 413, "1 MiB"},
		{"UnknownTask", "GET", "/v1/tasks/order_nope_station_hot", gatewaytest.Token, nil, 404, "not found"},
		{"BadStatus", "GET", "/v1/tasks?status=eaten", gatewaytest.Token, nil, 400, "status"},
		{"AfterWithStatus", "GET", "/v1/tasks?after=&status=done", gatewaytest.Token, nil, 400, "after"},
		{"WrongMethod", "GET", "/v1/orders", gatewaytest.Token, nil, 405, "use POST"},
		{"UnknownPath", "GET", "/v1/nothing", gatewaytest.Token, nil, 404, "no such endpoint"},
		{"ConflictingReplay", "POST", "/v1/orders", gatewaytest.Token, gatewaytest.Order("keep-1", "hot", "hot"), 409, "different content"},
		{"VoidUnknown", "POST", "/v1/orders/nope/void", gatewaytest.Token, nil, 404, "not found"},
		{"ReprintNoReason", "POST", "/v1/tasks/order_keep-1_station_hot/reprint", gatewaytest.Token, `{"operator":"amy"}`, 400, "reason"},
		{"ResolveNotFlagged", "POST", "/v1/tasks/order_keep-1_station_hot/resolve", gatewaytest.Token, `{"outcome":"printed","operator":"amy","reason":"saw it"}`, 409, "attention_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e struct {
				Error string `json:"error"`
			}
			code := gatewaytest.CallToken(t, tc.tok, tc.method, base+tc.path, tc.body, &e)
			if code != tc.want || !strings.Contains(e.Error, tc.mention) {
				t.Fatalf("got %d %q, want %d naming %q", code, e.Error, tc.want, tc.mention)
			}
		})
	}
	// null for a text that may be left out is the same as leaving it
	// out, as the OpenAPI document says.
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", `{"order_id":"blank-1","table":null,"note":null,"items":[{"name":"a","qty":1,"station":"hot","note":null}]}`, nil); code != 201 {
		t.Fatalf("null table and notes: got %d, want 201", code)
	}
	gatewaytest.WaitStatus(t, base, "order_blank-1_station_hot", "done", 10*time.Second)
	if tk := gatewaytest.WaitPrinted(t, hot, 2, 10*time.Second)[1]; strings.Contains(tk.Text, "null") {
		t.Fatalf("the ticket says null: %q", tk.Text)
	}

	// Nothing accepted changed.
	if tj := gatewaytest.GetTask(t, base, "order_keep-1_station_hot"); tj.Status != "done" || tj.Attempt != 1 {
		t.Fatalf("got %+v, want the accepted task unchanged", tj)
	}
	var all []gatewaytest.TaskJSON
	gatewaytest.Call(t, "GET", base+"/v1/tasks", nil, &all)
	if len(all) != 2 {
		t.Fatalf("got %d tasks, want only the two accepted", len(all))
	}
	if n := len(hot.Printed()); n != 2 {
		t.Fatalf("got %d tickets, want 2", n)
	}
}

// A confirmation lost after the paper came out.
func TestServer_LostConfirmation(t *testing.T) {
	t.Parallel()
	t.Run("Hold", func(t *testing.T) {
		t.Parallel()
		hot := gatewaytest.StartSim(t, printersim.FaultLostAck)
		cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr, OnUncertain: "hold"}},
			[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
		_, base := runGateway(t, cfg)
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("lost-1", "hot"), nil)
		tj := gatewaytest.WaitStatus(t, base, "order_lost-1_station_hot", "attention_required", 15*time.Second)
		if tj.Reason != "uncertain" {
			t.Errorf("got reason %q, want uncertain", tj.Reason)
		}
		if n := gatewaytest.CountPaper(hot.Printed(), "order_lost-1_station_hot"); n != 1 {
			t.Fatalf("got %d tickets, want exactly 1", n)
		}
	})
	t.Run("Reprint", func(t *testing.T) {
		t.Parallel()
		hot := gatewaytest.StartSim(t, printersim.FaultLostAck)
		cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr, OnUncertain: "reprint"}},
			[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
		_, base := runGateway(t, cfg)
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("lost-2", "hot"), nil)
		first := gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
		if strings.Contains(first[0].Text, "REPRINT") {
			t.Fatalf("first ticket carries REPRINT: %q", first[0].Text)
		}
		gatewaytest.WaitStatus(t, base, "order_lost-2_station_hot", "retry_wait", 10*time.Second)
		hot.SetFault(printersim.FaultNone)
		tickets := gatewaytest.WaitPrinted(t, hot, 2, 20*time.Second)
		if !strings.Contains(tickets[1].Text, "REPRINT") || tickets[1].TaskNo != "order_lost-2_station_hot" {
			t.Fatalf("second ticket %+v, want the same task_no with a REPRINT line", tickets[1])
		}
		gatewaytest.WaitStatus(t, base, "order_lost-2_station_hot", "done", 10*time.Second)
		if n := len(hot.Printed()); n != 2 {
			t.Fatalf("got %d tickets, want 2", n)
		}
	})
}

// A POS asks about its order by its id: the order's tickets, where each
// prints and how it stands, copies included; an unknown order is 404.
func TestServer_GetOrder(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "pass-1", Addr: pass.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	posted := time.Now()
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("go-1", "hot", "pass"), nil); code != 201 {
		t.Fatalf("order: got %d", code)
	}
	hotNo, passNo := "order_go-1_station_hot", "order_go-1_station_pass"
	gatewaytest.WaitStatus(t, base, hotNo, "done", 10*time.Second)
	if code := gatewaytest.Call(t, "POST", base+"/v1/tasks/"+hotNo+"/reprint", map[string]string{"operator": "amy", "reason": "spilt"}, nil); code != 201 {
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
		if code := gatewaytest.Call(t, "GET", base+"/v1/orders/go-1", nil, &o); code != 200 {
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
		if code := gatewaytest.Call(t, "GET", base+"/v1/orders/nope", nil, &e); code != 404 || e.Error == "" {
			t.Fatalf("unknown order: got %d %q, want 404 with an error", code, e.Error)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		if code := gatewaytest.CallToken(t, "", "GET", base+"/v1/orders/go-1", nil, nil); code != 401 {
			t.Fatalf("without a token: got %d, want 401", code)
		}
	})
}
