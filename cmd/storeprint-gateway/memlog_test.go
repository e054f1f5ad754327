package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// A copy of a data dir taken after a kill -9 with 300 tickets accepted,
// its largest memtable log then deleted: the tickets are gone from
// Badger's files, and the witness knows how many commits there were. The
// gateway refuses to start, naming the file and the way out, or starts
// held for a person; it never answers healthy with the tickets gone.
func TestProcess_MissingMemtableLog(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd) // every ticket waits
	data := filepath.Join(t.TempDir(), "data")
	cfg := writeConfig(t, gatewaytest.Config(t, data, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	p := startProc(t, cfg)
	for i := range 300 {
		if code, err := postQuiet(p.base, gatewaytest.Order(fmt.Sprintf("m%03d", i), "hot")); err != nil || code != 201 {
			t.Fatalf("order %d: %d %v", i, code, err)
		}
	}
	gatewaytest.WaitUntil(t, p.base, time.Minute, func() (bool, string) {
		var all []gatewaytest.TaskJSON
		gatewaytest.Call(t, "GET", p.base+"/v1/tasks?limit=1000", nil, &all)
		return len(all) == 300, fmt.Sprintf("%d tasks", len(all))
	})
	p.kill(t)
	copyTo := filepath.Join(t.TempDir(), "data")
	if err := copyDir(data, copyTo); err != nil {
		t.Fatal(err)
	}
	mem := largest(t, copyTo, ".mem")
	remove(t, mem)
	t.Logf("deleted %s", filepath.Base(mem))
	cfg2 := writeConfig(t, gatewaytest.Config(t, copyTo, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	g, exit := testbin.TryGateway(t, gatewayBinary(t), cfg2)
	if exit != nil {
		// The file: the one deleted, or, when no log is left to number it
		// after, the memtable logs (*.mem); and the way out.
		checkRefusal(t, exit)
		if !strings.Contains(exit.Log, filepath.Base(mem)) && !strings.Contains(exit.Log, "memtable log") {
			t.Fatalf("the refusal does not name the memtable log:\n%s", exit.Log)
		}
		t.Logf("refused: %s", exit.Log)
		chk := testbin.Run(t, 2*time.Minute, gatewayBinary(t), "check", "--config", cfg2)
		if chk.Code != 1 || !strings.Contains(chk.Stdout, "DAMAGED") {
			t.Fatalf("check: exit %d, want 1 saying DAMAGED:\n%s%s", chk.Code, chk.Stdout, chk.Log)
		}
		if rep := testbin.Run(t, 2*time.Minute, gatewayBinary(t), "check", "--config", cfg2, "--repair"); rep.Code != 0 {
			t.Fatalf("check --repair: exit %d:\n%s%s", rep.Code, rep.Stdout, rep.Log)
		}
		// Repaired, it starts saying what it lost.
		if g, exit = testbin.TryGateway(t, gatewayBinary(t), cfg2); exit != nil {
			t.Fatalf("the repaired data dir does not start: %s", exit.Log)
		}
		var h struct {
			Storage struct {
				Recovery struct {
					MissingTasks int `json:"missing_tasks"`
				} `json:"recovery"`
			} `json:"storage"`
		}
		gatewaytest.CallToken(t, gatewaytest.Token, "GET", g.Base+"/healthz", nil, &h)
		// The witness records a commit with a later flush of the log, or
		// on its own within a second: the kill may come before it records
		// the last ones. Those it recorded are said to be missing.
		n := h.Storage.Recovery.MissingTasks
		if n < 1 || n > 300 {
			t.Fatalf("repaired: /healthz says %d tasks missing, want those of the 300 the witness recorded", n)
		}
		t.Logf("repaired: %d of the 300 tasks said to be missing (the witness's count at the kill)", n)
		return
	}
	var h struct {
		Status  string          `json:"status"`
		Storage json.RawMessage `json:"storage"`
	}
	code := gatewaytest.CallToken(t, gatewaytest.Token, "GET", g.Base+"/healthz", nil, &h)
	var all []gatewaytest.TaskJSON
	gatewaytest.Call(t, "GET", g.Base+"/v1/tasks?limit=1000", nil, &all)
	t.Logf("started: healthz %d %s %s; %d tasks listed", code, h.Status, h.Storage, len(all))
	if code == 200 && h.Status == "ok" && len(all) < 300 {
		t.Fatalf("healthy with %d of 300 tickets", len(all))
	}
}
