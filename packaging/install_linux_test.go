package packaging

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The packages installed for real with dpkg on this machine, upgraded over
// themselves and purged: the maintainer scripts make the account, enable
// the services without starting them, keep a changed config on upgrade,
// and leave nothing but the account behind, which the test removes again.
func TestDeb_InstallUpgradePurge(t *testing.T) {
	dir := packages(t)
	if os.Geteuid() != 0 {
		t.Fatal("dpkg -i needs root (CI runs as root)")
	}
	// One such test at a time on this machine, whoever runs it.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "storeprint-deb-test.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	pkgs := []string{"storeprint-gateway", "storeprint-cloud"}
	for _, p := range pkgs {
		if out, err := exec.Command("dpkg-query", "-W", "-f=${db:Status-Status}", p).Output(); err == nil && string(out) != "not-installed" && string(out) != "config-files" {
			t.Fatalf("%s is installed on this machine (%s); the test would replace it", p, out)
		}
	}
	arch := strings.TrimSpace(run(t, "dpkg", "--print-architecture"))
	var files []string
	for _, p := range pkgs {
		files = append(files, filepath.Join(dir, fmt.Sprintf("%s_%s_%s.deb", p, debVersion, arch)))
	}
	_, userErr := user.Lookup("storeprint")
	_, groupErr := user.LookupGroup("storeprint")
	etcExisted := exists("/etc/storeprint")
	t.Cleanup(func() {
		if out, err := exec.Command("dpkg", append([]string{"--purge"}, pkgs...)...).CombinedOutput(); err != nil {
			t.Errorf("cleanup: dpkg --purge: %v\n%s", err, out)
		}
		if userErr != nil {
			exec.Command("userdel", "storeprint").Run()
		}
		if groupErr != nil {
			exec.Command("groupdel", "storeprint").Run()
		}
	})

	out := run(t, "dpkg", append([]string{"--install"}, files...)...)
	for _, p := range pkgs {
		if !strings.Contains(out, p+": installed and enabled, not started.") {
			t.Errorf("dpkg -i does not say %s is enabled and not started:\n%s", p, out)
		}
	}
	u, err := user.Lookup("storeprint")
	if err != nil {
		t.Fatalf("no user storeprint after install: %v", err)
	}
	g, err := user.LookupGroup("storeprint")
	if err != nil {
		t.Fatalf("no group storeprint after install: %v", err)
	}
	if uid, _ := strconv.Atoi(u.Uid); uid >= 1000 || u.HomeDir != "/var/lib/storeprint" || u.Gid != g.Gid {
		t.Errorf("user storeprint: %+v, want a system account in group storeprint with home /var/lib/storeprint", u)
	}
	gid, _ := strconv.Atoi(g.Gid)
	for path, want := range map[string]struct {
		mode os.FileMode
		gid  int
	}{
		"/etc/storeprint/gateway.toml": {0o640, gid},
		"/etc/storeprint/cloud.env":    {0o600, 0},
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != want.mode || int(st.Gid) != want.gid || st.Uid != 0 {
			t.Errorf("%s: mode %04o uid %d gid %d, want %04o root:%d", path, fi.Mode().Perm(), st.Uid, st.Gid, want.mode, want.gid)
		}
	}
	for _, p := range pkgs {
		link := "/etc/systemd/system/multi-user.target.wants/" + p + ".service"
		if target, err := os.Readlink(link); err != nil || filepath.Base(target) != p+".service" {
			t.Errorf("%s is not enabled: %s -> %q, %v", p, link, target, err)
		}
		if pids := running("/usr/bin/" + p); len(pids) > 0 {
			t.Errorf("%s runs (pids %v); it must wait to be configured", p, pids)
		}
	}
	if out := run(t, "/usr/bin/storeprint-gateway", "version"); !strings.HasPrefix(out, "storeprint-gateway "+testVersion+" ") {
		t.Errorf("installed storeprint-gateway version: got %q", out)
	}

	// An upgrade keeps the config the admin changed.
	f, err := os.OpenFile("/etc/storeprint/gateway.toml", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "# changed here")
	f.Close()
	run(t, "dpkg", "--install", files[0])
	if b, _ := os.ReadFile("/etc/storeprint/gateway.toml"); !strings.HasSuffix(string(b), "# changed here\n") {
		t.Error("the upgrade replaced the changed /etc/storeprint/gateway.toml")
	}

	run(t, "dpkg", append([]string{"--purge"}, pkgs...)...)
	left := []string{"/usr/bin/storeprint-gateway", "/usr/bin/storeprint", "/usr/bin/storeprint-cloud",
		"/usr/lib/systemd/system/storeprint-gateway.service", "/usr/lib/systemd/system/storeprint-cloud.service",
		"/etc/systemd/system/multi-user.target.wants/storeprint-gateway.service",
		"/etc/systemd/system/multi-user.target.wants/storeprint-cloud.service",
		"/etc/storeprint/gateway.toml", "/etc/storeprint/cloud.env"}
	if !etcExisted {
		left = append(left, "/etc/storeprint")
	}
	for _, p := range left {
		if exists(p) {
			t.Errorf("%s is left after purge", p)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// running are the processes running the program at path.
func running(path string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
