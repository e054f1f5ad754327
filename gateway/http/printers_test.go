package http_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// Paper end with tickets waiting: shown within 2 s, the tickets neither fail
// nor get flagged, and they print within 2 s of the paper coming back.
func TestServer_PaperEnd(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	for _, id := range []string{"pe-1", "pe-2", "pe-3"} {
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot"), nil)
	}
	gatewaytest.WaitPrinter(t, base, "hot-1", 2*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "paper_end" })
	for _, id := range []string{"pe-1", "pe-2", "pe-3"} {
		if tj := gatewaytest.GetTask(t, base, "order_"+id+"_station_hot"); tj.Status != "queued" && tj.Status != "retry_wait" {
			t.Fatalf("task %s: got %s while the paper is out, want it waiting", id, tj.Status)
		}
	}
	hot.SetFault(printersim.FaultNone)
	got := gatewaytest.WaitPrinted(t, hot, 3, 2*time.Second+500*time.Millisecond)
	for i, id := range []string{"pe-1", "pe-2", "pe-3"} {
		if got[i].TaskNo != "order_"+id+"_station_hot" {
			t.Errorf("ticket %d: got %s, want %s in order", i, got[i].TaskNo, id)
		}
	}
	for _, id := range []string{"pe-1", "pe-2", "pe-3"} {
		gatewaytest.WaitStatus(t, base, "order_"+id+"_station_hot", "done", 5*time.Second)
	}
	if n := len(hot.Printed()); n != 3 {
		t.Fatalf("got %d tickets, want 3", n)
	}
}

// Voiding an order while its printer is out of paper: its tickets never
// print after the paper is back.
func TestServer_Void(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("void-1", "hot", "cold"), nil)
	gatewaytest.WaitPrinter(t, base, "hot-1", 5*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "paper_end" })
	var res gatewaytest.OrderJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders/void-1/void", map[string]string{"operator": "amy", "reason": "guest left"}, &res); code != 200 {
		t.Fatalf("void: got %d", code)
	}
	for _, tk := range res.Tasks {
		if tk.Status != "cancelled" {
			t.Fatalf("task %s: got %s, want cancelled", tk.TaskNo, tk.Status)
		}
	}
	hot.SetFault(printersim.FaultNone)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("after-void", "hot"), nil)
	got := gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	gatewaytest.WaitStatus(t, base, "order_after-void_station_hot", "done", 5*time.Second)
	for _, tk := range append(got, hot.Printed()...) {
		if strings.Contains(tk.TaskNo, "void-1") {
			t.Fatalf("voided ticket printed: %s", tk.TaskNo)
		}
	}
}

// A ticket older than stale_after when its printer recovers is flagged, not
// printed; a younger one prints; one click prints the stale one.
func TestServer_Stale(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1", StaleAfter: "1s"}, {Name: "cold", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("old-1", "hot"), nil)
	tj := gatewaytest.WaitStatus(t, base, "order_old-1_station_hot", "attention_required", 10*time.Second)
	if tj.Reason != "stale" {
		t.Fatalf("got reason %q, want stale", tj.Reason)
	}
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("young-1", "cold"), nil)
	hot.SetFault(printersim.FaultNone)
	got := gatewaytest.WaitPrinted(t, hot, 1, 5*time.Second)
	if got[0].TaskNo != "order_young-1_station_cold" {
		t.Fatalf("got %s on paper, want the young ticket", got[0].TaskNo)
	}
	gatewaytest.WaitStatus(t, base, "order_young-1_station_cold", "done", 5*time.Second)
	if n := gatewaytest.CountPaper(hot.Printed(), "order_old-1_station_hot"); n != 0 {
		t.Fatalf("stale ticket printed %d times without a click", n)
	}
	// One click for the station's stale tickets.
	var printed []gatewaytest.TaskJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/stations/hot/print-stale", gatewaytest.Staff, &printed); code != 200 || len(printed) != 1 {
		t.Fatalf("print-stale: got %d %v, want one task", code, printed)
	}
	gatewaytest.WaitStatus(t, base, "order_old-1_station_hot", "done", 5*time.Second)
	if n := gatewaytest.CountPaper(hot.Printed(), "order_old-1_station_hot"); n != 1 {
		t.Fatalf("got %d stale tickets after the click, want 1", n)
	}
}

