package printertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// PTYPair is a null-modem cable between two tty paths: two
// pseudo-terminals joined by socat
// (socat -d -d pty,raw,echo=0,link=A pty,raw,echo=0,link=B). What is
// written to one end is read from the other.
//
// Unplug tears the pair down, as pulling out a USB-serial adapter does to
// the programs that have it open: their reads and writes fail and the
// paths are gone. Plug makes a new pair at the same paths.
type PTYPair struct {
	A, B string // the two ends; a simulated printer opens A, the driver B

	mu    sync.Mutex
	socat *socat // nil while unplugged
}

// socat is one running socat process.
type socat struct {
	cmd    *exec.Cmd
	log    *lockedBuffer // its stderr
	exited chan struct{} // closed once it exited and was waited for
}

// NewPTYPair plugs in a new pair in a temporary directory and unplugs it
// with t.Cleanup. Without socat it skips the test, or fails it in CI
// (internal/testenv).
func NewPTYPair(t testing.TB) *PTYPair {
	t.Helper()
	if _, err := exec.LookPath("socat"); err != nil {
		testenv.Missing(t, "socat (the serial tests join pty pairs with it)", err, "apt-get install -y socat")
	}
	dir := t.TempDir()
	p := &PTYPair{A: filepath.Join(dir, "ttyA"), B: filepath.Join(dir, "ttyB")}
	if err := p.Plug(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Unplug(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// Plug starts a new pair at A and B and returns once both paths exist. A
// plugged pair stays as it is.
func (p *PTYPair) Plug() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.socat != nil {
		select {
		case <-p.socat.exited:
			p.socat = nil // it died on its own: plug in a new one
		default:
			return nil
		}
	}
	for _, link := range []string{p.A, p.B} {
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pty pair: remove stale link: %w", err)
		}
	}
	cmd := exec.Command("socat", "-d", "-d", "pty,raw,echo=0,link="+p.A, "pty,raw,echo=0,link="+p.B)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("pty pair: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pty pair: start socat: %w", err)
	}
	s := &socat{cmd: cmd, log: &lockedBuffer{}, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer close(s.exited)
		sc := bufio.NewScanner(stderr)
		announced := false
		for sc.Scan() {
			s.log.add(sc.Text())
			// socat makes both links before it says this.
			if !announced && strings.Contains(sc.Text(), "starting data transfer loop") {
				announced = true
				close(ready)
			}
		}
		_ = cmd.Wait() // socat ends by our signal; its log tells anything else
	}()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	select {
	case <-ready:
		p.socat = s
		for _, link := range []string{p.A, p.B} {
			if _, err := os.Lstat(link); err != nil {
				return fmt.Errorf("pty pair: socat started but made no link: %w\n%s", err, s.log)
			}
		}
		return nil
	case <-s.exited:
		return fmt.Errorf("pty pair: socat exited before joining the ptys:\n%s", s.log)
	case <-timeout.C:
		_ = cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("pty pair: socat did not join the ptys within %s:\n%s", waitTimeout, s.log)
	}
}

// Unplug stops the pair: both ends hang up and their paths go away. An
// unplugged pair stays as it is.
func (p *PTYPair) Unplug() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.socat
	if s == nil {
		return nil
	}
	p.socat = nil
	// On SIGTERM socat closes the ptys and removes its links.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pty pair: stop socat: %w", err)
	}
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	select {
	case <-s.exited:
	case <-timeout.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	for _, link := range []string{p.A, p.B} {
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pty pair: remove link: %w", err)
		}
	}
	return nil
}

// lockedBuffer collects lines written by one goroutine and read by another.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// SerialSim is a simulated printer at the end of a serial line: a
// printersim serving end A of a PTYPair, for a driver that opens end B.
// It shows faults the way a serial printer does. Down is the printer's
// USB-serial device gone: the pair is unplugged until the fault clears.
// Drop is the cable pulled out mid-ticket: the pair is unplugged the
// moment the simulator drops the line, and plugged back at once.
//
// SetFault, Plug and Unplug return once the line is in its new state: up
// and served, or gone.
type SerialSim struct {
	*printersim.Printer
	Line *PTYPair

	t    testing.TB
	done chan struct{} // closed when run returns

	mu       sync.Mutex
	unplug   bool          // unplugged by the test
	closed   bool          // the test is over
	changed  chan struct{} // closed and replaced when the above or the fault change
	serving  bool          // end A is open and served
	servedCh chan struct{} // closed and replaced when serving changes
	err      error         // the first plumbing failure
}

