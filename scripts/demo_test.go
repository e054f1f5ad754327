//go:build unix

// Package scripts holds the tests of the repository's scripts.
package scripts

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/internal/testlog"
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
			testenv.Missing(t, tool, err, "apt-get install -y util-linux make curl")
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
	out := new(testlog.Buffer)
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
		if !waitFor(out, want, exited) {
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

// TestDemo_Killed runs make demo piped into tee on a terminal, as a person
// keeping a log does, and ends it in each way it can end: Ctrl-C (which
// reaches make and tee, not the demo), the pipe's reader killed, SIGTERM
// and SIGHUP to the demo itself. Each time, within 10 s none of the
// demo's ports answer and none of its processes remain.
func TestDemo_Killed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs the demo")
	}
	t.Parallel()
	for _, tool := range []string{"script", "make", "curl", "tee"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool, err, "apt-get install -y util-linux make curl coreutils")
		}
	}
	bin := t.TempDir()
	build := exec.Command("make", "build", "BIN="+bin)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, keys *os.File, demoOut, log string)
	}{
		{"CtrlC", func(t *testing.T, keys *os.File, _, _ string) {
			if _, err := keys.Write([]byte{0x03}); err != nil {
				t.Fatal(err)
			}
		}},
		{"ReaderKilled", func(t *testing.T, _ *os.File, _, log string) {
			signalAll(t, syscall.SIGKILL, func(cmdline, _ string) bool { return cmdline == "tee\x00"+log+"\x00" })
		}},
		{"TERM", func(t *testing.T, _ *os.File, demoOut, _ string) {
			signalAll(t, syscall.SIGTERM, demoScript(demoOut))
		}},
		{"HUP", func(t *testing.T, _ *os.File, demoOut, _ string) {
			signalAll(t, syscall.SIGHUP, demoScript(demoOut))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := freePorts(t, 6)
			demoOut, log := t.TempDir(), filepath.Join(t.TempDir(), "demo.log")
			cmd := exec.Command("script", "-qfec", fmt.Sprintf("make demo BIN=%s 2>&1 | tee %s", bin, log), "/dev/null")
			cmd.Dir = ".."
			cmd.Env = append(cmd.Environ(), "DEMO_OUT="+demoOut, "DEMO_PORT_BASE="+strconv.Itoa(base), "DEMO_CLOUD=off")
			keysR, keys, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = keysR
			out := new(testlog.Buffer)
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			keysR.Close()
			exited := make(chan struct{})
			go func() {
				cmd.Wait()
				close(exited)
			}()
			t.Cleanup(func() {
				keys.Close()
				select {
				case <-exited:
				default:
					cmd.Process.Kill()
					<-exited
				}
				signalAll(t, syscall.SIGKILL, demoProcess(demoOut)) // whatever a failed case left
			})
			if !waitFor(out, "│ order_demo-1003_station_hot", exited) {
				t.Fatalf("the demo did not print its tickets:\n%s", out)
			}
			tc.end(t, keys, demoOut, log)
			deadline := time.Now().Add(10 * time.Second)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				left, open := running(demoOut), answering(base, 6)
				if len(left) == 0 && len(open) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("10 s after the end: still running %q, ports answering %v; output:\n%s", left, open, out)
				}
				<-tick.C
			}
		})
	}
}

// demoScript matches the demo script's own processes of one run.
func demoScript(demoOut string) func(cmdline, environ string) bool {
	return func(cmdline, environ string) bool {
		return strings.Contains(cmdline, "scripts/demo.sh") && strings.Contains(environ, "\x00DEMO_OUT="+demoOut+"\x00")
	}
}

// demoProcess matches every process of one run of the demo: the script
// and what it started.
func demoProcess(demoOut string) func(cmdline, environ string) bool {
	return func(cmdline, environ string) bool {
		return demoScript(demoOut)(cmdline, environ) || strings.Contains(cmdline, demoOut)
	}
}

// procs returns the pids and command lines of the processes match picks.
func procs(match func(cmdline, environ string) bool) map[int]string {
	out := map[int]string{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a zombie: nothing left running
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if match(string(cmdline), "\x00"+string(environ)) {
			out[pid] = string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
	return out
}

func signalAll(t *testing.T, sig syscall.Signal, match func(cmdline, environ string) bool) {
	t.Helper()
	for pid := range procs(match) {
		syscall.Kill(pid, sig)
	}
}

// running lists the processes of the demo run writing to demoOut.
func running(demoOut string) []string {
	var out []string
	for _, c := range procs(demoProcess(demoOut)) {
		out = append(out, c)
	}
	return out
}

// answering lists the ports from base on that still accept connections.
func answering(base, n int) []int {
	var out []int
	for i := range n {
		if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i))); err == nil {
			c.Close()
			out = append(out, base+i)
		}
	}
	return out
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

// waitFor waits until the demo's output holds s; false if the demo exits
// first or the wait times out.
func waitFor(out *testlog.Buffer, s string, exited <-chan struct{}) bool {
	timeout := time.After(waitTimeout)
	for {
		text, ch := out.Next()
		if strings.Contains(text, s) {
			return true
		}
		select {
		case <-ch:
		case <-exited:
			return strings.Contains(out.String(), s)
		case <-timeout:
			return false
		}
	}
}