// With hot-1 down, the hot station's tickets print on its backup within
// the threshold plus 5 s, each once, marked on paper; acknowledge and move
// back through the API.
func TestServer_Failover(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultDown), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{
		{ID: "hot-1", Addr: hot.Addr, Backup: "pass-1", Extra: "failover_after = \"2s\"\n"},
		{ID: "pass-1", Addr: pass.Addr},
	}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
	_, base := runGateway(t, cfg)
	start := time.Now()
	for _, id := range []string{"fo-1", "fo-2", "fo-3"} {
		gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot"), nil)
	}
	got := gatewaytest.WaitPrinted(t, pass, 3, 2*time.Second+5*time.Second)
	t.Logf("on the backup after %s", time.Since(start).Round(time.Millisecond))
	for _, tk := range got {
		if !strings.Contains(tk.Text, "BACKUP FROM hot-1") {
			t.Errorf("ticket %s does not say it is a backup print: %q", tk.TaskNo, tk.Text)
		}
	}
	for _, id := range []string{"fo-1", "fo-2", "fo-3"} {
		tj := gatewaytest.WaitStatus(t, base, "order_"+id+"_station_hot", "done", 5*time.Second)
		if tj.PrinterID != "pass-1" || tj.BackupFrom != "hot-1" {
			t.Errorf("task %s: got printer %s backup_from %q", id, tj.PrinterID, tj.BackupFrom)
		}
		if n := gatewaytest.CountPaper(pass.Printed(), "order_"+id+"_station_hot"); n != 1 {
			t.Errorf("task %s printed %d times, want 1", id, n)
		}
	}
	p := gatewaytest.GetPrinter(t, base, "hot-1")
	if p.Failover == nil || !p.Failover.Active || p.Failover.Backup != "pass-1" || p.Failover.Acknowledged {
		t.Fatalf("got failover %+v, want active to pass-1, not acknowledged", p.Failover)
	}
	// New tickets of the station go to the backup while failed over.
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("fo-4", "hot"), nil)
	gatewaytest.WaitPrinted(t, pass, 4, 5*time.Second)

	if code := gatewaytest.Call(t, "POST", base+"/v1/printers/hot-1/acknowledge", gatewaytest.Staff, nil); code != 200 {
		t.Fatalf("acknowledge: got %d", code)
	}
	if p := gatewaytest.GetPrinter(t, base, "hot-1"); p.Failover == nil || !p.Failover.Acknowledged || !p.Failover.Active {
		t.Fatalf("got %+v, want acknowledged and still active", p.Failover)
	}
	// Moving back while the printer still reports trouble is refused with
	// the reason, unless forced.
	var refused struct{ Error string }
	if code := gatewaytest.Call(t, "POST", base+"/v1/printers/hot-1/failback", gatewaytest.Staff, &refused); code != 409 || !strings.Contains(refused.Error, "unreachable") {
		t.Fatalf("failback while hot-1 is down: got %d %q, want 409 naming the trouble", code, refused.Error)
	}
	hot.SetFault(printersim.FaultNone)
	gatewaytest.WaitPrinter(t, base, "hot-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "ready" })
	if code := gatewaytest.Call(t, "POST", base+"/v1/printers/hot-1/failback", gatewaytest.Staff, nil); code != 200 {
		t.Fatalf("failback: got %d", code)
	}
	if p := gatewaytest.GetPrinter(t, base, "hot-1"); p.Failover != nil {
		t.Fatalf("got failover %+v after acknowledge and failback, want none", p.Failover)
	}
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("fo-5", "hot"), nil)
	back := gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	if back[0].TaskNo != "order_fo-5_station_hot" || strings.Contains(back[0].Text, "BACKUP") {
		t.Fatalf("got %+v on hot-1, want fo-5 without a backup line", back[0])
	}
	var audit []struct{ Action string }
	gatewaytest.Call(t, "GET", base+"/v1/audit", nil, &audit)
	if len(audit) != 2 || audit[0].Action != "acknowledge_failover" || audit[1].Action != "failback" {
		t.Fatalf("got audit %v, want acknowledge_failover then failback", audit)
	}
}

