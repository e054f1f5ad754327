package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kardianos/service"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
)

// The real program installed as a system service on this machine, started,
// crashed, stopped and uninstalled. Where systemd does not run (CI, a
// container, an old box) that is a SysV init script with its /etc/rc?.d
// links: afterwards nothing of it is left but its log. The service has a
// name of its own, so a real installation is never touched.
func TestService_InstallUninstall(t *testing.T) {
	if testing.Short() {
		t.Skip("installs a system service")
	}
	if os.Geteuid() != 0 {
		t.Fatal("installing a system service needs root (CI runs as root)")
	}
	name := fmt.Sprintf("storeprint-gateway-test-%d", os.Getpid())
	s, err := service.New(&program{}, &service.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	platform := s.Platform()
	files := serviceFiles(platform, name)
	if len(files) == 0 {
		t.Fatalf("no service files known for %s", platform)
	}
	before := snapshot(t, files)

	// The program and its config where the service's user can read them.
	dir, err := os.MkdirTemp("", "storeprint-service")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "storeprint-gateway")
	copyFile(t, gatewayBinary(t), bin, 0o755)
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, uid, -1); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfg := filepath.Join(dir, "gateway.toml")
	body := fmt.Sprintf("store_id = \"store-test\"\ndata_dir = %q\nlisten = %q\napi_tokens = [%q]\n"+
		"[[printers]]\nid = \"p1\"\ndriver = \"tcp\"\naddress = \"127.0.0.1:9\"\n[[stations]]\nname = \"hot\"\nprinter = \"p1\"\n", data, addr, gatewaytest.Token)
	copyBytes(t, []byte(body), cfg, 0o644) // readable by all: install warns

	gw := func(args ...string) (stdout, stderr string, err error) {
		t.Helper()
		var o, e bytes.Buffer
		cmd := exec.Command(bin, append(args, "--name", name)...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	t.Cleanup(func() {
		if exists(files[0]) {
			out, errOut, err := gw("uninstall")
			t.Logf("cleanup: uninstall: %v\n%s%s", err, out, errOut)
		}
		os.Remove(sysvLogPath(name))
	})

	out, errOut, err := gw("install", "--config", cfg, "--user", "nobody")
	if err != nil {
		t.Fatalf("install: %v\n%s%s", err, out, errOut)
	}
	var written []string
	for _, f := range files {
		if before[f] == "" && exists(f) {
			written = append(written, f)
			if !strings.Contains(out, "  wrote    "+f+"\n") {
				t.Errorf("install does not say it wrote %s:\n%s", f, out)
			}
		}
	}
	if !exists(files[0]) {
		t.Fatalf("install wrote no %s:\n%s", files[0], out)
	}
	if platform == "unix-systemv" && len(written) != 8 {
		t.Errorf("install wrote %v, want the script and its 7 links", written)
	}
	for _, w := range []string{"  runs     " + bin + " run --config " + cfg + " --name " + name + "\n", "  as user  nobody\n", "  config   " + cfg + "\n", "  logs     " + serviceLogs(platform, name) + "\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("install does not say %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errOut, "warning: "+cfg+": the config file is readable by every user") {
		t.Errorf("install does not warn about the config's mode: %q", errOut)
	}
	if out, _, _ := gw("status"); out != "stopped\n" {
		t.Errorf("status after install: got %q, want stopped", out)
	}

	if platform == "unix-systemv" {
		sysvRun(t, gw, name, bin, addr, uid)
	} else {
		t.Logf("%s: install and uninstall only", platform)
	}

	out, errOut, err = gw("uninstall")
	if err != nil {
		t.Fatalf("uninstall: %v\n%s%s", err, out, errOut)
	}
	for _, f := range written {
		if !strings.Contains(out, "  removed  "+f+"\n") {
			t.Errorf("uninstall does not say it removed %s:\n%s", f, out)
		}
	}
	if after := snapshot(t, files); !equalSnapshots(before, after) {
		t.Errorf("uninstall left things behind:\nbefore %v\nafter  %v", before, after)
	}
	if out, _, _ := gw("status"); out != "not installed\n" {
		t.Errorf("status after uninstall: got %q, want not installed", out)
	}
}

// sysvRun starts the installed SysV service, crashes the gateway, sees it
// started again, and stops it.
func sysvRun(t *testing.T, gw func(...string) (string, string, error), name, bin, addr string, uid int) {
	t.Helper()
	if out, errOut, err := gw("start"); err != nil {
		t.Fatalf("start: %v\n%s%s", err, out, errOut)
	}
	pid := waitServing(t, bin, addr, 0)
	if got := procUID(t, pid); got != uid {
		t.Errorf("the gateway runs as uid %d, want nobody's %d", got, uid)
	}
	if out, _, _ := gw("status"); out != "running\n" {
		t.Errorf("status: got %q, want running", out)
	}
	// A crash: the script starts the gateway again.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitServing(t, bin, addr, pid)
	if log, _ := os.ReadFile(sysvLogPath(name)); !bytes.Contains(log, []byte("exited with status")) || !bytes.Contains(log, []byte("gateway running")) {
		t.Errorf("the log %s does not show the restart:\n%s", sysvLogPath(name), log)
	}
	if out, errOut, err := gw("stop"); err != nil {
		t.Fatalf("stop: %v\n%s%s", err, out, errOut)
	}
	if out, _, _ := gw("status"); out != "stopped\n" {
		t.Errorf("status after stop: got %q, want stopped", out)
	}
	if pids := gatewayPIDs(bin); len(pids) > 0 {
		t.Errorf("gateway processes left after stop: %v", pids)
	}
}

// waitServing waits until a gateway process other than old serves /healthz
// and returns its pid.
func waitServing(t *testing.T, bin, addr string, old int) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		pids := gatewayPIDs(bin)
		if len(pids) == 1 && pids[0] != old {
			if resp, err := hc.Get("http://" + addr + "/healthz"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return pids[0]
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gateway serving on %s (processes %v, not %d)", addr, pids, old)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gatewayPIDs are the processes running bin.
func gatewayPIDs(bin string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmdline), bin+"\x00run\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

func procUID(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}

// snapshot lists what is at each of the service's paths, the folders they
// are in, and the SysV pid file.
func snapshot(t *testing.T, files []string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	dirs := map[string]bool{}
	for _, f := range files {
		dirs[filepath.Dir(f)] = true
		snap[f] = ""
		if fi, err := os.Lstat(f); err == nil {
			snap[f] = fi.Mode().String()
		}
	}
	for d := range dirs {
		ents, _ := os.ReadDir(d)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		snap[d+"/"] = strings.Join(names, " ")
	}
	for _, f := range files {
		if strings.HasPrefix(f, "/etc/init.d/") {
			pid := "/var/run/" + filepath.Base(f) + ".pid"
			snap[pid] = fmt.Sprint(exists(pid))
		}
	}
	return snap
}

func equalSnapshots(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	copyBytes(t, b, dst, mode)
}

func copyBytes(t *testing.T, b []byte, dst string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, mode); err != nil {
		t.Fatal(err)
	}
}
