package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/kardianos/service"

	"github.com/storeprint/storeprint/gateway/toml"
)

// Service integration: systemd, SysV init, launchd and Windows services
// through kardianos/service, plus what it leaves out: saying what was
// written and removed, the SysV links, a SysV script that runs as a user and
// starts the gateway again when it exits.

// ExitConfig is the exit status for a configuration the gateway cannot run
// with (EX_CONFIG of sysexits.h). The packaged systemd unit does not
// restart on it, so a gateway installed but not yet configured stays down.
const ExitConfig = 78

// ConfigError is a configuration the gateway cannot run with.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExitCode is the exit status for what Run returned.
func ExitCode(err error) int {
	var ce *ConfigError
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ce):
		return ExitConfig
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// configExposure says what is wrong when every user of the machine can read
// or change the config file, which holds the API and cloud tokens; "" when
// nothing is.
func configExposure(path string) string {
	if runtime.GOOS == "windows" {
		return "" // ACLs, not mode bits
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	mode := fi.Mode().Perm()
	switch {
	case mode&0o002 != 0:
		return fmt.Sprintf("the config file can be changed by every user of this machine (mode %04o) and holds the tokens; chmod 600 it (or 640 with the service's group)", mode)
	case mode&0o004 != 0:
		return fmt.Sprintf("the config file is readable by every user of this machine (mode %04o) and holds the tokens; chmod 600 it (or 640 with the service's group)", mode)
	}
	return ""
}

func (m *Main) name() string {
	if m.ServiceName == "" {
		return ServiceName
	}
	return m.ServiceName
}

func (m *Main) serviceConfig() (*service.Config, error) {
	c := &service.Config{
		Name:        m.name(),
		DisplayName: "storeprint gateway",
		Description: "Prints the store's kitchen tickets, confirmed by the printers.",
		UserName:    m.User,
		Option: service.KeyValue{
			"Restart":                "always",  // systemd
			"OnFailure":              "restart", // Windows: started again 5 s after it ends unexpectedly
			"OnFailureDelayDuration": "5s",
			"OnFailureResetPeriod":   24 * 60 * 60,
			"KeepAlive":              true, // launchd
		},
	}
	if m.ConfigPath != "" {
		abs, err := filepath.Abs(m.ConfigPath)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		c.Arguments = []string{"run", "--config", abs}
		if c.Name != ServiceName {
			c.Arguments = append(c.Arguments, "--name", c.Name)
		}
		c.WorkingDirectory = filepath.Dir(abs)
	}
	if m.Command == "install" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("install: the program's own path: %w", err)
		}
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			exe = p
		}
		c.Executable = exe
		script, err := sysvScript(c)
		if err != nil {
			return nil, err
		}
		c.Option["SysvScript"] = script
	}
	return c, nil
}

// program is the gateway under a service manager.
type program struct {
	m        *Main
	exit     func(code int) // os.Exit
	cancel   context.CancelFunc
	done     chan error
	stopping atomic.Bool
}

func (p *program) Start(service.Service) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan error, 1)
	go func() {
		err := p.m.run(ctx)
		if !p.stopping.Load() {
			// The gateway ended by itself (a configuration it cannot use, a
			// failed disk): end the process, so that the service manager
			// sees it and starts it again, or shows why it stopped.
			code := ExitCode(err)
			if err != nil {
				p.m.logger().Error("gateway stopped", "err", err, "exit_status", code)
			} else {
				code = 1
			}
			if cerr := p.m.Close(); cerr != nil {
				p.m.logger().Error("gateway close", "err", cerr)
			}
			p.exit(code)
		}
		p.done <- err
	}()
	return nil
}

func (p *program) Stop(service.Service) error {
	p.stopping.Store(true)
	p.cancel()
	return <-p.done
}

// service is the gateway as the system's service manager runs it, and
// the service's configuration.
func (m *Main) service() (service.Service, *service.Config, error) {
	cfg, err := m.serviceConfig()
	if err != nil {
		return nil, nil, err
	}
	s, err := service.New(&program{m: m, exit: os.Exit}, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("service: %w", err)
	}
	return s, cfg, nil
}