// Make-up print of a flagged ticket prints exactly one more; a second
// make-up of the now-done task prints nothing; resolve closes another
// flagged ticket with nothing printed; a copy prints once more, marked.
func TestServer_MakeUp(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultLostAck)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	a, b := "order_mu-a_station_hot", "order_mu-b_station_hot"
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("mu-a", "hot"), nil)
	gatewaytest.WaitStatus(t, base, a, "attention_required", 15*time.Second)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("mu-b", "hot"), nil)
	gatewaytest.WaitStatus(t, base, b, "attention_required", 15*time.Second)
	if n := len(hot.Printed()); n != 2 {
		t.Fatalf("got %d tickets, want 2", n)
	}
	hot.SetFault(printersim.FaultNone)

	var res struct {
		Changed bool   `json:"changed"`
		Message string `json:"message"`
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/tasks/"+a+"/retry", gatewaytest.Staff, &res); code != 200 || !res.Changed {
		t.Fatalf("retry: got %d %+v", code, res)
	}
	got := gatewaytest.WaitPrinted(t, hot, 3, 10*time.Second)
	if got[2].TaskNo != a || !strings.Contains(got[2].Text, "REPRINT") {
		t.Fatalf("make-up ticket %+v, want %s marked REPRINT", got[2], a)
	}
	gatewaytest.WaitStatus(t, base, a, "done", 5*time.Second)
	if code := gatewaytest.Call(t, "POST", base+"/v1/tasks/"+a+"/retry", gatewaytest.Staff, &res); code != 200 || res.Changed || !strings.Contains(res.Message, "already printed") {
		t.Fatalf("second retry: got %d %+v, want a no-op that says so", code, res)
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/tasks/"+b+"/resolve", map[string]string{"outcome": "printed", "operator": "amy", "reason": "saw it at the pass"}, nil); code != 200 {
		t.Fatalf("resolve: got %d", code)
	}
	if tj := gatewaytest.GetTask(t, base, b); tj.Status != "done" {
		t.Fatalf("resolved task: got %s, want done", tj.Status)
	}
	var cp gatewaytest.TaskJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/tasks/"+a+"/reprint", map[string]string{"operator": "amy", "reason": "dropped on the floor"}, &cp); code != 201 || cp.TaskNo != a+"_copy_1" {
		t.Fatalf("reprint: got %d %+v", code, cp)
	}
	got = gatewaytest.WaitPrinted(t, hot, 4, 10*time.Second)
	if got[3].TaskNo != a+"_copy_1" || !strings.Contains(got[3].Text, "REPRINT") {
		t.Fatalf("copy ticket %+v, want %s_copy_1 marked REPRINT", got[3], a)
	}
	gatewaytest.WaitStatus(t, base, a+"_copy_1", "done", 5*time.Second)
	if n := len(hot.Printed()); n != 4 {
		t.Fatalf("got %d tickets, want 4 (two lost confirmations, one make-up, one copy)", n)
	}
	var audit []struct {
		Action   string `json:"action"`
		Operator string `json:"operator"`
		TaskNo   string `json:"task_no"`
	}
	gatewaytest.Call(t, "GET", base+"/v1/audit", nil, &audit)
	var actions []string
	for _, e := range audit {
		actions = append(actions, e.Action+":"+e.TaskNo)
		if e.Operator != "amy" {
			t.Errorf("audit %s: operator %q, want amy", e.Action, e.Operator)
		}
	}
	if want := "retry:" + a + " resolve:" + b + " reprint:" + a; strings.Join(actions, " ") != want {
		t.Fatalf("got audit %v, want %s", actions, want)
	}
}

// With failback_after set, the stations move back by themselves once the
// printer has been healthy that long; the failover stays shown until a
// person acknowledges it.
func TestServer_FailbackAfterHealthy(t *testing.T) {
	t.Parallel()
	hot, pass := gatewaytest.StartSim(t, printersim.FaultDown), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{
		{ID: "hot-1", Addr: hot.Addr, Backup: "pass-1", Extra: "failover_after = \"1s\"\nfailback_after = \"1s\"\n"},
		{ID: "pass-1", Addr: pass.Addr},
	}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("fb-1", "hot"), nil)
	gatewaytest.WaitPrinted(t, pass, 1, 10*time.Second)
	hot.SetFault(printersim.FaultNone)
	p := gatewaytest.WaitPrinter(t, base, "hot-1", 15*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Failover != nil && !p.Failover.Active })
	if p.Failover.Acknowledged {
		t.Fatalf("got %+v, want the failover still shown until acknowledged", p.Failover)
	}
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("fb-2", "hot"), nil)
	got := gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	if got[0].TaskNo != "order_fb-2_station_hot" {
		t.Fatalf("got %s on hot-1, want fb-2", got[0].TaskNo)
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/printers/hot-1/acknowledge", gatewaytest.Staff, nil); code != 200 {
		t.Fatalf("acknowledge: %d", code)
	}
	if p := gatewaytest.GetPrinter(t, base, "hot-1"); p.Failover != nil {
		t.Fatalf("got %+v after acknowledging, want no failover shown", p.Failover)
	}
}

