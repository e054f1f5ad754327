// Package scripts holds the tests of the repository's scripts.
package scripts

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const waitTimeout = 3 * time.Minute // make demo builds the binaries first

// makeError is how make reports a recipe that failed or was interrupted,
// at the top level or under another make.
var makeError = regexp.MustCompile(`make(\[\d+\])?: \*\*\*`)

// TestDemo runs make demo on a terminal, as a person does, waits for the
// tickets to come out as text, presses Ctrl-C and checks that everything
// stopped and make exited 0. It runs without the cloud (DEMO_CLOUD=off),
// on ports and in a directory of its own.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs the demo")
	}
	t.Parallel()
	for _, tool := range []string{"script", "make", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (script is in util-linux; bash .ci/run installs curl): %v", tool, err)
		}
	}
	base := freePorts(t, 6)
	// script gives make a terminal, so Ctrl-C is a keystroke, not a signal
	// sent by hand: the terminal sends SIGINT to its foreground job.
	cmd := exec.Command("script", "-qfec", fmt.Sprintf("make demo BIN=%s", t.TempDir()), "/dev/null")
	cmd.Dir = ".."
	cmd.Env = append(cmd.Environ(), "DEMO_OUT="+t.TempDir(), "DEMO_PORT_BASE="+strconv.Itoa(base), "DEMO_CLOUD=off")
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := newOutput()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once waitErr is set
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill() // the demo gets SIGHUP as its terminal goes
			<-exited
		}
	})

	// The last ticket of each printer, as text on paper.
	for _, want := range []string{"Ctrl-C stops everything.", "│ order_demo-1003_station_hot", "│ order_demo-1003_station_cold"} {
		if !out.wait(want, exited) {
			t.Fatalf("no %q in the output:\n%s", want, out)
		}
	}
	if got := out.String(); !strings.Contains(got, "│ 2 x 扬州炒饭") || strings.Contains(got, `"task_no"`) {
		t.Fatalf("got output\n%s\nwant the tickets as text, not JSON", got)
	}
	if _, err := keys.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("make demo after Ctrl-C: %v, want exit status 0; output:\n%s", waitErr, out)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("make demo still running a while after Ctrl-C; output:\n%s", out)
	}
	if got := out.String(); !strings.Contains(got, "stopped.") || makeError.MatchString(got) {
		t.Fatalf("got output\n%s\nwant the demo stopped, and no word from make", got)
	}
	for i := range 6 {
		if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i))); err == nil {
			c.Close()
			t.Errorf("port %d still open after the demo stopped", base+i)
		}
	}
}

// freePorts returns the first of n consecutive ports free on 127.0.0.1,
// below the ephemeral range, where the outgoing connections of other
// tests running meanwhile could take one before the demo listens on it.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	low := ephemeralLow()
	for range 100 {
		base := 10000 + rand.IntN(low-10000-n)
		var ls []net.Listener
		for i := range n {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == n {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// ephemeralLow is the first port of the range the system gives outgoing
// connections (Linux's /proc/sys/net/ipv4/ip_local_port_range; 32768 where
// it cannot be read or is lower than makes sense).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low < 12000 {
		return 32768
	}
	return low
}

// output collects what the demo writes, for the test to wait on.
type output struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
}

func newOutput() *output { return &output{changed: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	close(o.changed)
	o.changed = make(chan struct{})
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// wait waits until the output holds s; false if the demo exits first or
// the wait times out.
func (o *output) wait(s string, exited <-chan struct{}) bool {
	timeout := time.After(waitTimeout)
	for {
		o.mu.Lock()
		has, ch := strings.Contains(o.buf.String(), s), o.changed
		o.mu.Unlock()
		if has {
			return true
		}
		select {
		case <-ch:
		case <-exited:
			return strings.Contains(o.String(), s)
		case <-timeout:
			return false
		}
	}
}
