package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	if seedDir != "" {
		os.RemoveAll(seedDir)
	}
	os.Exit(code)
}

// gatewayBinary builds the real gateway with failpoints compiled in.
func gatewayBinary(t testing.TB) string {
	return testbin.Build(t, "github.com/storeprint/storeprint/cmd/storeprint-gateway", "failpoints")
}

// proc is the gateway running as its own process.
type proc struct {
	*testbin.Gateway
	base string
}

func startProc(t testing.TB, cfg string, env ...string) *proc {
	t.Helper()
	g := testbin.StartGateway(t, gatewayBinary(t), cfg, env...)
	return &proc{Gateway: g, base: g.Base}
}

func (p *proc) kill(t testing.TB) { p.Kill(t) }

func (p *proc) waitExit(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.Exited:
	case <-time.After(timeout):
		t.Fatalf("gateway did not stop at the failpoint:\n%s", p.Log())
	}
}

// The real gateway killed with SIGKILL while orders stream in, then
// restarted: every order that got a 201 is printed or flagged; none is
// printed twice without a flag.
func TestProcess_KillWhileStreaming(t *testing.T) {
	t.Parallel()
	hot, cold := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultNone)
	dataDir := t.TempDir()
	cfg := writeConfig(t, gatewaytest.Config(t, dataDir,
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	p := startProc(t, cfg)

	var mu stdsync.Mutex
	accepted := map[string]bool{}
	ctx, stop := context.WithCancel(context.Background())
	var wg stdsync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 5000; i++ {
				id := fmt.Sprintf("k%d-%04d", c, i)
				code, err := postQuiet(p.base, gatewaytest.Order(id, "hot", "cold"))
				if err != nil {
					return // the gateway is gone
				}
				if code == 201 {
					mu.Lock()
					accepted[id] = true
					n := len(accepted)
					mu.Unlock()
					if n == 150 {
						p.kill(t)
					}
				}
			}
		}()
	}
	<-p.Exited
	stop()
	wg.Wait()
	mu.Lock()
	n := len(accepted)
	mu.Unlock()
	if n < 150 {
		t.Fatalf("only %d orders accepted before the kill", n)
	}

	p2 := startProc(t, cfg)
	all := gatewaytest.Settle(t, p2.base, time.Minute)
	byNo := map[string]gatewaytest.TaskJSON{}
	for _, tj := range all {
		byNo[tj.TaskNo] = tj
	}
	paper := map[string]int{}
	for _, tk := range append(hot.Printed(), cold.Printed()...) {
		paper[tk.TaskNo]++
	}
	flagged := 0
	for id := range accepted {
		for _, st := range []string{"hot", "cold"} {
			no := "order_" + id + "_station_" + st
			tj, ok := byNo[no]
			switch {
			case !ok:
				t.Errorf("%s: accepted with 201 but lost", no)
			case tj.Status == "done" && paper[no] != 1:
				t.Errorf("%s: done with %d tickets on paper", no, paper[no])
			case tj.Status == "attention_required":
				flagged++
			case tj.Status != "done":
				t.Errorf("%s: got %s, want done or attention_required", no, tj.Status)
			}
		}
	}
	for no, c := range paper {
		if c > 1 && byNo[no].Status != "attention_required" {
			t.Errorf("%s printed %d times without a flag", no, c)
		}
	}
	t.Logf("%d orders accepted before the kill, %d tasks flagged after the restart", n, flagged)
}