func (m *Main) runService() error {
	s, _, err := m.service()
	if err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		// A Windows service has no standard error: log to the Event Log.
		if l, err := s.Logger(nil); err == nil {
			m.logHandler = newServiceLogHandler(l, m.LogFormat == "json")
		}
	}
	return s.Run()
}

func (m *Main) control() error {
	if m.Command == "install" {
		if _, err := toml.Load(m.ConfigPath); err != nil {
			return &ConfigError{err}
		}
		if w := configExposure(m.ConfigPath); w != "" {
			fmt.Fprintf(m.Stderr, "storeprint-gateway: warning: %s: %s\n", m.ConfigPath, w)
		}
	}
	s, cfg, err := m.service()
	if err != nil {
		return err
	}
	switch m.Command {
	case "install":
		return m.install(s, cfg)
	case "uninstall":
		return m.uninstall(s, cfg)
	case "status":
		st, err := m.status(s)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		fmt.Fprintln(m.Stdout, st)
		return nil
	}
	if err := service.Control(s, m.Command); err != nil {
		return fmt.Errorf("%s: %w", m.Command, err)
	}
	fmt.Fprintf(m.Stdout, "storeprint-gateway: %s the service %s\n", map[string]string{"start": "started", "stop": "stopped"}[m.Command], cfg.Name)
	return nil
}

// serviceFiles are the files a service manager's install writes.
func serviceFiles(platform, name string) []string {
	switch platform {
	case "linux-systemd":
		return []string{"/etc/systemd/system/" + name + ".service", "/etc/systemd/system/multi-user.target.wants/" + name + ".service"}
	case "unix-systemv":
		files := []string{sysvScriptPath(name)}
		return append(files, sysvLinks(name)...)
	case "linux-openrc", "linux-rcs", "linux-procd":
		return []string{"/etc/init.d/" + name}
	case "linux-upstart":
		return []string{"/etc/init/" + name + ".conf"}
	case "darwin-launchd":
		return []string{"/Library/LaunchDaemons/" + name + ".plist"}
	}
	return nil
}

