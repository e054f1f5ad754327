package main

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/badger/badgertest"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// seededDir is a real data dir made by the real gateway: 3,000 tasks, most
// printed, some waiting on a printer out of paper. The killed copy was
// taken after SIGKILL (its last writes are in the memtable logs), the
// stopped copy after a clean stop (everything is in tables).
type seededDir struct {
	killed, stopped string
	want            map[string]string // task_no -> status when the copies were taken
	err             error
}

var (
	seedOnce stdsync.Once
	seed     seededDir
	seedDir  string // removed when the tests end
)

const (
	seedOrders  = 1500 // two tasks each
	seedWaiting = 200  // orders whose cold ticket waits on a printer out of paper
)

func seedDataDir(t *testing.T) *seededDir {
	t.Helper()
	seedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "storeprint-seed-")
		if err != nil {
			seed.err = err
			return
		}
		seedDir = dir
		seed.err = makeSeed(t, dir)
	})
	if seed.err != nil {
		t.Fatalf("seed data dir: %v", seed.err)
	}
	return &seed
}

func makeSeed(t *testing.T, dir string) error {
	// Sims that live as long as the seeding (the test that seeds may end
	// before others use the copies).
	hot, err := printersim.New(printersim.Options{Fault: printersim.FaultPaperEnd})
	if err != nil {
		return err
	}
	cold, err := printersim.New(printersim.Options{Fault: printersim.FaultPaperEnd})
	if err != nil {
		return err
	}
	defer hot.Close()
	defer cold.Close()
	addrs := []string{}
	for _, p := range []*printersim.Printer{hot, cold} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		go p.Serve(ln)
		addrs = append(addrs, ln.Addr().String())
	}
	data := filepath.Join(dir, "data")
	cfg := writeConfig(t, gatewaytest.Config(t, data, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: addrs[0]}, {ID: "cold-1", Addr: addrs[1]}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	p := startProc(t, cfg)
	// Every order is accepted before anything prints, so each task's
	// later states lie far from its first in the logs, as in a busy store.
	post := func(from, to int) error {
		var wg stdsync.WaitGroup
		errs := make(chan error, 8)
		for c := 0; c < 8; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + c; i < to; i += 8 {
					code, err := postQuiet(p.base, gatewaytest.Order(fmt.Sprintf("s%04d", i), "hot", "cold"))
					if err != nil || code != 201 {
						errs <- fmt.Errorf("order %d: %d %v", i, code, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	// Most orders are accepted before anything prints, so each task's
	// later states lie far from its first in the logs, as in a busy store.
	if err := post(0, seedOrders-seedWaiting); err != nil {
		return err
	}
	hot.SetFault(printersim.FaultNone)
	cold.SetFault(printersim.FaultNone)
	gatewaytest.WaitPrinted(t, &gatewaytest.Sim{Printer: cold}, seedOrders-seedWaiting, 3*time.Minute)
	cold.SetFault(printersim.FaultPaperEnd) // the last orders' cold tickets wait
	if err := post(seedOrders-seedWaiting, seedOrders); err != nil {
		return err
	}
	gatewaytest.WaitPrinted(t, &gatewaytest.Sim{Printer: hot}, seedOrders, 3*time.Minute)
	want := quietStates(t, p.base)
	p.kill(t)
	seed.killed = filepath.Join(dir, "killed")
	if err := copyDir(data, seed.killed); err != nil {
		return err
	}
	// Start again and stop cleanly: the memtables are written out as tables.
	p2 := startProc(t, cfg)
	quietStates(t, p2.base)
	if e := p2.Stop(t, time.Minute); e.Code != 0 || e.Crashed() {
		return fmt.Errorf("clean stop: exit %d:\n%s", e.Code, e.Log)
	}
	seed.stopped = filepath.Join(dir, "stopped")
	if err := copyDir(data, seed.stopped); err != nil {
		return err
	}
	seed.want = want
	done, waiting := 0, 0
	for _, s := range want {
		switch s {
		case "done":
			done++
		case "queued", "retry_wait":
			waiting++
		}
	}
	t.Logf("seeded data dir: %d tasks, %d done, %d waiting", len(want), done, waiting)
	if len(want) != 2*seedOrders || waiting != seedWaiting || done != 2*seedOrders-seedWaiting {
		return fmt.Errorf("seed: %d tasks, %d done, %d waiting", len(want), done, waiting)
	}
	return nil
}

// quietStates waits until nothing is printing and returns every task's
// status.
func quietStates(t *testing.T, base string) map[string]string {
	var out map[string]string
	gatewaytest.WaitUntil(t, base, time.Minute, func() (bool, string) {
		var all []gatewaytest.TaskJSON
		gatewaytest.Call(t, "GET", base+"/v1/tasks?limit=100000", nil, &all)
		out = map[string]string{}
		printing := 0
		for _, tj := range all {
			out[tj.TaskNo] = tj.Status
			if tj.Status == "printing" {
				printing++
			}
		}
		return printing == 0, fmt.Sprintf("%d tasks still printing", printing)
	})
	return out
}

func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
}

// damage is one way of damaging a copy of the seeded data dir.
type damage struct {
	name   string
	killed bool // damage the killed copy (data in the logs), else the stopped one
	fn     func(t *testing.T, dir string)
	// want: "refuse" (a clean refusal naming the problem, then a repair),
	// "recovered" (starts holding every waiting task) or "sound".
	want string
}

func files(t *testing.T, dir, ext string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ext) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s file in %s", ext, dir)
	}
	sort.Strings(out)
	return out
}

// largest returns the file of dir with the extension holding most data.
func largest(t *testing.T, dir, ext string) string {
	t.Helper()
	best, size := "", int64(-1)
	for _, f := range files(t, dir, ext) {
		if n := used(t, f); n > size {
			best, size = f, n
		}
	}
	return best
}

// used is how much of a file holds data: memtable logs are sparse,
// mapped files, zero after their last entry.
func used(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return int64(n)
}

func flipAt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

var damages = []damage{
	{"MANIFEST/deleted", false, func(t *testing.T, d string) { remove(t, filepath.Join(d, "MANIFEST")) }, "refuse"},
	{"MANIFEST/cut", false, func(t *testing.T, d string) {
		m := filepath.Join(d, "MANIFEST")
		truncate(t, m, used(t, m)/2)
	}, "refuse"},
	{"MANIFEST/flipped", false, func(t *testing.T, d string) {
		m := filepath.Join(d, "MANIFEST")
		flipAt(t, m, used(t, m)/2)
	}, "refuse"},
	{"mem/deleted", true, func(t *testing.T, d string) { remove(t, largest(t, d, ".mem")) }, "refuse"},
	{"mem/flipped", true, func(t *testing.T, d string) {
		f := largest(t, d, ".mem")
		flipAt(t, f, used(t, f)/2)
	}, "recovered"},
	{"mem/truncated", true, func(t *testing.T, d string) {
		f := largest(t, d, ".mem")
		truncate(t, f, used(t, f)/2)
	}, "recovered"},
	{"sst/flipped", false, func(t *testing.T, d string) {
		f := largest(t, d, ".sst")
		badgertest.FlipTable(t, f, used(t, f)/2) // where the table is read: some bytes of it no read covers
	}, "refuse"},
	{"sst/cut", false, func(t *testing.T, d string) {
		f := largest(t, d, ".sst")
		truncate(t, f, used(t, f)/2)
	}, "refuse"},
	{"sst/deleted", false, func(t *testing.T, d string) { remove(t, largest(t, d, ".sst")) }, "refuse"},
	{"vlog/flipped", false, func(t *testing.T, d string) {
		for _, f := range files(t, d, ".vlog") {
			flipAt(t, f, 4)
		}
	}, "any"},
	{"vlog/cut", true, func(t *testing.T, d string) {
		for _, f := range files(t, d, ".vlog") {
			truncate(t, f, 10)
		}
	}, "any"},
	{"KEYREGISTRY/flipped", false, func(t *testing.T, d string) {
		f := filepath.Join(d, "KEYREGISTRY")
		flipAt(t, f, used(t, f)-6) // in the sanity text (the bytes before it are an IV, unused without encryption)
	}, "refuse"},
	{"KEYREGISTRY/deleted", true, func(t *testing.T, d string) { remove(t, filepath.Join(d, "KEYREGISTRY")) }, "any"},
	{"witness/deleted", true, func(t *testing.T, d string) { remove(t, filepath.Join(d, "storeprint.witness")) }, "recovered"},
}

// Copies of a real data dir, damaged in each way a disk or a person can
// damage one, given to the real gateway with simulated printers: every
// time either a clean refusal that names the problem (no panic, no
// crash), after which check says damaged and check --repair makes it
// start; or a start in which no ticket that was printed prints again,
// every task whose state went backwards is held for a person (reason
// recovered), and every task is listed or the gateway says how many it
// lost.
func TestProcess_DamagedDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under testing.Short: it seeds a data dir of 3,000 tasks with the real gateway")
	}
	s := seedDataDir(t)
	bin := gatewayBinary(t)
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			t.Parallel()
			src := s.stopped
			if dm.killed {
				src = s.killed
			}
			data := filepath.Join(t.TempDir(), "data")
			if err := copyDir(src, data); err != nil {
				t.Fatal(err)
			}
			dm.fn(t, data)
			hot, cold := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultNone)
			cfg := writeConfig(t, gatewaytest.Config(t, data, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
				[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
			g, exit := testbin.TryGateway(t, bin, cfg)
			outcome := "started"
			if exit != nil {
				outcome = "refused"
				checkRefusal(t, exit)
				t.Logf("refusal: %s", exit.Log)
				// The way out: check says damaged, --repair keeps what is
				// readable, and the gateway starts.
				chk := testbin.Run(t, 2*time.Minute, bin, "check", "--config", cfg)
				if chk.Code != 1 || chk.Crashed() || !strings.Contains(chk.Stdout, "DAMAGED") {
					t.Fatalf("check on the damaged dir: exit %d, want 1 saying DAMAGED:\n%s%s", chk.Code, chk.Stdout, chk.Log)
				}
				rep := testbin.Run(t, 2*time.Minute, bin, "check", "--config", cfg, "--repair")
				if rep.Code != 0 || rep.Crashed() {
					t.Fatalf("check --repair: exit %d:\n%s%s", rep.Code, rep.Stdout, rep.Log)
				}
				t.Logf("repair: %s", strings.TrimSpace(rep.Stdout))
				if g, exit = testbin.TryGateway(t, bin, cfg); exit != nil {
					t.Fatalf("the repaired data dir does not start: exit %d:\n%s", exit.Code, exit.Log)
				}
			}
			held, lost := checkStart(t, s.want, g.Base, hot, cold)
			t.Logf("%s: %s; %d tasks held for a person, %d missing (and said so)", dm.name, outcome, held, lost)
			switch {
			case dm.want == "refuse" && outcome != "refused":
				t.Errorf("got a start, want a refusal")
			case dm.want == "recovered" && (outcome != "started" || held+lost == 0):
				t.Errorf("got %s with %d held, want a start in the recovered state", outcome, held)
			}
		})
	}
}

