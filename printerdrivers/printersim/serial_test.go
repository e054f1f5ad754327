//go:build linux

package printersim_test

import (
	"bufio"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	bugst "go.bug.st/serial"
	"golang.org/x/sys/unix"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// setupSerial serves a simulated printer on end A of a fresh pty pair with
// ServeSerial and returns it, the pair and ServeSerial's result.
func setupSerial(t *testing.T, opts printersim.Options) (*printersim.Printer, *printertest.PTYPair, <-chan error) {
	t.Helper()
	line := printertest.NewPTYPair(t)
	p, err := printersim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.ServeSerial(line.A, 0) }()
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p, line, served
}

// serialClient is a driver's end of the line, B.
type serialClient struct {
	t    *testing.T
	port bugst.Port
	r    *bufio.Reader
}

func openSerial(t *testing.T, path string) *serialClient {
	t.Helper()
	port, err := printersim.OpenSerial(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { port.Close() })
	if err := port.SetReadTimeout(waitTimeout); err != nil {
		t.Fatal(err)
	}
	return &serialClient{t: t, port: port, r: bufio.NewReader(timeoutReader{port})}
}

// timeoutReader turns go.bug.st/serial's read timeout (0 bytes, no error)
// into an error.
type timeoutReader struct{ port bugst.Port }

func (r timeoutReader) Read(b []byte) (int, error) {
	n, err := r.port.Read(b)
	if n == 0 && err == nil {
		return 0, errors.New("read timed out")
	}
	return n, err
}

func (c *serialClient) send(b []byte) {
	c.t.Helper()
	if _, err := c.port.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// status asks for the status until the printer answers: bytes sent before
// the simulator has (re)opened its end are discarded as it opens it.
func (c *serialClient) status() storeprint.PrinterStatus {
	c.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		if err := c.port.SetReadTimeout(100 * time.Millisecond); err != nil {
			c.t.Fatal(err)
		}
		c.send(escpos.StatusQuery())
		n1, n2, n4, err := escpos.ReadStatus(c.r)
		if err == nil {
			if err := c.port.SetReadTimeout(waitTimeout); err != nil {
				c.t.Fatal(err)
			}
			return escpos.ParseStatus(n1, n2, n4)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no status answer within %s: %v", waitTimeout, err)
		}
		c.r.Reset(timeoutReader{c.port})
	}
}

func (c *serialClient) print(t *testing.T, taskNo, id string) {
	t.Helper()
	c.send(append(ticket(t, taskNo), escpos.ProcessIDRequest(id)...))
	got, err := escpos.ReadConfirmation(c.r)
	if err != nil || got != id {
		t.Fatalf("got confirmation %q, %v; want %s", got, err, id)
	}
}

func TestPrinter_ServeSerial(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p, line, _ := setupSerial(t, printersim.Options{})
		c := openSerial(t, line.B)
		if got := c.status(); got.State != storeprint.PrinterReady {
			t.Fatalf("got status %+v, want ready", got)
		}
		c.print(t, "order_1_station_hot", "0001")
		if got := printertest.TaskNos(p.Printed()); len(got) != 1 || got[0] != "order_1_station_hot" {
			t.Fatalf("got printed %q, want order_1_station_hot", got)
		}
	})

	t.Run("Replug", func(t *testing.T) {
		t.Parallel()
		p, line, _ := setupSerial(t, printersim.Options{})
		c := openSerial(t, line.B)
		c.status()
		c.print(t, "order_1_station_hot", "0001")
		if err := line.Unplug(); err != nil {
			t.Fatal(err)
		}
		if err := line.Plug(); err != nil {
			t.Fatal(err)
		}
		// The simulator opens its end again by itself.
		c = openSerial(t, line.B)
		c.status()
		c.print(t, "order_2_station_hot", "0002")
		if got := printertest.TaskNos(printertest.WaitPrinted(t, p, 2)); len(got) != 2 || got[1] != "order_2_station_hot" {
			t.Fatalf("got printed %q, want both tickets once", got)
		}
	})

	t.Run("DiscardsInputOnOpen", func(t *testing.T) {
		t.Parallel()
		p, line, _ := setupSerial(t, printersim.Options{Fault: printersim.FaultDown})
		c := openSerial(t, line.B)
		// Sent while the printer is off: never printed.
		stale := append(ticket(t, "order_1_station_hot"), escpos.ProcessIDRequest("0001")...)
		c.send(stale)
		waitQueued(t, line.A, len(stale))
		p.SetFault(printersim.FaultNone)
		c.status()
		c.print(t, "order_2_station_hot", "0002")
		if got := printertest.TaskNos(p.Printed()); len(got) != 1 || got[0] != "order_2_station_hot" {
			t.Fatalf("got printed %q, want only the ticket sent while on", got)
		}
	})

	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		p, line, _ := setupSerial(t, printersim.Options{})
		c := openSerial(t, line.B)
		c.status()
		p.SetFault(printersim.FaultDown)
		// The simulator closes its end: a status request is not answered.
		if err := c.port.SetReadTimeout(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		for {
			c.send(escpos.StatusQuery())
			if _, _, _, err := escpos.ReadStatus(c.r); err != nil {
				break
			}
			// Answered before the simulator saw the fault: ask again.
		}
		p.SetFault(printersim.FaultNone)
		c.r.Reset(timeoutReader{c.port})
		if got := c.status(); got.State != storeprint.PrinterReady {
			t.Fatalf("got status %+v after down cleared, want ready", got)
		}
	})

	t.Run("Closed", func(t *testing.T) {
		t.Parallel()
		p, _, served := setupSerial(t, printersim.Options{})
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, printersim.ErrClosed) {
				t.Fatalf("got %v, want nil once closed", err)
			}
		case <-ctx.Done():
			t.Fatal("ServeSerial did not return after Close")
		}
	})

	t.Run("ErrOpen", func(t *testing.T) {
		t.Parallel()
		p, err := printersim.New(printersim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		missing := filepath.Join(t.TempDir(), "ttyNONE")
		if err := p.ServeSerial(missing, 0); err == nil {
			t.Fatal("got nil, want an error for a missing device")
		}
	})
}

// waitQueued waits until n bytes wait in the input queue of the tty at
// path, which nobody else reads.
func waitQueued(t *testing.T, path string, n int) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(waitTimeout)
	for {
		queued, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d bytes queued at %s, want %d within %s", queued, path, n, waitTimeout)
		}
		// The bytes cross socat: give it the processor.
		runtime.Gosched()
	}
}
