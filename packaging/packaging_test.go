package packaging

import (
	"archive/zip"
	"bufio"
	"bytes"
	"debug/elf"
	"debug/pe"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/internal/testenv"
)

// The version the test stamps, as git describe could say it, and the
// Debian version make package derives from it.
const (
	testVersion = "v9.8.7-test"
	debVersion  = "9.8.7+test"
)

var dist struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dist.dir != "" {
		os.RemoveAll(dist.dir)
	}
	os.Exit(code)
}

// packages runs make package once per test binary and returns dist/.
func packages(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the packages")
	}
	// make builds them; dpkg-deb and systemd-analyze read what was built.
	for _, program := range []string{"make", "dpkg-deb", "systemd-analyze"} {
		if _, err := exec.LookPath(program); err != nil {
			testenv.Missing(t, program, err, "apt-get install -y make dpkg systemd")
		}
	}
	dist.once.Do(func() {
		dir, err := os.MkdirTemp("", "storeprint-dist")
		if err != nil {
			dist.err = err
			return
		}
		dist.dir = dir
		cmd := exec.Command("make", "-C", "..", "package", "DIST="+dir, "VERSION="+testVersion)
		cmd.Env = withoutEnv(os.Environ(), "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
		if out, err := cmd.CombinedOutput(); err != nil {
			dist.err = fmt.Errorf("make package: %v\n%s", err, out)
		}
	})
	if dist.err != nil {
		t.Fatal(dist.err)
	}
	return dist.dir
}