// checkRefusal: a non-zero exit, no crash, a message naming the problem
// and the way out.
func checkRefusal(t *testing.T, e *testbin.Exit) {
	t.Helper()
	if e.Code == 0 || e.Crashed() {
		t.Fatalf("gateway ended with exit %d (signal %q), want a clean refusal:\n%s", e.Code, e.Signal, e.Log)
	}
	named := false
	for _, f := range []string{"MANIFEST", ".sst", ".mem", ".vlog", "KEYREGISTRY", "witness"} {
		named = named || strings.Contains(e.Log, f)
	}
	if !named || !strings.Contains(e.Log, "check --config") || !strings.Contains(e.Log, "restore --config") {
		t.Fatalf("the refusal does not name the damaged file and the way out:\n%s", e.Log)
	}
}

// checkStart checks a gateway started on a (possibly damaged) copy of the
// seed against what the seed held, and returns how many tasks it holds for
// a person and how many it says are missing.
func checkStart(t *testing.T, want map[string]string, base string, sims ...*gatewaytest.Sim) (held, lost int) {
	t.Helper()
	all := gatewaytest.Settle(t, base, 2*time.Minute)
	got := map[string]gatewaytest.TaskJSON{}
	for _, tj := range all {
		got[tj.TaskNo] = tj
		if tj.Reason == "recovered" {
			held++
		}
	}
	paper := map[string]int{}
	for _, s := range sims {
		for _, tk := range s.Printed() {
			paper[tk.TaskNo]++
		}
	}
	for no, n := range paper {
		if w := want[no]; w != "queued" && w != "retry_wait" {
			t.Errorf("%s printed again (it was %s)", no, w)
		} else if n > 1 {
			t.Errorf("%s printed %d times", no, n)
		}
	}
	missing := 0
	for no, w := range want {
		tj, ok := got[no]
		switch {
		case !ok:
			missing++
		case w == "done" && tj.Status != "done" && !(tj.Status == "attention_required" && tj.Reason == "recovered"):
			t.Errorf("%s was done, is %s (%s): went backwards without being held", no, tj.Status, tj.Reason)
		case tj.Status == "done" && w != "done" && paper[no] != 1:
			t.Errorf("%s was %s, is done with %d tickets printed now", no, w, paper[no])
		}
	}
	if missing > 0 {
		// Never a silent loss: the gateway says it lost them.
		var h struct {
			Storage struct {
				Recovery struct {
					MissingTasks int `json:"missing_tasks"`
				} `json:"recovery"`
			} `json:"storage"`
		}
		gatewaytest.Call(t, "GET", base+"/healthz", nil, &h)
		if h.Storage.Recovery.MissingTasks < missing {
			t.Errorf("%d tasks are missing from GET /v1/tasks; /healthz says %d", missing, h.Storage.Recovery.MissingTasks)
		}
	}
	return held, missing
}
