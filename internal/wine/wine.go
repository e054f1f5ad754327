package wine

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testenv"
)

//go:embed shim/bcryptprimitives.c
var shimSource []byte

// Loader finds the Wine loader: $WINE, wine64 on PATH, Debian's
// /usr/lib/wine/wine64 (Debian's wine script wants wine32 as well), then
// wine on PATH.
func Loader() (string, error) {
	return find("WINE", "wine64", "/usr/lib/wine/wine64", "wine")
}

// server finds wineserver: $WINESERVER, wineserver on PATH, then Debian's
// /usr/lib/wine/wineserver64.
func server() (string, error) {
	return find("WINESERVER", "wineserver", "/usr/lib/wine/wineserver64")
}

// compiler finds the MinGW-w64 C compiler for the shim: $MINGW_CC, then
// x86_64-w64-mingw32-gcc on PATH (Debian: gcc-mingw-w64-x86-64-win32).
func compiler() (string, error) {
	return find("MINGW_CC", "x86_64-w64-mingw32-gcc")
}

// find returns $env when set, else the first of names found on PATH (a
// name with a slash is a path).
func find(env string, names ...string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return exec.LookPath(p)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s found (or set %s): %w", strings.Join(names, ", "), env, exec.ErrNotFound)
}

// Path returns the Windows name of a Unix path: Wine's drive Z: is the
// Unix root.
func Path(unix string) string {
	abs, err := filepath.Abs(unix)
	if err != nil {
		abs = unix
	}
	return `Z:` + strings.ReplaceAll(abs, "/", `\`)
}

// Prefix is a private Wine prefix (WINEPREFIX): its own C: drive,
// registry and Wine processes.
type Prefix struct {
	Dir string

	loader string
	env    []string
}

// NewPrefix creates a Wine prefix in a new temporary directory, headless
// (no DISPLAY) and quiet (WINEDEBUG=-all), and makes it ready for Go
// programs. env goes to every Wine process of the prefix, Wine's own
// services among them (CUPS_SERVER, say). When the test ends, every
// process of the prefix is killed and the prefix removed. Creating a
// prefix takes a while (10 to 20 s): make one per test run.
//
// Under -short the test skips; Wine or MinGW-w64 missing skips it too, or
// fails it in CI (internal/testenv; .ci/run installs Debian's wine64 and
// gcc-mingw-w64-x86-64-win32).
func NewPrefix(t testing.TB, env ...string) *Prefix {
	t.Helper()
	testenv.Short(t, "Wine")
	loader, err := Loader()
	if err != nil {
		testenv.Missing(t, "wine", err, "apt-get install -y wine64")
	}
	wineserver, err := server()
	if err != nil {
		testenv.Missing(t, "wineserver", err, "apt-get install -y wine64")
	}
	dir, err := os.MkdirTemp("", "storeprint-wine-")
	if err != nil {
		t.Fatal(err)
	}
	p := &Prefix{Dir: dir, loader: loader, env: append([]string{
		"WINEPREFIX=" + dir,
		"WINEDEBUG=-all",
		"DISPLAY=",
		"WAYLAND_DISPLAY=",
		// No Mono or Gecko: nothing here needs .NET or a browser engine,
		// and wineboot would offer to install them.
		"WINEDLLOVERRIDES=mscoree,mshtml=",
	}, env...)}
	t.Cleanup(func() {
		// Every process of the prefix: Wine's services and anything
		// the service manager started.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, arg := range []string{"-k", "-w"} {
			cmd := exec.CommandContext(ctx, wineserver, arg)
			cmd.Env = p.Env()
			_ = cmd.Run() // -k fails when the server has already gone
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("wine: remove prefix: %v", err)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Wine's services, started by wineboot, keep its standard output and
	// error: a file, not a pipe that would never end.
	bootLog, err := os.CreateTemp("", "storeprint-wineboot-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(bootLog.Name())
	defer bootLog.Close()
	boot := p.Command(ctx, "wineboot", "--init")
	boot.Stdout, boot.Stderr = bootLog, bootLog
	if err := boot.Run(); err != nil {
		out, _ := os.ReadFile(bootLog.Name())
		t.Fatalf("wine: wineboot --init: %v\n%s", err, out)
	}
	// The server that made the prefix ends on its own a few seconds after
	// wineboot, with the services wineboot started; wait for it, so that
	// the persistent server below starts them once (a persistent server
	// from the start ends up with two service managers, each with its
	// own view of the installed services).
	server := func(arg string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, wineserver, arg)
		cmd.Env = p.Env()
		// -p goes to the background: no pipe to it, which it would hold.
		if err := cmd.Run(); err != nil {
			t.Fatalf("wine: wineserver %s: %v", arg, err)
		}
	}
	server("-w")
	system32 := filepath.Join(dir, "drive_c", "windows", "system32")
	if _, err := os.Stat(filepath.Join(system32, "bcryptprimitives.dll")); errors.Is(err, os.ErrNotExist) {
		if err := buildShim(ctx, filepath.Join(system32, "bcryptprimitives.dll")); errors.Is(err, exec.ErrNotFound) {
			testenv.Missing(t, "MinGW-w64", err, "apt-get install -y gcc-mingw-w64-x86-64-win32")
		} else if err != nil {
			t.Fatalf("wine: %v", err)
		}
	}
	// A persistent server keeps Wine's services running between the
	// test's programs. Without it the server ends a few seconds after
	// each program, and the next one waits for the services to start
	// again (up to some 10 s each time).
	server("-p")
	// Start the services now, from a program with no pipes: they keep
	// the standard handles of the program that starts them, and a test's
	// program would never see the end of its output. "net start" lists
	// the running services once the service manager answers.
	if err := p.Command(ctx, "net", "start").Run(); err != nil {
		t.Fatalf("wine: start the services (net start): %v", err)
	}
	return p
}

// buildShim compiles shim/bcryptprimitives.c into out.
func buildShim(ctx context.Context, out string) error {
	cc, err := compiler()
	if err != nil {
		return fmt.Errorf("%w (apt-get install -y gcc-mingw-w64-x86-64-win32)", err)
	}
	src, err := os.MkdirTemp("", "storeprint-shim-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	c := filepath.Join(src, "bcryptprimitives.c")
	if err := os.WriteFile(c, shimSource, 0o644); err != nil {
		return err
	}
	if b, err := exec.CommandContext(ctx, cc, "-shared", "-O2", "-s", "-o", out, c, "-lbcrypt").CombinedOutput(); err != nil {
		return fmt.Errorf("build bcryptprimitives.dll: %v\n%s", err, b)
	}
	return nil
}

// Env is the environment of the prefix's Wine processes.
func (p *Prefix) Env() []string {
	return append(os.Environ(), p.env...)
}

// Command returns a command that runs program (a Windows program: an
// .exe path, or the name of one of Wine's own) with args in the prefix.
func (p *Prefix) Command(ctx context.Context, program string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.loader, append([]string{program}, args...)...)
	cmd.Env = p.Env()
	return cmd
}

// Build cross-builds the Go program pkg (an import path) for
// windows/amd64 as out.
func Build(pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("GOOS=windows go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}