// serviceLogs says where the installed service's log goes.
func serviceLogs(platform, name string) string {
	switch platform {
	case "linux-systemd":
		return "the journal: journalctl -u " + name
	case "unix-systemv":
		return sysvLogPath(name)
	case "darwin-launchd":
		return "/usr/local/var/log/" + name + ".err.log"
	case "windows-service":
		return "the Windows Event Log: Application, source " + name
	}
	return "the service manager's log"
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (m *Main) install(s service.Service, cfg *service.Config) error {
	files := serviceFiles(s.Platform(), cfg.Name)
	before := map[string]bool{}
	for _, f := range files {
		before[f] = exists(f)
	}
	if len(files) > 0 && before[files[0]] {
		return fmt.Errorf("install: %s exists already: the service %s is installed (storeprint-gateway uninstall%s removes it)", files[0], cfg.Name, m.nameFlag())
	}
	if s.Platform() == "linux-systemd" {
		for _, dir := range []string{"/usr/lib/systemd/system/", "/lib/systemd/system/"} {
			if unit := dir + cfg.Name + ".service"; exists(unit) {
				return fmt.Errorf("install: the package installed the service %s already (%s): fill in its config and run systemctl start %s, or install another one with --name", cfg.Name, unit, cfg.Name)
			}
		}
	}
	if err := s.Install(); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	out := m.Stdout
	fmt.Fprintf(out, "storeprint-gateway: installed the service %s (%s)\n", cfg.Name, s.Platform())
	for _, f := range files {
		if !before[f] && exists(f) {
			fmt.Fprintf(out, "  wrote    %s\n", f)
		}
	}
	if s.Platform() == "windows-service" {
		fmt.Fprintf(out, "  wrote    the Windows service %s (automatic start, started again on failure) and its Event Log source\n", cfg.Name)
	}
	fmt.Fprintf(out, "  runs     %s\n", shellJoin(append([]string{cfg.Executable}, cfg.Arguments...)))
	user := cfg.UserName
	if user == "" {
		user = "root"
		if runtime.GOOS == "windows" {
			user = "LocalSystem"
		}
	}
	fmt.Fprintf(out, "  as user  %s\n", user)
	fmt.Fprintf(out, "  config   %s\n", cfg.Arguments[2])
	fmt.Fprintf(out, "  logs     %s\n", serviceLogs(s.Platform(), cfg.Name))
	if cfg.UserName == "" {
		fmt.Fprintf(out, "The service runs with full rights; --user NAME runs it as an account of its own.\n")
	} else {
		fmt.Fprintf(out, "The user %s must be able to read the config and write its data_dir.\n", cfg.UserName)
	}
	fmt.Fprintf(out, "The service runs the program at the path above: do not move or rebuild it there.\nStart it with: storeprint-gateway start%s\n", m.nameFlag())
	return nil
}

func (m *Main) nameFlag() string {
	if m.name() == ServiceName {
		return ""
	}
	return " --name " + m.name()
}

func (m *Main) uninstall(s service.Service, cfg *service.Config) error {
	platform := s.Platform()
	files := serviceFiles(platform, cfg.Name)
	var present []string
	for _, f := range files {
		if exists(f) {
			present = append(present, f)
		}
	}
	if len(files) > 0 && !exists(files[0]) {
		// Nothing to uninstall through the service manager; a SysV link
		// left by an older install is still cleaned up.
		removed, err := removeSysvLinks(platform, cfg.Name)
		for _, f := range removed {
			fmt.Fprintf(m.Stdout, "  removed  %s\n", f)
		}
		if err != nil {
			return fmt.Errorf("uninstall: %w", err)
		}
		return fmt.Errorf("uninstall: the service %s is not installed (no %s)", cfg.Name, files[0])
	}
	if st, err := m.status(s); err == nil && st == "running" {
		if err := s.Stop(); err != nil {
			return fmt.Errorf("uninstall: stop the service first: %w", err)
		}
		fmt.Fprintf(m.Stdout, "storeprint-gateway: stopped the service %s\n", cfg.Name)
	}
	if err := s.Uninstall(); err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	_, lerr := removeSysvLinks(platform, cfg.Name)
	fmt.Fprintf(m.Stdout, "storeprint-gateway: removed the service %s (%s)\n", cfg.Name, platform)
	var left []string
	for _, f := range present {
		if exists(f) {
			left = append(left, f)
		} else {
			fmt.Fprintf(m.Stdout, "  removed  %s\n", f)
		}
	}
	if platform == "windows-service" {
		fmt.Fprintf(m.Stdout, "  removed  the Windows service %s and its Event Log source\n", cfg.Name)
	}
	if lerr != nil {
		return fmt.Errorf("uninstall: %w", lerr)
	}
	if len(left) > 0 {
		return fmt.Errorf("uninstall: could not remove %s", strings.Join(left, ", "))
	}
	kept := "the config, the data_dir"
	if logs := serviceLogs(platform, cfg.Name); strings.HasPrefix(logs, "/") && exists(logs) {
		kept += " and the log " + logs
	}
	fmt.Fprintf(m.Stdout, "  kept     %s\n", kept)
	return nil
}

// status is "running", "stopped" or "not installed".
func (m *Main) status(s service.Service) (string, error) {
	if s.Platform() == "unix-systemv" {
		// kardianos reads a stopped SysV service as an error.
		return sysvStatus(m.name())
	}
	st, err := s.Status()
	switch {
	case errors.Is(err, service.ErrNotInstalled):
		return "not installed", nil
	case err != nil:
		return "", err
	case st == service.StatusRunning:
		return "running", nil
	case st == service.StatusStopped:
		return "stopped", nil
	}
	return "unknown", nil
}

func sysvStatus(name string) (string, error) {
	script := sysvScriptPath(name)
	if !exists(script) {
		return "not installed", nil
	}
	out, err := exec.Command(script, "status").Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "running", nil
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return "stopped", nil
	}
	return "", fmt.Errorf("%s status: %v %s", script, err, strings.TrimSpace(string(out)))
}

// shellJoin quotes args for a POSIX shell where they need it.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
