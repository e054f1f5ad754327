package serial_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/serial"
)

func harness() printertest.Harness {
	return printertest.Harness{
		Models: true,
		Open: func(t *testing.T, cfg gateway.PrinterConfig, opts printersim.Options) (gateway.Printer, printertest.Sim) {
			sim, path := printertest.StartSerial(t, opts)
			return open(t, cfg, path), sim
		},
		Unreachable: func(t *testing.T, cfg gateway.PrinterConfig) gateway.Printer {
			return open(t, cfg, filepath.Join(t.TempDir(), "ttyGONE"))
		},
		Script: func(t *testing.T, cfg gateway.PrinterConfig, serve printertest.Serve) gateway.Printer {
			return open(t, cfg, script(t, serve))
		},
	}
}

func open(t *testing.T, cfg gateway.PrinterConfig, path string) *serial.Printer {
	t.Helper()
	cfg.Driver, cfg.Address = "serial", path
	if cfg.Options == nil {
		// These tests script a TM printer (GS ( H); the conformance
		// suite covers every confirmation method.
		cfg.Options = printerdrivers.Stream{Confirm: "process_id"}
	}
	p := serial.New(cfg, "store-001")
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func TestPrinter_Conformance(t *testing.T) {
	t.Parallel()
	printertest.Exercise(t, harness())
}

// script is a device at the end of a serial line that does what the test
// says, for the behaviours the simulator has no fault for. It returns the
// path the driver opens.
func script(t *testing.T, serve printertest.Serve) string {
	t.Helper()
	line := printertest.NewPTYPair(t)
	port, err := printersim.OpenSerial(line.A, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(port, bufio.NewReader(port))
	}()
	t.Cleanup(func() {
		port.Close()
		<-done
	})
	return line.B
}

func job(taskNo, processID string) (*gateway.PrintJob, *[]string) {
	var calls []string
	return &gateway.PrintJob{
		Ticket:    printertest.Ticket(taskNo),
		ProcessID: processID,
		Prepare:   func(context.Context, []byte) error { calls = append(calls, "prepare"); return nil },
		Submitted: func(context.Context, string) { calls = append(calls, "submitted") },
	}, &calls
}

func TestPrinter_Print(t *testing.T) {
	t.Parallel()

	t.Run("Replug", func(t *testing.T) {
		t.Parallel()
		sim, path := printertest.StartSerial(t, printersim.Options{})
		p := open(t, printertest.Config(5*time.Second), path)
		ctx := context.Background()
		first, _ := job("order_1_station_hot", "0001")
		if err := p.Print(ctx, first); err != nil {
			t.Fatalf("Print before the unplug: %v", err)
		}

		sim.Unplug()
		unplugged, calls := job("order_2_station_hot", "0002")
		err := p.Print(ctx, unplugged)
		printertest.CheckOutcome(t, err, gateway.PrintNotSent, storeprint.PrinterOffline)
		if len(*calls) != 0 {
			t.Fatalf("got calls %q while unplugged, want none", *calls)
		}
		if st, err := p.Status(ctx); err != nil || st.State != storeprint.PrinterOffline {
			t.Fatalf("Status while unplugged: got %+v, %v; want offline and no error", st, err)
		}

		sim.Plug()
		if err := p.Print(ctx, unplugged); err != nil {
			t.Fatalf("Print after plugging back in: %v", err)
		}
		got := printertest.TaskNos(sim.Printed())
		if want := "order_1_station_hot,order_2_station_hot"; strings.Join(got, ",") != want {
			t.Fatalf("got on paper %q, want %s: nothing lost, nothing twice", got, want)
		}
	})

	t.Run("ReplugBetweenCalls", func(t *testing.T) {
		t.Parallel()
		// The device went away and came back while the driver was idle:
		// the line it kept open is dead, the device at the path is fine.
		sim, path := printertest.StartSerial(t, printersim.Options{})
		p := open(t, printertest.Config(5*time.Second), path)
		ctx := context.Background()
		first, _ := job("order_1_station_hot", "0001")
		if err := p.Print(ctx, first); err != nil {
			t.Fatalf("Print before the unplug: %v", err)
		}
		sim.Unplug()
		sim.Plug()
		second, _ := job("order_2_station_hot", "0002")
		if err := p.Print(ctx, second); err != nil {
			t.Fatalf("got %v, want the device opened afresh and the ticket confirmed", err)
		}
		if got := printertest.TaskNos(sim.Printed()); len(got) != 2 {
			t.Fatalf("got on paper %q, want 2 tickets", got)
		}
	})

	t.Run("DiscardsStaleInput", func(t *testing.T) {
		t.Parallel()
		path := script(t, func(w io.Writer, r *bufio.Reader) {
			if printertest.ReadStatusQuery(r) != nil {
				return
			}
			// Ready, and stale bytes behind it in the same write: another
			// ready answer and a confirmation of the next job's id.
			stale := append([]byte{0x12, 0x12, 0x12, 0x12, 0x12, 0x12}, escpos.ProcessIDAnswer("0001")...)
			w.Write(stale)
			if printertest.ReadStatusQuery(r) != nil {
				return
			}
			// Now out of paper: only a driver that reads this answer
			// knows.
			paperEnd := storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd}
			for _, n := range []byte{escpos.StatusPrinter, escpos.StatusOffline, escpos.StatusPaper} {
				b, _ := escpos.StatusByte(paperEnd, n)
				w.Write([]byte{b})
			}
			io.Copy(io.Discard, r)
		})
		p := open(t, printertest.Config(5*time.Second), path)
		if st, err := p.Status(context.Background()); err != nil || st.State != storeprint.PrinterReady {
			t.Fatalf("Status: got %+v, %v; want ready", st, err)
		}
		j, calls := job("order_1_station_hot", "0001")
		err := p.Print(context.Background(), j)
		printertest.CheckOutcome(t, err, gateway.PrintNotReady, storeprint.PrinterPaperEnd)
		if len(*calls) != 0 {
			t.Fatalf("got calls %q, want nothing sent", *calls)
		}
	})

	t.Run("ErrClosedWhileWaiting", func(t *testing.T) {
		t.Parallel()
		// No confirmation ever comes and the timeout is far off: Close,
		// from another goroutine, ends the wait.
		sim, path := printertest.StartSerial(t, printersim.Options{Fault: printersim.FaultLostAck})
		p := open(t, printertest.Config(time.Minute), path)
		closed := make(chan error, 1)
		j, _ := job("order_1_station_hot", "0001")
		j.Submitted = func(context.Context, string) { go func() { closed <- p.Close() }() }
		err := p.Print(context.Background(), j)
		printertest.CheckOutcome(t, err, gateway.PrintUncertain, "")
		if !strings.Contains(err.Error(), "printer closed") {
			t.Fatalf("got %v, want it to say the printer was closed", err)
		}
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		again, _ := job("order_2_station_hot", "0002")
		printertest.CheckOutcome(t, p.Print(context.Background(), again), gateway.PrintNotSent, "")
		if _, err := sim.WaitPrinted(waitCtx(t), 1); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPrinter_Status(t *testing.T) {
	t.Parallel()

	// answerWithFlowBytes answers the status query with XOFF and XON
	// ahead of a ready answer, as a printer with XON/XOFF handshake may.
	answerWithFlowBytes := func(w io.Writer, r *bufio.Reader) {
		if printertest.ReadStatusQuery(r) != nil {
			return
		}
		w.Write([]byte{0x13, 0x11, 0x12, 0x12, 0x12})
		io.Copy(io.Discard, r)
	}

	t.Run("XonXoff", func(t *testing.T) {
		t.Parallel()
		path := script(t, answerWithFlowBytes)
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = serial.Options{Stream: printerdrivers.Stream{Confirm: "process_id"}, Flow: "xonxoff"}
		st, err := open(t, cfg, path).Status(context.Background())
		if err != nil || st.State != storeprint.PrinterReady {
			t.Fatalf("got %+v, %v; want XOFF and XON taken by the line and ready", st, err)
		}
	})

	t.Run("ErrFlowBytesWithoutXonXoff", func(t *testing.T) {
		t.Parallel()
		path := script(t, answerWithFlowBytes)
		st, err := open(t, printertest.Config(5*time.Second), path).Status(context.Background())
		if !errors.Is(err, escpos.ErrStatusAnswer) || st.State != storeprint.PrinterUnknown {
			t.Fatalf("got %+v, %v; want unknown and ErrStatusAnswer", st, err)
		}
	})

	t.Run("RTSCTS", func(t *testing.T) {
		t.Parallel()
		// A pseudo-terminal has no CTS line; the setting must still
		// open and work.
		sim, path := printertest.StartSerial(t, printersim.Options{Fault: printersim.FaultCoverOpen})
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = serial.Options{Stream: printerdrivers.Stream{Confirm: "process_id"}, Flow: "rtscts"}
		st, err := open(t, cfg, path).Status(context.Background())
		if err != nil || st != sim.Fault().Status() {
			t.Fatalf("got %+v, %v; want %+v", st, err, sim.Fault().Status())
		}
	})

	t.Run("ErrBadSetting", func(t *testing.T) {
		t.Parallel()
		_, path := printertest.StartSerial(t, printersim.Options{})
		cfg := printertest.Config(5 * time.Second)
		cfg.Options = serial.Options{Stream: printerdrivers.Stream{Confirm: "process_id"}, Parity: "sideways"}
		st, err := open(t, cfg, path).Status(context.Background())
		if err != nil || st.State != storeprint.PrinterOffline {
			t.Fatalf("got %+v, %v; want offline (a device that cannot be opened)", st, err)
		}
	})
}

// checkConfig opens a serial printer with cfg's line settings through the
// driver registry, as the gateway does at start, and closes it.
func checkConfig(o serial.Options) error {
	cfg := gateway.PrinterConfig{Driver: "serial", Address: "/dev/ttyUSB0", Options: o}
	p, err := printerdrivers.Open(cfg, &printerdrivers.Env{StoreID: "s1"})
	if err != nil {
		return err
	}
	return p.Close()
}

func TestRegister_LineSettings(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		cfgs := []serial.Options{
			{},
			{Baud: 9600, DataBits: 7, Parity: "even", StopBits: "2", Flow: "none"},
		}
		if runtime.GOOS == "linux" {
			cfgs = append(cfgs, serial.Options{Parity: "odd", Flow: "rtscts"}, serial.Options{Parity: "mark", Flow: "xonxoff"})
		}
		for _, cfg := range cfgs {
			if err := checkConfig(cfg); err != nil {
				t.Errorf("open with %+v: got %v, want nil", cfg, err)
			}
		}
	})
	t.Run("Err", func(t *testing.T) {
		t.Parallel()
		type test struct {
			cfg  serial.Options
			want string
		}
		tests := []test{
			{serial.Options{Parity: "sideways"}, "parity"},
			{serial.Options{StopBits: "3"}, "stop_bits"},
			{serial.Options{DataBits: 9}, "data_bits"},
			{serial.Options{Flow: "dtrdsr"}, "flow"},
		}
		if runtime.GOOS != "windows" {
			tests = append(tests, test{serial.Options{StopBits: "1.5"}, "stop_bits: 1.5 stop bits are only available on Windows"})
		}
		if runtime.GOOS != "linux" {
			tests = append(tests, test{serial.Options{Flow: "xonxoff"}, `flow: "xonxoff" is not available`})
		}
		for _, tt := range tests {
			err := checkConfig(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("open with %+v: got %v, want an error with %q", tt.cfg, err, tt.want)
			}
		}
	})
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