func withoutEnv(env []string, keys ...string) []string {
	var out []string
	for _, kv := range env {
		drop := false
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// debWant is what one package must hold.
type debWant struct {
	pkg      string
	files    map[string]string // path: "mode owner/group"
	conffile string            // and the source it is shipped from
	source   string
	unit     string
	programs []string
	unitHas  []string
}

var debs = []debWant{
	{
		pkg: "storeprint-gateway",
		files: map[string]string{
			"/usr/bin/storeprint-gateway":                        "-rwxr-xr-x root/root",
			"/usr/bin/storeprint":                                "-rwxr-xr-x root/root",
			"/usr/lib/systemd/system/storeprint-gateway.service": "-rw-r--r-- root/root",
			"/etc/storeprint/gateway.toml":                       "-rw-r----- root/storeprint",
		},
		conffile: "/etc/storeprint/gateway.toml",
		source:   "deb/gateway.toml",
		unit:     "/usr/lib/systemd/system/storeprint-gateway.service",
		programs: []string{"storeprint-gateway", "storeprint"},
		unitHas: []string{
			"User=storeprint", "StateDirectory=storeprint", "Restart=always", "NoNewPrivileges=yes",
			"ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "RestartPreventExitStatus=78",
			"ExecStart=/usr/bin/storeprint-gateway run --config /etc/storeprint/gateway.toml",
		},
	},
	{
		pkg: "storeprint-cloud",
		files: map[string]string{
			"/usr/bin/storeprint-cloud":                        "-rwxr-xr-x root/root",
			"/usr/lib/systemd/system/storeprint-cloud.service": "-rw-r--r-- root/root",
			"/etc/storeprint/cloud.env":                        "-rw------- root/root",
		},
		conffile: "/etc/storeprint/cloud.env",
		source:   "deb/cloud.env",
		unit:     "/usr/lib/systemd/system/storeprint-cloud.service",
		programs: []string{"storeprint-cloud"},
		unitHas: []string{
			"EnvironmentFile=/etc/storeprint/cloud.env", "DynamicUser=yes", "Restart=always", "NoNewPrivileges=yes",
			"ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "ExecStart=/usr/bin/storeprint-cloud run",
		},
	},
}

func TestDeb(t *testing.T) {
	dir := packages(t)
	for _, want := range debs {
		for _, arch := range []string{"amd64", "arm64"} {
			t.Run(want.pkg+"_"+arch, func(t *testing.T) {
				checkDeb(t, filepath.Join(dir, fmt.Sprintf("%s_%s_%s.deb", want.pkg, debVersion, arch)), want, arch)
			})
		}
	}
}

func checkDeb(t *testing.T, deb string, want debWant, arch string) {
	if got := run(t, "dpkg-deb", "--field", deb, "Package", "Version", "Architecture"); got != fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: %s\n", want.pkg, debVersion, arch) {
		t.Errorf("control fields: got\n%s", got)
	}

	// The files, their modes and owners.
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(run(t, "dpkg-deb", "--contents", deb)))
	for sc.Scan() {
		f := strings.Fields(sc.Text()) // -rw-r----- root/storeprint 2131 2026-12-01 11:24 ./etc/storeprint/gateway.toml
		if len(f) < 6 || strings.HasPrefix(f[0], "d") {
			continue
		}
		got[strings.TrimPrefix(f[5], ".")] = f[0] + " " + f[1]
	}
	if want.pkg == "storeprint-gateway" {
		want.files = maps.Clone(want.files)
		for _, name := range manual(t) {
			want.files["/usr/share/doc/storeprint-gateway/"+name] = "-rw-r--r-- root/root"
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want.files) {
		t.Errorf("files:\ngot  %v\nwant %v", got, want.files)
	}

	ctl := t.TempDir()
	run(t, "dpkg-deb", "--control", deb, ctl)
	if b, _ := os.ReadFile(filepath.Join(ctl, "conffiles")); string(b) != want.conffile+"\n" {
		t.Errorf("conffiles: got %q, want %s", b, want.conffile)
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		p := filepath.Join(ctl, s)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("maintainer script %s: %v, mode %v", s, err, fi)
			continue
		}
		run(t, "sh", "-n", p)
	}

	root := t.TempDir()
	run(t, "dpkg-deb", "--extract", deb, root)
	shipped, _ := os.ReadFile(filepath.Join(root, want.conffile))
	if source, _ := os.ReadFile(want.source); !bytes.Equal(shipped, source) || len(source) == 0 {
		t.Errorf("%s is not %s", want.conffile, want.source)
	}
	if want.pkg == "storeprint-gateway" {
		// The configuration reference is shipped, and the configuration
		// and run --help point at it rather than at each other.
		const ref = "/usr/share/doc/storeprint-gateway/config.md"
		if doc, _ := os.ReadFile(filepath.Join(root, ref)); !bytes.Contains(doc, []byte("failover_after")) {
			t.Errorf("%s is not the configuration reference", ref)
		}
		if !bytes.Contains(shipped, []byte(ref)) {
			t.Errorf("%s does not point at %s", want.conffile, ref)
		}
		docs := map[string][]byte{}
		for path := range got {
			if dir, name := filepath.Split(path); dir == "/usr/share/doc/storeprint-gateway/" {
				docs[name], _ = os.ReadFile(filepath.Join(root, path))
			}
		}
		checkShippedDocs(t, docs)
		if arch == runtime.GOARCH {
			if help, _ := exec.Command(filepath.Join(root, "usr/bin/storeprint-gateway"), "run", "--help").CombinedOutput(); !bytes.Contains(help, []byte("/usr/share/doc/storeprint-gateway/")) {
				t.Errorf("run --help does not point at %s:\n%s", ref, help)
			}
		}
	}
	for _, p := range want.programs {
		checkELF(t, filepath.Join(root, "usr/bin", p), arch)
		if arch == runtime.GOARCH {
			out := run(t, filepath.Join(root, "usr/bin", p), "version")
			if w := fmt.Sprintf("%s %s (go", p, testVersion); !strings.HasPrefix(out, w) || !strings.HasSuffix(out, " linux/"+arch+")\n") {
				t.Errorf("%s version: got %q, want %q... linux/%s)", p, out, w, arch)
			}
		}
	}

	unit, _ := os.ReadFile(filepath.Join(root, want.unit))
	lines := map[string]bool{}
	for _, l := range strings.Split(string(unit), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, w := range want.unitHas {
		if !lines[w] {
			t.Errorf("%s has no line %q", want.unit, w)
		}
	}
	for l := range lines {
		if strings.HasPrefix(l, "ReadWritePaths=") || strings.HasPrefix(l, "ReadWriteDirectories=") {
			t.Errorf("%s: %q: the service may write only to its state directory", want.unit, l)
		}
	}
	verifyUnit(t, root, want.unit)

	if arch == runtime.GOARCH {
		notConfigured(t, root, want)
	}
}

// manual is the pages of docs/ a gateway's package ships: every page but
// the screenshots' gallery (the Makefile's MANUAL, packaging/gateway.yaml).
func manual(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../docs/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("docs/*.md: %v, %d pages", err, len(paths))
	}
	var names []string
	for _, p := range paths {
		if name := filepath.Base(p); name != "screens.md" {
			names = append(names, name)
		}
	}
	return names
}

// pageLink is a Markdown link to another page of docs/, with or without a
// section.
var pageLink = regexp.MustCompile(`\]\(([a-z0-9-]+\.md)(#[^)]*)?\)`)

