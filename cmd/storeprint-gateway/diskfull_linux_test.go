package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// mountSmallDisk mounts a small tmpfs for the test's data directory.
func mountSmallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a %s tmpfs for the disk-full test (needs root): %v: %s", size, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill leaves about leave bytes free on dir's disk, returning the filler.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if free-leave > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, free-leave); err != nil {
			t.Fatalf("fallocate: %v", err)
		}
	}
	if leave == 0 {
		// Take the last blocks too, however the file system counts them.
		for n := int64(1 << 20); n >= 4096; n /= 2 {
			for unix.Fallocate(int(f.Fd()), 0, 0, free-leave+n) == nil {
				free += n
			}
		}
	}
	return path
}

// A gateway whose data directory fills up refuses new orders with 503,
// loses none it had accepted, and resumes when space is freed.
func TestMain_DiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under testing.Short: it mounts a tmpfs")
	}
	t.Parallel()
	disk := mountSmallDisk(t, "256m")
	hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd)
	cfg := writeConfig(t, gatewaytest.Config(t, filepath.Join(disk, "data"), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	_, base := runGateway(t, cfg)
	for _, id := range []string{"df-1", "df-2"} {
		if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order(id, "hot"), nil); code != 201 {
			t.Fatalf("order %s: got %d", id, code)
		}
	}
	filler := fill(t, disk, 32<<20)

	var e struct {
		Error string `json:"error"`
	}
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("df-3", "hot"), &e); code != 503 {
		t.Fatalf("order on a full disk: got %d %q, want 503", code, e.Error)
	}
	t.Logf("refused with: %s", e.Error)
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if code := gatewaytest.Call(t, "GET", base+"/healthz", nil, &h); code != 503 || h.Error == "" {
		t.Fatalf("healthz: got %d %+v, want 503 saying why", code, h)
	}
	var ps []struct {
		Storage string `json:"storage_error"`
	}
	gatewaytest.Call(t, "GET", base+"/v1/printers", nil, &ps)
	if len(ps) == 0 || ps[0].Storage == "" {
		t.Fatalf("printers: got %+v, want the storage problem shown", ps)
	}
	var board struct {
		Storage string `json:"storage_error"`
	}
	gatewaytest.Call(t, "GET", base+"/v1/board", nil, &board)
	if board.Storage == "" {
		t.Fatal("the LAN page's board does not show the storage problem")
	}
	for _, id := range []string{"df-1", "df-2"} {
		if tj := gatewaytest.GetTask(t, base, "order_"+id+"_station_hot"); tj.Status != "queued" && tj.Status != "retry_wait" {
			t.Fatalf("accepted task %s: got %s", id, tj.Status)
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	gatewaytest.WaitUntil(t, base, 10*time.Second, func() (bool, string) {
		code := gatewaytest.Call(t, "GET", base+"/healthz", nil, nil)
		return code == 200, fmt.Sprintf("/healthz still %d after space was freed", code)
	})
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("df-3", "hot"), nil); code != 201 {
		t.Fatalf("order after space was freed: got %d, want 201", code)
	}
	hot.SetFault(printersim.FaultNone)
	got := gatewaytest.WaitPrinted(t, hot, 3, 15*time.Second)
	for i, id := range []string{"df-1", "df-2", "df-3"} {
		if got[i].TaskNo != "order_"+id+"_station_hot" {
			t.Errorf("ticket %d: got %s, want %s", i, got[i].TaskNo, id)
		}
	}
}

// The real gateway on a small file system that fills up: it never crashes
// (no SIGBUS from Badger's mapped files) starting or stopping; it says
// "disk low" on /healthz and the LAN page as soon as free space falls
// under the reserve, with no order coming in; and it refuses to start
// below the reserve with a message and exit status 1.
func TestProcess_FullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under testing.Short: it mounts a tmpfs")
	}
	t.Parallel()
	disk := mountSmallDisk(t, "256m")
	hot := gatewaytest.StartSim(t, printersim.FaultPaperEnd) // tickets wait: the memtable holds them
	data := filepath.Join(disk, "data")
	cfg := writeConfig(t, gatewaytest.Config(t, data, []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	bin := gatewayBinary(t)

	g, exit := testbin.TryGateway(t, bin, cfg)
	if exit != nil {
		t.Fatalf("gateway did not start: %s", exit.Log)
	}
	var accepted []string
	for i := 0; i < 200; i++ {
		id := fmt.Sprintf("full-%03d", i)
		if code, err := postQuiet(g.Base, gatewaytest.Order(id, "hot")); err != nil || code != 201 {
			t.Fatalf("order %s: %d %v", id, code, err)
		}
		accepted = append(accepted, "order_"+id+"_station_hot")
	}

	// Idle, then the disk fills up (another program's logs, say).
	filler := fill(t, disk, 0)
	gatewaytest.WaitUntil(t, g.Base, 15*time.Second, func() (bool, string) {
		var h struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		code := gatewaytest.Call(t, "GET", g.Base+"/healthz", nil, &h)
		return code == 503 && strings.Contains(h.Error, "disk low"),
			fmt.Sprintf("idle gateway on a full disk: /healthz %d %+v, want 503 saying disk low", code, h)
	})
	var board struct {
		Storage string `json:"storage_error"`
	}
	gatewaytest.Call(t, "GET", g.Base+"/v1/board", nil, &board)
	if !strings.Contains(board.Storage, "disk low") {
		t.Fatalf("the LAN page's board says %q, want disk low", board.Storage)
	}
	if code, _ := postQuiet(g.Base, gatewaytest.Order("full-x", "hot")); code != 503 {
		t.Fatalf("order on a full disk: got %d, want 503", code)
	}

	// Stopped at 0 bytes free: no crash, nothing lost.
	if e := g.Stop(t, 30*time.Second); e.Code != 0 || e.Crashed() {
		t.Fatalf("stop on a full disk: exit %d (signal %q):\n%s", e.Code, e.Signal, e.Log)
	}
	// Started at 0 bytes free, then below the reserve: a clear refusal.
	for _, leave := range []int64{0, 40 << 20} {
		if leave > 0 {
			os.Remove(filler)
			filler = fill(t, disk, leave)
		}
		g, exit := testbin.TryGateway(t, bin, cfg)
		if exit == nil {
			g.Kill(t)
			t.Fatalf("gateway started with %d MiB free, below its reserve", leave>>20)
		}
		if exit.Code != 1 || exit.Crashed() || !strings.Contains(exit.Log, "disk low") {
			t.Fatalf("start with %d MiB free: exit %d (signal %q), want 1 saying disk low:\n%s", leave>>20, exit.Code, exit.Signal, exit.Log)
		}
		t.Logf("start with %d MiB free: %s", leave>>20, strings.TrimSpace(exit.Log))
	}

	// Space back: every accepted order is there, waiting.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	g, exit = testbin.TryGateway(t, bin, cfg)
	if exit != nil {
		t.Fatalf("gateway did not start with space freed: %s", exit.Log)
	}
	for _, no := range accepted {
		if tj := gatewaytest.GetTask(t, g.Base, no); tj.Status != "queued" {
			t.Fatalf("%s: got %s, want queued", no, tj.Status)
		}
	}
}