var _ Sim = (*SerialSim)(nil)

// StartSerial starts a simulated printer with opts behind a fresh pty pair
// and returns it and the device path a driver opens. Both are closed with
// t.Cleanup. It fails the test when socat is not installed.
func StartSerial(t testing.TB, opts printersim.Options) (*SerialSim, string) {
	t.Helper()
	line := NewPTYPair(t)
	sim, err := printersim.New(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	s := &SerialSim{
		Printer:  sim,
		Line:     line,
		t:        t,
		done:     make(chan struct{}),
		changed:  make(chan struct{}),
		servedCh: make(chan struct{}),
	}
	if opts.Fault == printersim.FaultDown {
		if err := line.Unplug(); err != nil {
			t.Fatal(err)
		}
	}
	go s.run()
	t.Cleanup(func() {
		s.mu.Lock()
		s.closed = true
		s.signal()
		s.mu.Unlock()
		if err := sim.Close(); err != nil {
			t.Errorf("close simulator: %v", err)
		}
		<-s.done
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err != nil {
			t.Errorf("serial line: %v", s.err)
		}
	})
	if opts.Fault != printersim.FaultDown {
		s.waitServing(true)
	}
	return s, line.B
}

// SetFault changes the simulator's fault. Down unplugs the line; leaving
// down plugs it back.
func (s *SerialSim) SetFault(f printersim.Fault) {
	s.t.Helper()
	s.Printer.SetFault(f)
	s.mu.Lock()
	s.signal()
	s.mu.Unlock()
	if f == printersim.FaultDown {
		if err := s.Line.Unplug(); err != nil {
			s.t.Error(err)
		}
		s.waitServing(false)
		return
	}
	s.waitServing(true)
}

// Unplug pulls the cable: the pair goes away until Plug.
func (s *SerialSim) Unplug() {
	s.t.Helper()
	s.mu.Lock()
	s.unplug = true
	s.signal()
	s.mu.Unlock()
	if err := s.Line.Unplug(); err != nil {
		s.t.Error(err)
	}
	s.waitServing(false)
}

// Plug plugs the cable back in: a new pair at the same paths, served by
// the same simulator.
func (s *SerialSim) Plug() {
	s.t.Helper()
	s.mu.Lock()
	s.unplug = false
	s.signal()
	s.mu.Unlock()
	if s.Printer.Fault() != printersim.FaultDown {
		s.waitServing(true)
	}
}

// signal wakes run; s.mu is held.
func (s *SerialSim) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *SerialSim) setServing(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serving = v
	close(s.servedCh)
	s.servedCh = make(chan struct{})
}

// waitServing waits until end A is open and served (want true), or until
// the simulator has seen the line go (want false).
func (s *SerialSim) waitServing(want bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		s.mu.Lock()
		serving, ch, err := s.serving, s.servedCh, s.err
		s.mu.Unlock()
		if serving == want {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			s.t.Errorf("serial line: got serving %v, want %v within %s (plumbing error: %v)", serving, want, waitTimeout, err)
			return
		}
	}
}

func (s *SerialSim) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// run keeps the line in the state the test and the fault ask for.
func (s *SerialSim) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		closed, up, changed := s.closed, !s.unplug && s.Printer.Fault() != printersim.FaultDown, s.changed
		s.mu.Unlock()
		if closed {
			return
		}
		if !up {
			<-changed
			continue
		}
		if err := s.Line.Plug(); err != nil {
			s.fail(err)
			<-changed
			continue
		}
		port, err := printersim.OpenSerial(s.Line.A, 0)
		if err != nil {
			s.fail(err)
			<-changed
			continue
		}
		s.setServing(true)
		s.Printer.ServeConn(port) // until a drop, an unplug or the end
		s.setServing(false)
		// Whatever ended the stream, the cable is out now.
		if err := s.Line.Unplug(); err != nil {
			s.fail(err)
		}
	}
}
