package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A backup taken while the gateway runs, with tickets waiting, restores
// into a store that check calls sound; the restored gateway prints none of
// what printed before the backup, and holds the tickets that were waiting
// then (they may have printed since) for a person.
func TestProcess_BackupRestore(t *testing.T) {
	t.Parallel()
	hot, cold := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	data := filepath.Join(t.TempDir(), "data")
	cfg := writeConfig(t, gatewaytest.Config(t, data, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	bin := gatewayBinary(t)
	g, exit := testbin.TryGateway(t, bin, cfg)
	if exit != nil {
		t.Fatalf("gateway did not start: %s", exit.Log)
	}
	const orders = 50
	for i := 0; i < orders; i++ {
		if code, err := postQuiet(g.Base, gatewaytest.Order(fmt.Sprintf("b%02d", i), "hot", "cold")); err != nil || code != 201 {
			t.Fatalf("order %d: %d %v", i, code, err)
		}
	}
	gatewaytest.WaitPrinted(t, hot, orders, time.Minute)
	want := quietStates(t, g.Base)

	backup := filepath.Join(t.TempDir(), "nightly.backup")
	b := testbin.Run(t, time.Minute, bin, "backup", "--config", cfg, "--gateway", g.Base, "--out", backup)
	if b.Code != 0 || !strings.Contains(b.Stdout, "through the running gateway") {
		t.Fatalf("online backup: exit %d:\n%s%s", b.Code, b.Stdout, b.Log)
	}
	t.Logf("backup: %s", strings.TrimSpace(b.Stdout))
	if fi, err := os.Stat(backup); err != nil || !strings.Contains(b.Stdout, fmt.Sprintf("(%d bytes)", fi.Size())) {
		t.Fatalf("backup said %q; want the file's size (%v)", b.Stdout, fi)
	}
	// While the gateway holds the data dir, check and restore refuse and say why.
	for _, args := range [][]string{{"check", "--config", cfg}, {"restore", "--config", cfg, "--in", backup}} {
		if e := testbin.Run(t, time.Minute, bin, args...); e.Code != 2 || !strings.Contains(e.Log, "gateway running") {
			t.Fatalf("%s while the gateway runs: exit %d, want 2 saying it runs:\n%s", args[0], e.Code, e.Log)
		}
	}
	// Later, more printing, then the data dir is lost: restore.
	cold.SetFault(printersim.FaultNone)
	gatewaytest.WaitPrinted(t, cold, orders, time.Minute)
	if e := g.Stop(t, time.Minute); e.Code != 0 {
		t.Fatalf("stop: exit %d:\n%s", e.Code, e.Log)
	}
	if c := testbin.Run(t, time.Minute, bin, "check", "--config", cfg); c.Code != 0 || !strings.Contains(c.Stdout, "sound") {
		t.Fatalf("check before the restore: exit %d:\n%s%s", c.Code, c.Stdout, c.Log)
	}
	// A backup cut short, damaged or another store's: exit status 1, as
	// restore --help says, and the data dir left alone.
	whole, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	damaged := slices.Clone(whole)
	damaged[len(damaged)/2] ^= 0xff
	for name, body := range map[string][]byte{"cut short": whole[:len(whole)-100], "damaged": damaged} {
		path := filepath.Join(t.TempDir(), "bad.backup")
		if err := os.WriteFile(path, body, 0o600); err != nil {
			t.Fatal(err)
		}
		if e := testbin.Run(t, time.Minute, bin, "restore", "--config", cfg, "--in", path); e.Code != 1 {
			t.Fatalf("restore of a backup %s: exit %d, want 1:\n%s%s", name, e.Code, e.Stdout, e.Log)
		}
	}
	other := writeConfig(t, gatewaytest.Config(t, filepath.Join(t.TempDir(), "other"), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	if b, err := os.ReadFile(other); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(other, []byte(strings.Replace(string(b), `store_id = "store-test"`, `store_id = "store-other"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if e := testbin.Run(t, time.Minute, bin, "restore", "--config", other, "--in", backup); e.Code != 1 || !strings.Contains(e.Log, "store-other") {
		t.Fatalf("restore of another store's backup: exit %d, want 1 naming the stores:\n%s%s", e.Code, e.Stdout, e.Log)
	}
	r := testbin.Run(t, time.Minute, bin, "restore", "--config", cfg, "--in", backup)
	if r.Code != 0 {
		t.Fatalf("restore: exit %d:\n%s%s", r.Code, r.Stdout, r.Log)
	}
	t.Logf("restore: %s", strings.TrimSpace(r.Stdout))
	c := testbin.Run(t, time.Minute, bin, "check", "--config", cfg)
	if c.Code != 0 || !strings.Contains(c.Stdout, "sound") || !strings.Contains(c.Stdout, "pending") {
		t.Fatalf("check after the restore: exit %d, want 0 with the hold pending:\n%s%s", c.Code, c.Stdout, c.Log)
	}

	hot2, cold2 := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg2 := writeConfig(t, gatewaytest.Config(t, data, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot2.Addr}, {ID: "cold-1", Addr: cold2.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	g2, exit := testbin.TryGateway(t, bin, cfg2)
	if exit != nil {
		t.Fatalf("restored gateway did not start: %s", exit.Log)
	}
	held, lost := checkStart(t, want, g2.Base, hot2, cold2)
	if held != orders || lost != 0 || len(hot2.Printed())+len(cold2.Printed()) != 0 {
		t.Fatalf("after the restore: %d held, %d lost, %d printed; want the %d waiting tickets held, nothing printed", held, lost, len(hot2.Printed())+len(cold2.Printed()), orders)
	}
}

// withTop puts top-level keys at the start of a test configuration.
func withTop(t *testing.T, cfg string, lines ...string) string {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Join(lines, "\n")+"\n"+string(b)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// retention = "2s": a printed ticket is gone two seconds later, and its
// order sent again is answered 200 with its task numbers and not printed.
func TestMain_Retention(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := withTop(t, writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})),
		`retention = "2s"`)
	_, base := runGateway(t, cfg)
	var first gatewaytest.OrderJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("r-1", "hot"), &first); code != 201 {
		t.Fatalf("order: got %d", code)
	}
	no := first.Tasks[0].TaskNo
	gatewaytest.WaitPrinted(t, hot, 1, 10*time.Second)
	gatewaytest.WaitStatus(t, base, no, "done", 5*time.Second)
	gatewaytest.WaitUntil(t, base, 20*time.Second, func() (bool, string) {
		code := gatewaytest.Call(t, "GET", base+"/v1/tasks/"+no, nil, nil)
		return code == 404, fmt.Sprintf("task %s still there (%d) after it printed, with retention 2s", no, code)
	})
	var again gatewaytest.OrderJSON
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("r-1", "hot"), &again); code != 200 {
		t.Fatalf("replay of a purged order: got %d, want 200", code)
	}
	if fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("replay answered %+v, want the first answer %+v", again, first)
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", map[string]any{"order_id": "r-1", "items": []map[string]any{{"name": "other", "qty": 1, "station": "hot"}}}, nil); code != 409 {
		t.Fatalf("the purged order id with other content: got %d, want 409", code)
	}
	var open []gatewaytest.TaskJSON
	for _, st := range []string{"queued", "printing", "retry_wait"} {
		var ts []gatewaytest.TaskJSON
		gatewaytest.Call(t, "GET", base+"/v1/tasks?status="+st, nil, &ts)
		open = append(open, ts...)
	}
	if len(open) != 0 || gatewaytest.Call(t, "GET", base+"/v1/tasks/"+no, nil, nil) != 404 {
		t.Fatalf("the replay queued %v, want nothing to print", open)
	}
}
