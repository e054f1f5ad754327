package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kardianos/service"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/internal/version"
)

func TestMain_ParseFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*Main, *bytes.Buffer, error) {
		m := NewMain()
		out := &bytes.Buffer{}
		m.Stdout, m.Stderr = out, io.Discard
		return m, out, m.ParseFlags(args)
	}
	t.Run("Help", func(t *testing.T) {
		for _, arg := range []string{"--help", "-h", "help"} {
			_, out, err := parse(arg)
			if !errors.Is(err, errHelp) {
				t.Fatalf("%s: got %v, want errHelp", arg, err)
			}
			for _, c := range commands {
				if !strings.Contains(out.String(), "  "+c.name+" ") {
					t.Errorf("%s: help does not list %s:\n%s", arg, c.name, out)
				}
			}
		}
	})
	// Each command's --help describes that command, not the program.
	t.Run("CommandHelp", func(t *testing.T) {
		want := map[string][]string{
			"run":       {"--config FILE", "--log-format", "STOREPRINT_CONFIG", "78"},
			"install":   {"--config FILE", "--user NAME", "--name NAME", "/etc/rc?.d", "storeprint-gateway start", "readable by every user"},
			"uninstall": {"--name NAME", "removes everything install wrote", "stay"},
			"start":     {"--name NAME"},
			"stop":      {"--name NAME"},
			"status":    {"running, stopped, or not installed"},
			"version":   {"--version"},
		}
		for _, c := range commands {
			_, out, err := parse(c.name, "--help")
			if !errors.Is(err, errHelp) {
				t.Fatalf("%s --help: got %v, want errHelp", c.name, err)
			}
			if !strings.HasPrefix(out.String(), "Usage: storeprint-gateway "+c.name) {
				t.Errorf("%s --help: got %q, want that command's usage", c.name, out)
			}
			for _, w := range want[c.name] {
				if !strings.Contains(out.String(), w) {
					t.Errorf("%s --help does not mention %q:\n%s", c.name, w, out)
				}
			}
		}
	})
	t.Run("Install", func(t *testing.T) {
		m, _, err := parse("install", "--config", "gw.toml", "--user", "storeprint", "--name", "gw-2")
		if err != nil {
			t.Fatal(err)
		}
		if m.ConfigPath != "gw.toml" || m.User != "storeprint" || m.ServiceName != "gw-2" {
			t.Fatalf("got %+v", m)
		}
	})
	for name, tc := range map[string]struct {
		args    []string
		mention string
	}{
		"ErrNoCommand":      {nil, "command is required"},
		"ErrUnknownCommand": {[]string{"serve"}, `unknown command "serve"`},
		"ErrNoConfig":       {[]string{"install"}, "--config FILE is required"},
		"ErrUnknownFlag":    {[]string{"status", "--config", "x"}, "status --help"},
		"ErrBadName":        {[]string{"uninstall", "--name", "gw 2; rm -rf /"}, "--name"},
		"ErrBadUser":        {[]string{"install", "--config", "x", "--user", "a'b"}, "--user"},
		"ErrVersionArg":     {[]string{"version", "now"}, `unexpected argument "now"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parse(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.mention)
			}
		})
	}
}

func TestMain_Version(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		m := NewMain()
		out := &bytes.Buffer{}
		m.Stdout = out
		if err := m.ParseFlags([]string{arg}); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := "storeprint-gateway " + version.String() + " (go"; !strings.HasPrefix(out.String(), want) {
			t.Fatalf("%s: got %q, want it to start with %q", arg, out, want)
		}
	}
}

func TestConfigExposure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		want string
	}{
		{0o600, ""},
		{0o640, ""},
		{0o644, "readable by every user"},
		{0o666, "changed by every user"},
	} {
		path := filepath.Join(dir, tc.mode.String())
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		got := configExposure(path)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("mode %04o: got %q, want %q", tc.mode, got, tc.want)
		}
	}
}

// run warns, in its log, that a config readable by everyone holds tokens.
func TestMain_RunWarnsReadableConfig(t *testing.T) {
	t.Parallel()
	s := gatewaytest.StartSim(t, "")
	cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "p1", Addr: s.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "p1"}}))
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	log := &testlog.Buffer{}
	m.Stderr = log
	cancel, done := launch(t, m, cfg)
	cancel()
	// Stopped this early, the dispatcher may still be starting and answer
	// with the cancellation; only the log matters here.
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	m.Close()
	if got := log.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "readable by every user") || !strings.Contains(got, cfg) {
		t.Fatalf("log does not warn about the config's mode:\n%s", got)
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("listen: address in use"), 1},
		{&ConfigError{errors.New("api_tokens: at least one token is required")}, ExitConfig},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%v: got %d, want %d", tc.err, got, tc.want)
		}
	}
}

// Under a service manager a gateway that stops by itself ends the process,
// so that the manager sees it: with 78 for a configuration it cannot use.
func TestProgram_ExitsWhenTheGatewayStops(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(cfg, []byte("store_id = \"s1\"\napi_tokens = []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags([]string{"run", "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	p := &program{m: m, exit: func(code int) { exited <- code }}
	if err := p.Start(nil); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != ExitConfig {
			t.Fatalf("got exit status %d, want %d", code, ExitConfig)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the program did not end")
	}
}

func TestSysvScript(t *testing.T) {
	t.Parallel()
	c := &service.Config{
		Name: "storeprint-gateway", DisplayName: "storeprint gateway", Description: "Prints.",
		Executable: "/opt/store print/storeprint-gateway", Arguments: []string{"run", "--config", "/etc/it's/gateway.toml"},
		UserName: "storeprint", WorkingDirectory: "/etc/it's",
	}
	script, err := sysvScript(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
	// The command line survives the quoting.
	var line string
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "cmd=") {
			line = l
		}
	}
	out, err := exec.Command("sh", "-c", line+`; eval "set -- $cmd"; shift; for a; do printf '%s\n' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "/opt/store print/storeprint-gateway\nrun\n--config\n/etc/it's/gateway.toml\n"; got != want {
		t.Fatalf("the script runs\n%s\nwant\n%s", got, want)
	}
	for _, w := range []string{"# Provides:          storeprint-gateway", "user=storeprint", "log_file=/var/log/storeprint-gateway.log", "-eq 78"} {
		if !strings.Contains(script, w) {
			t.Errorf("script does not hold %q", w)
		}
	}
}