// pageLinks is the docs/ pages a page links to.
func pageLinks(page []byte) []string {
	var names []string
	for _, m := range pageLink.FindAllSubmatch(page, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// checkShippedDocs checks the pages of docs/ shipped beside each other
// (name: content): each is its page of docs/, every page one of them
// links to is shipped too, and the page config.md's [cluster] section
// sends the reader to is among them.
func checkShippedDocs(t *testing.T, docs map[string][]byte) {
	t.Helper()
	for name, b := range docs {
		if src, _ := os.ReadFile(filepath.Join("../docs", name)); !bytes.Equal(b, src) || len(src) == 0 {
			t.Errorf("%s is not docs/%s", name, name)
		}
		for _, to := range pageLinks(b) {
			if _, ok := docs[to]; !ok {
				t.Errorf("%s links to %s, which is not shipped beside it", name, to)
			}
		}
	}
	if !bytes.Contains(docs["config.md"], []byte("](cluster.md)")) {
		t.Error("config.md does not send the reader to cluster.md")
	}
	if _, ok := docs["cluster.md"]; !ok {
		t.Error("cluster.md, which config.md's [cluster] section points at, is not shipped beside it")
	}
}

// checkELF checks that a program is a static Linux binary for arch.
func checkELF(t *testing.T, path, arch string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	defer f.Close()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != machine {
		t.Errorf("%s: machine %v, want %v", path, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked; the packages are built with CGO_ENABLED=0", path)
		}
	}
}

// verifyUnit runs systemd-analyze verify on the unit as it would be
// installed: in the unpacked package, with the machine's own targets beside
// it, so the unit's program is the packaged one and nothing on this machine
// is touched. Any complaint fails the test.
func verifyUnit(t *testing.T, root, unit string) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		testenv.Missing(t, "systemd-analyze", err, "apt-get install -y systemd")
	}
	var targets []string
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		for _, pat := range []string{"*.target", "*.slice"} {
			m, _ := filepath.Glob(filepath.Join(d, pat))
			targets = append(targets, m...)
		}
		if len(targets) > 0 {
			break
		}
	}
	if len(targets) == 0 {
		t.Fatal("no systemd targets on this machine: install the systemd package (.ci/run does)")
	}
	unitDir := filepath.Join(root, filepath.Dir(unit))
	for _, tg := range targets {
		b, err := os.ReadFile(tg)
		if err != nil {
			continue // a dangling alias
		}
		if err := os.WriteFile(filepath.Join(unitDir, filepath.Base(tg)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", "--root="+root, unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
}

// notConfigured runs the packaged program on the shipped configuration: it
// must refuse to start, with the exit status its unit does not restart on.
func notConfigured(t *testing.T, root string, want debWant) {
	t.Helper()
	var cmd *exec.Cmd
	var wantCode int
	var mention string
	switch want.pkg {
	case "storeprint-gateway":
		cmd = exec.Command(filepath.Join(root, "usr/bin/storeprint-gateway"), "run", "--config", filepath.Join(root, want.conffile))
		cmd.Env = withoutEnv(os.Environ(), "STOREPRINT_CONFIG")
		wantCode, mention = 78, "api_tokens"
	case "storeprint-cloud":
		cmd = exec.Command(filepath.Join(root, "usr/bin/storeprint-cloud"), "run")
		cmd.Env = append(withoutEnv(os.Environ(), "DATABASE_URL", "STOREPRINT_DATABASE_URL", "STOREPRINT_ADMIN_TOKEN", "STOREPRINT_LISTEN"), envFile(t, filepath.Join(root, want.conffile))...)
		wantCode, mention = 2, "--database-url"
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != wantCode || !strings.Contains(string(out), mention) {
		t.Errorf("%s on the shipped %s: got %v\n%s\nwant exit status %d naming %s", want.pkg, want.conffile, err, out, wantCode, mention)
	}
	unit, _ := os.ReadFile(filepath.Join(root, want.unit))
	if !strings.Contains(string(unit), fmt.Sprintf("RestartPreventExitStatus=%d\n", wantCode)) {
		t.Errorf("%s restarts on exit status %d", want.unit, wantCode)
	}
}

// envFile reads KEY=VALUE lines as systemd's EnvironmentFile does (simply).
func envFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && strings.Contains(l, "=") {
			env = append(env, l)
		}
	}
	return env
}

// The shipped configurations load once a token is filled in, and not before.
func TestExampleConfigs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, dataDir string }{
		{"deb/gateway.toml", "/var/lib/storeprint"},
		{"windows/gateway.toml", `C:\ProgramData\storeprint\data`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if _, err := toml.Load(tc.path); err == nil || !strings.Contains(err.Error(), "api_tokens") {
				t.Fatalf("got %v, want an error naming api_tokens", err)
			}
			b, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("\napi_tokens = []\n")) {
				t.Fatal("no empty api_tokens line")
			}
			filled := filepath.Join(t.TempDir(), "gateway.toml")
			b = bytes.Replace(b, []byte("\napi_tokens = []\n"), []byte("\napi_tokens = [\"a-token-of-24-characters\"]\n"), 1)
			if err := os.WriteFile(filled, b, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := toml.Load(filled)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DataDir != tc.dataDir {
				t.Errorf("data_dir: got %q, want %q", cfg.DataDir, tc.dataDir)
			}
		})
	}
}

