package testbin

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Exit is how a program run to its end ended.
type Exit struct {
	Code   int    // exit status; -1 when a signal ended it
	Signal string // the signal that ended it, if one did
	Log    string // what it wrote to stderr
	Stdout string
}

// Crashed reports a Go runtime crash: a panic, a fatal error or a fault
// signal (SIGBUS, SIGSEGV), which a program must never end with.
func (e *Exit) Crashed() bool {
	if e.Signal == "bus error" || e.Signal == "segmentation fault" {
		return true
	}
	for _, s := range []string{"panic:", "fatal error:", "SIGBUS", "SIGSEGV", "unexpected fault address", "goroutine 1 ["} {
		if strings.Contains(e.Log, s) {
			return true
		}
	}
	return false
}

// Run runs bin with args to its end (at most timeout) and reports how it
// ended.
func Run(t testing.TB, timeout time.Duration, bin string, args ...string) *Exit {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %s did not end within %s:\n%s", bin, strings.Join(args, " "), timeout, errb.String())
	}
	return exitOf(cmd, err, errb.String(), out.String())
}

func exitOf(cmd *exec.Cmd, _ error, log, stdout string) *Exit {
	e := &Exit{Log: log, Stdout: stdout}
	if ps := cmd.ProcessState; ps != nil {
		e.Code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	}
	return e
}

// TryGateway runs bin with "run --config cfg" like StartGateway, but a
// gateway that ends at start is an answer, not a failure: it returns
// either the running gateway or how it ended.
func TryGateway(t testing.TB, bin, cfg string, env ...string) (*Gateway, *Exit) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--config", cfg)
	cmd.Env = append(os.Environ(), env...)
	g, addr := launch(t, cmd)
	select {
	case a := <-addr:
		g.Base = "http://" + a
		return g, nil
	case <-g.Exited:
		return nil, exitOf(cmd, nil, g.Log(), "")
	case <-time.After(60 * time.Second):
		t.Fatalf("gateway neither started nor ended:\n%s", g.Log())
	}
	return nil, nil
}

// Stop sends SIGTERM, as a service manager does, and reports how the
// gateway ended.
func (g *Gateway) Stop(t testing.TB, timeout time.Duration) *Exit {
	t.Helper()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Exited:
	case <-time.After(timeout):
		t.Fatalf("gateway did not stop within %s:\n%s", timeout, g.Log())
	}
	return exitOf(g.cmd, nil, g.Log(), "")
}

// Pid is the gateway's process id.
func (g *Gateway) Pid() int { return g.cmd.Process.Pid }