// An unreachable printer holds its tickets without an attempt (nothing is
// leased, counted or written while it is away) and prints them once, at
// once, when it is back.
func TestServer_Unreachable(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultDown)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	no := "order_ur-1_station_hot"
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("ur-1", "hot"), nil)
	gatewaytest.WaitPrinter(t, base, "hot-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "offline" })
	if tj := gatewaytest.GetTask(t, base, no); tj.Status != "queued" || tj.Attempt != 0 {
		t.Fatalf("got %s attempt %d while the printer is unreachable, want queued attempt 0", tj.Status, tj.Attempt)
	}
	hot.SetFault(printersim.FaultNone)
	tj := gatewaytest.WaitStatus(t, base, no, "done", 10*time.Second)
	if tj.Attempt != 1 {
		t.Fatalf("got attempt %d, want the first attempt to print", tj.Attempt)
	}
	if got := gatewaytest.WaitPrinted(t, hot, 1, 5*time.Second); len(got) != 1 || strings.Contains(got[0].Text, "REPRINT") {
		t.Fatalf("got %+v, want one ticket without REPRINT (nothing could have printed before)", got)
	}
}

// Failover in seconds, on the real program: a printer made offline with
// tickets waiting hands them to its backup within 10 s, the paper saying
// where they came from; a printer gone from the network whose backup is
// out of paper hands them to the backup's backup, never to the one out of
// paper.
func TestServer_FailoverInSeconds(t *testing.T) {
	t.Parallel()
	t.Run("Offline", func(t *testing.T) {
		t.Parallel()
		hot, pass := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultNone)
		cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{
			{ID: "hot-1", Addr: hot.Addr, Backup: "pass-1"},
			{ID: "pass-1", Addr: pass.Addr},
		}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
		_, base := runGateway(t, cfg)
		gatewaytest.WaitPrinter(t, base, "hot-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "ready" })
		hot.SetFault(printersim.FaultOffline)
		offline := time.Now()
		for _, id := range []string{"fs-1", "fs-2"} {
			if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot"), nil); code != 201 {
				t.Fatalf("order %s: got %d", id, code)
			}
		}
		got := gatewaytest.WaitPrinted(t, pass, 2, 10*time.Second)
		t.Logf("on the backup %s after hot-1 went offline", time.Since(offline).Round(time.Millisecond))
		for _, tk := range got {
			if !strings.Contains(tk.Text, "BACKUP FROM hot-1") {
				t.Errorf("ticket %s does not say it is a backup print: %q", tk.TaskNo, tk.Text)
			}
		}
		if n := len(hot.Printed()); n != 0 {
			t.Errorf("hot-1 printed %d tickets while offline", n)
		}
	})
	t.Run("GoneBackupOutOfPaper", func(t *testing.T) {
		t.Parallel()
		hot, pass, expo := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultPaperEnd), gatewaytest.StartSim(t, printersim.FaultNone)
		cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{
			{ID: "hot-1", Addr: hot.Addr, Backup: "pass-1"},
			{ID: "pass-1", Addr: pass.Addr, Backup: "expo-1"},
			{ID: "expo-1", Addr: expo.Addr},
		}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}})
		_, base := runGateway(t, cfg)
		gatewaytest.WaitPrinter(t, base, "hot-1", 10*time.Second, func(p gatewaytest.PrinterJSON) bool { return p.Status == "ready" })
		hot.Close() // the printer is gone: nothing answers at its address
		gone := time.Now()
		if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("fs-3", "hot"), nil); code != 201 {
			t.Fatalf("order: got %d", code)
		}
		got := gatewaytest.WaitPrinted(t, expo, 1, 10*time.Second)
		t.Logf("on the backup's backup %s after hot-1 went away", time.Since(gone).Round(time.Millisecond))
		if !strings.Contains(got[0].Text, "BACKUP FROM hot-1") {
			t.Errorf("ticket %s does not say it is a backup print: %q", got[0].TaskNo, got[0].Text)
		}
		if p := gatewaytest.GetPrinter(t, base, "hot-1"); p.Failover == nil || p.Failover.Backup != "expo-1" {
			t.Errorf("got hot-1 failover %+v, want onto expo-1", p.Failover)
		}
		tj := gatewaytest.WaitStatus(t, base, "order_fs-3_station_hot", "done", 5*time.Second)
		if tj.PrinterID != "expo-1" || tj.BackupFrom != "hot-1" {
			t.Errorf("got printer %s backup_from %q, want expo-1 from hot-1", tj.PrinterID, tj.BackupFrom)
		}
		if n := len(pass.Printed()); n != 0 {
			t.Errorf("pass-1 is out of paper and printed %d", n)
		}
	})
}