// A package's version is a Debian version that sorts as the releases do:
// a commit without a tag sorts below every release, never above them.
func TestPackageVersion(t *testing.T) {
	t.Parallel()
	for _, program := range []string{"make", "dpkg"} {
		if _, err := exec.LookPath(program); err != nil {
			testenv.Missing(t, program, err, "apt-get install -y "+program)
		}
	}
	for version, want := range map[string]string{
		"v1.4.0":            "1.4.0",
		"1.4.0":             "1.4.0",
		"v1.4.0-3-g5298736": "1.4.0+3+g5298736",
		"5298736":           "0.0.0+git5298736",
		"abc1234-dirty":     "0.0.0+gitabc1234+dirty",
		"":                  "0.0.0+gitunknown",
		testVersion:         debVersion,
	} {
		cmd := exec.Command("make", "-s", "--no-print-directory", "-C", "..", "version", "VERSION="+version)
		cmd.Env = withoutEnv(os.Environ(), "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make version VERSION=%s: %v", version, err)
		}
		if got := strings.TrimPrefix(strings.Split(strings.TrimSpace(string(out)), "\n")[1], "packages: "); got != want {
			t.Errorf("VERSION=%q: package version %q, want %q", version, got, want)
		}
	}
	// Ordered as dpkg orders them.
	for _, pair := range [][2]string{{"0.0.0+git5298736", "1.0.0"}, {"1.4.0", "1.4.0+3+g5298736"}, {"1.4.0+3+g5298736", "1.5.0"}} {
		if err := exec.Command("dpkg", "--compare-versions", pair[0], "lt", pair[1]).Run(); err != nil {
			t.Errorf("%s does not sort below %s: %v", pair[0], pair[1], err)
		}
	}
}

func TestWindowsZip(t *testing.T) {
	dir := packages(t)
	z, err := zip.OpenReader(filepath.Join(dir, "storeprint-gateway_"+debVersion+"_windows_amd64.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string][]byte{}
	var names []string
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], err = io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), strings.Join(slices.Sorted(slices.Values(append(manual(t), "README.txt", "gateway.toml", "storeprint-gateway.exe"))), " "); got != want {
		t.Fatalf("zip holds %s, want %s", got, want)
	}
	exe, err := pe.NewFile(bytes.NewReader(files["storeprint-gateway.exe"]))
	if err != nil {
		t.Fatalf("storeprint-gateway.exe: %v", err)
	}
	if exe.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		t.Errorf("storeprint-gateway.exe: machine %#x, want amd64", exe.Machine)
	}
	if !bytes.Contains(files["storeprint-gateway.exe"], []byte(testVersion)) {
		t.Errorf("storeprint-gateway.exe does not carry the version %s", testVersion)
	}
	if src, _ := os.ReadFile("windows/gateway.toml"); !bytes.Equal(files["gateway.toml"], src) {
		t.Error("gateway.toml is not windows/gateway.toml")
	}
	if src, _ := os.ReadFile("../docs/config.md"); !bytes.Equal(files["config.md"], src) || len(src) == 0 {
		t.Error("config.md is not the configuration reference, docs/config.md")
	}
	if !bytes.Contains(files["gateway.toml"], []byte("config.md")) {
		t.Error("gateway.toml does not point at config.md beside it")
	}
	docs := map[string][]byte{}
	for name, b := range files {
		if strings.HasSuffix(name, ".md") {
			docs[name] = b
		}
	}
	checkShippedDocs(t, docs)
	for _, w := range []string{`storeprint-gateway.exe" install --config C:\ProgramData\storeprint\gateway.toml`, "Event Log", "Upgrading", "uninstall", "cluster.md"} {
		if !bytes.Contains(files["README.txt"], []byte(w)) {
			t.Errorf("README.txt does not say %q", w)
		}
	}
	// What the exe is built from passes the Windows vet too.
	cmd := exec.Command("go", "vet", "../cmd/storeprint-gateway")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("GOOS=windows go vet ./cmd/storeprint-gateway: %v\n%s", err, out)
	}
}
