package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	if err := unix.Fallocate(int(f.Fd()), 0, 0, free-leave); err != nil {
		t.Fatalf("fallocate: %v", err)
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
	hot := startSim(t, printersim.FaultPaperEnd)
	cfg := writeConfig(t, filepath.Join(disk, "data"), []printerConf{{id: "hot-1", addr: hot.addr}},
		[]stationConf{{name: "hot", printer: "hot-1"}})
	_, base := runGateway(t, cfg)
	for _, id := range []string{"df-1", "df-2"} {
		if code := call(t, "POST", base+"/v1/orders", order(id, "hot"), nil); code != 201 {
			t.Fatalf("order %s: got %d", id, code)
		}
	}
	filler := fill(t, disk, 32<<20)

	var e struct {
		Error string `json:"error"`
	}
	if code := call(t, "POST", base+"/v1/orders", order("df-3", "hot"), &e); code != 503 {
		t.Fatalf("order on a full disk: got %d %q, want 503", code, e.Error)
	}
	t.Logf("refused with: %s", e.Error)
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if code := call(t, "GET", base+"/healthz", nil, &h); code != 503 || h.Error == "" {
		t.Fatalf("healthz: got %d %+v, want 503 saying why", code, h)
	}
	var ps []struct {
		Storage string `json:"storage_error"`
	}
	call(t, "GET", base+"/v1/printers", nil, &ps)
	if len(ps) == 0 || ps[0].Storage == "" {
		t.Fatalf("printers: got %+v, want the storage problem shown", ps)
	}
	var board struct {
		Storage string `json:"storage_error"`
	}
	call(t, "GET", base+"/v1/board", nil, &board)
	if board.Storage == "" {
		t.Fatal("the LAN page's board does not show the storage problem")
	}
	for _, id := range []string{"df-1", "df-2"} {
		if tj := getTask(t, base, "order_"+id+"_station_hot"); tj.Status != "queued" && tj.Status != "retry_wait" {
			t.Fatalf("accepted task %s: got %s", id, tj.Status)
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code := call(t, "POST", base+"/v1/orders", order("df-3", "hot"), nil)
		if code == 201 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orders still refused (%d) after space was freed", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	hot.SetFault(printersim.FaultNone)
	got := waitPrinted(t, hot, 3, 15*time.Second)
	for i, id := range []string{"df-1", "df-2", "df-3"} {
		if got[i].TaskNo != "order_"+id+"_station_hot" {
			t.Errorf("ticket %d: got %s, want %s", i, got[i].TaskNo, id)
		}
	}
}
