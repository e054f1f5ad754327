package testbin

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Gateway is the storeprint-gateway program running as its own process,
// stopped when the test ends; its log is shown if the test failed.
type Gateway struct {
	Base   string        // http://host:port it serves on
	Exited chan struct{} // closed when the process has ended

	cmd     *exec.Cmd
	waitErr error // how the process ended, once Exited is closed
	mu      sync.Mutex
	log     strings.Builder
}

// listenRE finds the listen address in the "gateway running" line, text or
// JSON.
var listenRE = regexp.MustCompile(`msg="gateway running".* listen=(\S+)|"msg":"gateway running".*"listen":"([^"]+)"`)

// StartGateway runs bin (see Build) with "run --config cfg" and the extra
// environment, and returns once it serves.
func StartGateway(t testing.TB, bin, cfg string, env ...string) *Gateway {
	t.Helper()
	cmd := exec.Command(bin, "run", "--config", cfg)
	cmd.Env = append(os.Environ(), env...)
	return StartGatewayCmd(t, cmd)
}

// StartGatewayCmd runs cmd, a gateway's "run" command line not yet
// started (the Windows build under Wine, say), and returns once it
// serves.
func StartGatewayCmd(t testing.TB, cmd *exec.Cmd) *Gateway {
	t.Helper()
	g, addr := launch(t, cmd)
	select {
	case a := <-addr:
		g.Base = "http://" + a
	case <-g.Exited:
		t.Fatalf("gateway exited at start (%v):\n%s", g.waitErr, g.Log())
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway did not start:\n%s", g.Log())
	}
	return g
}

// launch starts cmd, a gateway's "run" command line, keeps what it logs,
// and returns the gateway and the address it says it serves on, once it
// says so. The test's end kills it, with its last log lines if the test
// failed.
func launch(t testing.TB, cmd *exec.Cmd) (*Gateway, <-chan string) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &Gateway{cmd: cmd, Exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			g.mu.Lock()
			g.log.WriteString(line + "\n")
			g.mu.Unlock()
			if m := listenRE.FindStringSubmatch(line); m != nil {
				addr <- m[1] + m[2] // one of the two is empty
			}
		}
		g.waitErr = cmd.Wait()
		close(g.Exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-g.Exited
		if t.Failed() {
			t.Logf("gateway log (last lines):\n%s", lastLines(g.Log(), 60))
		}
	})
	return g, addr
}

// Log returns what the gateway logged so far.
func (g *Gateway) Log() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.log.String()
}

// Kill stops the gateway with SIGKILL, as a power cut would, and waits for
// it to be gone.
func (g *Gateway) Kill(t testing.TB) {
	t.Helper()
	if err := g.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-g.Exited
}

// Interrupt stops the gateway as Ctrl-C does and waits up to timeout for
// it to end; it returns how the process ended (nil: exit status 0).
func (g *Gateway) Interrupt(t testing.TB, timeout time.Duration) error {
	t.Helper()
	if err := g.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Exited:
		return g.waitErr
	case <-time.After(timeout):
		t.Fatalf("gateway did not stop within %s of an interrupt:\n%s", timeout, lastLines(g.Log(), 60))
		return nil
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