func postQuiet(base string, body any) (int, error) {
	req, err := gatewaytest.NewJSONRequest("POST", base+"/v1/orders", body)
	if err != nil {
		return 0, err
	}
	resp, err := gatewaytest.Client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Each failpoint stops the real process at one step of an attempt; after a
// restart the outcome is checked against the simulator's paper: never a
// silent duplicate, never a silent loss, every uncertain case flagged.
func TestProcess_Failpoints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failpoint string
		policy    string
		paper     int // tickets on paper when the process dies
	}{
		{"after-prepared", "hold", 0},
		{"before-submitted", "hold", 1},
		{"before-printed", "hold", 1},
		{"before-printed", "reprint", 1},
	} {
		t.Run(tc.failpoint+"/"+tc.policy, func(t *testing.T) {
			t.Parallel()
			// The printer holds the ticket until the order was answered, so
			// the process cannot die before the 201 is out.
			hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd)
			cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr, OnUncertain: tc.policy}},
				[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
			p := startProc(t, cfg, "STOREPRINT_FAILPOINT="+tc.failpoint)
			no := "order_fp-1_station_hot"
			if code, err := postQuiet(p.base, gatewaytest.Order("fp-1", "hot")); err != nil || code != 201 {
				t.Fatalf("order: got %d %v, want 201", code, err)
			}
			hot.SetFault(printersim.FaultNone)
			p.waitExit(t, 20*time.Second)
			if tc.paper > 0 {
				gatewaytest.WaitPrinted(t, hot, tc.paper, 10*time.Second)
			}
			if n := len(hot.Printed()); n != tc.paper {
				t.Fatalf("got %d tickets when the process died, want %d", n, tc.paper)
			}

			p2 := startProc(t, cfg)
			gatewaytest.Settle(t, p2.base, 30*time.Second)
			tj := gatewaytest.GetTask(t, p2.base, no)
			switch tc.policy {
			case "hold":
				// Nobody knows whether paper came out: flagged, not reprinted.
				if tj.Status != "attention_required" || tj.Reason != "uncertain" {
					t.Fatalf("got %s (%s), want attention_required (uncertain)", tj.Status, tj.Reason)
				}
				if n := len(hot.Printed()); n != tc.paper {
					t.Fatalf("got %d tickets after the restart, want %d", n, tc.paper)
				}
				// A person's make-up print: exactly one more ticket, marked.
				gatewaytest.Call(t, "POST", p2.base+"/v1/tasks/"+no+"/retry", gatewaytest.Staff, nil)
				got := gatewaytest.WaitPrinted(t, hot, tc.paper+1, 10*time.Second)
				if !strings.Contains(got[tc.paper].Text, "REPRINT") {
					t.Errorf("make-up ticket does not say REPRINT: %q", got[tc.paper].Text)
				}
				gatewaytest.WaitStatus(t, p2.base, no, "done", 5*time.Second)
			case "reprint":
				// Printed again, visibly marked.
				got := gatewaytest.WaitPrinted(t, hot, tc.paper+1, 10*time.Second)
				if !strings.Contains(got[tc.paper].Text, "REPRINT") {
					t.Errorf("automatic reprint does not say REPRINT: %q", got[tc.paper].Text)
				}
				gatewaytest.WaitStatus(t, p2.base, no, "done", 5*time.Second)
			}
			if n := len(hot.Printed()); n != tc.paper+1 {
				t.Fatalf("got %d tickets in the end, want %d", n, tc.paper+1)
			}
		})
	}
}

// Failover on the real programs: the gateway as its own process, the
// printer hot-1 a printer simulator process of its own that is killed
// with tickets about to come; its backup pass-1 is out of paper. The next
// ticket comes out of the backup's backup, expo-1, within 10 s, saying
// where it came from.
func TestProcess_FailoverPrinterProcessGone(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hotAddr := l.Addr().String()
	l.Close()
	sim := exec.Command(testbin.Build(t, "github.com/storeprint/storeprint/cmd/storeprint"), "printersim", "--name", "hot-1", "--listen", hotAddr, "--out", filepath.Join(t.TempDir(), "hot-1.jsonl"))
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sim.Process.Kill()
		sim.Wait()
	})
	pass, expo := gatewaytest.StartSim(t, printersim.FaultPaperEnd), gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{
		{ID: "hot-1", Addr: hotAddr, Backup: "pass-1"},
		{ID: "pass-1", Addr: pass.Addr, Backup: "expo-1"},
		{ID: "expo-1", Addr: expo.Addr},
	}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "pass", Printer: "pass-1"}}))
	g := startProc(t, cfg)
	if code := gatewaytest.Call(t, "POST", g.base+"/v1/orders", gatewaytest.Order("pg-1", "hot"), nil); code != 201 {
		t.Fatalf("order: got %d", code)
	}
	gatewaytest.WaitStatus(t, g.base, "order_pg-1_station_hot", "done", 20*time.Second)
	if got := gatewaytest.GetTask(t, g.base, "order_pg-1_station_hot"); got.PrinterID != "hot-1" {
		t.Fatalf("the first ticket printed on %s, want hot-1 while it runs", got.PrinterID)
	}

	if err := sim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	sim.Wait()
	gone := time.Now()
	if code := gatewaytest.Call(t, "POST", g.base+"/v1/orders", gatewaytest.Order("pg-2", "hot"), nil); code != 201 {
		t.Fatalf("order: got %d", code)
	}
	got := gatewaytest.WaitPrinted(t, expo, 1, 10*time.Second)
	t.Logf("on the backup's backup %s after the printer's process was killed", time.Since(gone).Round(time.Millisecond))
	if got[0].TaskNo != "order_pg-2_station_hot" || !strings.Contains(got[0].Text, "BACKUP FROM hot-1") {
		t.Fatalf("got %s on expo-1: %q, want pg-2 saying BACKUP FROM hot-1", got[0].TaskNo, got[0].Text)
	}
	if n := len(pass.Printed()); n != 0 {
		t.Errorf("pass-1 is out of paper and printed %d", n)
	}
}
