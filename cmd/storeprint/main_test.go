package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// printUntilSent prints a ticket, again as long as nothing was sent: the
// simulator may not have opened its end of the line yet, and a print that
// sent nothing is safe to repeat.
func printUntilSent(t *testing.T, p gateway.Printer, taskNo, processID string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		err := p.Print(context.Background(), &gateway.PrintJob{Ticket: printertest.Ticket(taskNo), ProcessID: processID})
		if err == nil {
			return
		}
		if gateway.Outcome(err) != gateway.PrintNotSent || time.Now().After(deadline) {
			t.Fatalf("Print %s: %v", taskNo, err)
		}
	}
}

// readPaper reads the simulator's paper file.
func readPaper(t *testing.T, path string) []printersim.Ticket {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var tickets []printersim.Ticket
	for sc.Scan() {
		var tk printersim.Ticket
		if err := json.Unmarshal(sc.Bytes(), &tk); err != nil {
			t.Fatalf("paper line %q: %v", sc.Text(), err)
		}
		tickets = append(tickets, tk)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tickets
}

const waitTimeout = 10 * time.Second

// waitLine waits for a line of o starting with prefix and returns the
// rest.
func waitLine(t *testing.T, o *testlog.Buffer, prefix string) string {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		text, ch := o.Next()
		lines := strings.Split(text, "\n")
		for _, l := range lines[:len(lines)-1] { // complete lines only
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest
			}
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("no line %q in output:\n%s", prefix, text)
		}
	}
}

func setup(t *testing.T, args ...string) (*Main, *testlog.Buffer, *testlog.Buffer) {
	t.Helper()
	m := NewMain()
	stdout, stderr := new(testlog.Buffer), new(testlog.Buffer)
	m.Stdout, m.Stderr = stdout, stderr
	if err := m.ParseFlags(args); err != nil {
		t.Fatalf("ParseFlags(%q): %v", args, err)
	}
	return m, stdout, stderr
}

func TestMain_ParseFlags(t *testing.T) {
	t.Parallel()

	t.Run("Help", func(t *testing.T) {
		t.Parallel()
		for _, arg := range []string{"--help", "-h", "help"} {
			m := NewMain()
			stdout := new(testlog.Buffer)
			m.Stdout = stdout
			if err := m.ParseFlags([]string{arg}); !errors.Is(err, errHelp) {
				t.Fatalf("%s: got %v, want errHelp", arg, err)
			}
			if got := stdout.String(); !strings.Contains(got, "printersim") || !strings.Contains(got, "reconcile") {
				t.Fatalf("%s: got help %q, want printersim and reconcile listed", arg, got)
			}
		}
	})

	t.Run("PrinterSimHelp", func(t *testing.T) {
		t.Parallel()
		m := NewMain()
		stdout := new(testlog.Buffer)
		m.Stdout = stdout
		if err := m.ParseFlags([]string{"printersim", "--help"}); !errors.Is(err, errHelp) {
			t.Fatalf("got %v, want errHelp", err)
		}
		got := stdout.String()
		for _, f := range printersim.Faults {
			if !strings.Contains(got, "  "+string(f)+" ") {
				t.Errorf("help does not list fault %s:\n%s", f, got)
			}
		}
		for _, flag := range []string{"--listen", "--serial", "--baud", "--out", "--paper", "--name", "--encoding", "--fault", "--model", "--slow", "--control", "PUT  /fault", "socat",
			"DLE EOT", "DLE ENQ", "GS ( H", "GS r", "GS I", "GS a", "ESC @", `"EPSON"`, printersim.ModelName} {
			if !strings.Contains(got, flag) {
				t.Errorf("help does not mention %s", flag)
			}
		}
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		m, _, _ := setup(t, "printersim", "--listen", "127.0.0.1:0", "--out", "paper.jsonl", "--encoding", "cp437",
			"--fault", "paper_end", "--slow", "5s", "--control", "127.0.0.1:0", "--paper", "-", "--name", "hot-1")
		c := m.cmd.(*printerSim)
		if c.Listen != "127.0.0.1:0" || c.Out != "paper.jsonl" || c.Encoding != "cp437" ||
			c.Fault != printersim.FaultPaperEnd || c.Slow != 5*time.Second || c.Control != "127.0.0.1:0" ||
			c.Paper != "-" || c.Name != "hot-1" {
			t.Fatalf("got %+v", c)
		}
		m, _, _ = setup(t, "printersim", "--listen", "127.0.0.1:9101")
		if c := m.cmd.(*printerSim); c.Paper != "" || c.Name != "127.0.0.1:9101" || c.Model != printersim.ModelTM {
			t.Fatalf("got paper %q, name %q, model %q; want no paper, named after --listen, tm", c.Paper, c.Name, c.Model)
		}
		for _, model := range printersim.Models {
			m, _, _ = setup(t, "printersim", "--model", string(model))
			if c := m.cmd.(*printerSim); c.Model != model {
				t.Fatalf("--model %s: got %q", model, c.Model)
			}
		}
	})

	t.Run("Serial", func(t *testing.T) {
		t.Parallel()
		m, _, _ := setup(t, "printersim", "--serial", "/dev/ttyUSB0", "--baud", "9600")
		c := m.cmd.(*printerSim)
		if c.Serial != "/dev/ttyUSB0" || c.Baud != 9600 || c.Listen != "" {
			t.Fatalf("got %+v, want serial only at 9600 baud", c)
		}
		m, _, _ = setup(t, "printersim", "--serial", "/dev/ttyUSB0", "--listen", "127.0.0.1:0")
		if c := m.cmd.(*printerSim); c.Serial != "/dev/ttyUSB0" || c.Listen != "127.0.0.1:0" || c.Baud != printersim.DefaultBaud {
			t.Fatalf("got %+v, want serial and TCP", c)
		}
	})

	t.Run("Protocols", func(t *testing.T) {
		t.Parallel()
		m, _, _ := setup(t, "printersim", "--protocol", "epos", "--listen", "127.0.0.1:0", "--devid", "kitchen", "--job-log")
		if c := m.cmd.(*printerSim); c.Protocol != "epos" || c.DevID != "kitchen" || !c.JobLog || c.Listen != "127.0.0.1:0" {
			t.Fatalf("got %+v, want ePOS-Print with a job log", c)
		}
		m, _, _ = setup(t, "printersim", "--protocol", "cloudprnt", "--url", "http://127.0.0.1:8080/v1/cloudprnt",
			"--mac", "00-11-62-1D-9A-B7", "--poll", "2s", "--emulation", "escpos", "--user", "star", "--password", "pw")
		if c := m.cmd.(*printerSim); c.Protocol != "cloudprnt" || c.Listen != "" || c.Poll != 2*time.Second ||
			c.Emulation != "escpos" || c.Name != "00-11-62-1D-9A-B7" || c.Password != "pw" {
			t.Fatalf("got %+v, want a CloudPRNT printer polling every 2s", c)
		}
	})

	t.Run("Err", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			args []string
			want string // in the error
		}{
			{"NoCommand", nil, "command is required"},
			{"UnknownCommand", []string{"frobnicate"}, `"frobnicate"`},
			{"UnknownFlag", []string{"printersim", "--bogus"}, "bogus"},
			{"Fault", []string{"printersim", "--fault", "jammed"}, `--fault: unknown fault "jammed"`},
			{"Model", []string{"printersim", "--model", "tm88"}, `--model: unknown model "tm88" (one of tm, basic, dumb)`},
			{"Slow", []string{"printersim", "--slow", "soon"}, "slow"},
			{"SlowNegative", []string{"printersim", "--slow", "-1s"}, "--slow"},
			{"Encoding", []string{"printersim", "--encoding", "ebcdic"}, "--encoding"},
			{"Listen", []string{"printersim", "--listen", "9100"}, "--listen"},
			{"ListenEmpty", []string{"printersim", "--listen", ""}, "--listen"},
			{"Baud", []string{"printersim", "--serial", "/dev/ttyUSB0", "--baud", "0"}, "--baud"},
			{"Control", []string{"printersim", "--control", "nowhere"}, "--control"},
			{"Out", []string{"printersim", "--out", ""}, "--out"},
			{"PaperStdout", []string{"printersim", "--paper", "-"}, "--paper: - is stdout, where --out writes too"},
			{"PaperOut", []string{"printersim", "--paper", "p.txt", "--out", "p.txt"}, `--paper: "p.txt" is the --out file too`},
			{"Argument", []string{"printersim", "extra"}, `unexpected argument "extra"`},
			{"Protocol", []string{"printersim", "--protocol", "ipp"}, `--protocol: "ipp"`},
			{"EPOSSerial", []string{"printersim", "--protocol", "epos", "--serial", "/dev/ttyS0"}, "--serial"},
			{"CloudPRNTNoURL", []string{"printersim", "--protocol", "cloudprnt", "--mac", "00:11:62:1d:9a:b7"}, "--url"},
			{"CloudPRNTURL", []string{"printersim", "--protocol", "cloudprnt", "--url", "gateway:8080", "--mac", "00:11:62:1d:9a:b7"}, "--url"},
			{"CloudPRNTMAC", []string{"printersim", "--protocol", "cloudprnt", "--url", "http://g/v1/cloudprnt", "--mac", "00:11"}, "--mac"},
			{"CloudPRNTListen", []string{"printersim", "--protocol", "cloudprnt", "--url", "http://g/v1/cloudprnt", "--mac", "00:11:62:1d:9a:b7", "--listen", "127.0.0.1:0"}, "--listen"},
			{"CloudPRNTPoll", []string{"printersim", "--protocol", "cloudprnt", "--url", "http://g/v1/cloudprnt", "--mac", "00:11:62:1d:9a:b7", "--poll", "0s"}, "--poll"},
			{"CloudPRNTEmulation", []string{"printersim", "--protocol", "cloudprnt", "--url", "http://g/v1/cloudprnt", "--mac", "00:11:62:1d:9a:b7", "--emulation", "zpl"}, "--emulation"},
		}
		for _, tt := range tests {
			m := NewMain()
			m.Stdout, m.Stderr = new(testlog.Buffer), new(testlog.Buffer)
			err := m.ParseFlags(tt.args)
			if err == nil || errors.Is(err, errHelp) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.want)
			}
		}
	})
}

// runSim runs the printersim command until the test ends.
func runSim(t *testing.T, m *Main) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

func TestMain_Run(t *testing.T) {
	t.Parallel()

	t.Run("PrinterSimEPOS", func(t *testing.T) {
		t.Parallel()
		paper := filepath.Join(t.TempDir(), "paper.jsonl")
		m, _, stderr := setup(t, "printersim", "--protocol", "epos", "--listen", "127.0.0.1:0", "--job-log", "--out", paper)
		runSim(t, m)
		line := waitLine(t, stderr, "printersim ePOS-Print listening on ")
		base, _, _ := strings.Cut(line, " ")
		cfg := printertest.Config(5 * time.Second)
		cfg.Driver, cfg.Address, cfg.Options = "epos", base, epos.Options{JobLog: true}
		p := epos.New(cfg, "store-001")
		defer p.Close()
		if err := p.Print(context.Background(), &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001"}); err != nil {
			t.Fatalf("Print: %v", err)
		}
		if got := readPaper(t, paper); len(got) != 1 || got[0].TaskNo != "order_1_station_hot" {
			t.Fatalf("got paper %+v, want the ticket", got)
		}
	})

	t.Run("PrinterSimCloudPRNT", func(t *testing.T) {
		t.Parallel()
		srv := cloudprnt.NewServer(cloudprnt.ServerOptions{})
		url := printertest.ServeHTTP(t, srv)
		cfg := printertest.Config(5 * time.Second)
		const mac = "00:11:62:1d:9a:b7"
		cfg.Options = cloudprnt.Options{MAC: mac}
		p, err := cloudprnt.New(cfg, "store-001", srv)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		polled := srv.Polled(mac)
		paper := filepath.Join(t.TempDir(), "paper.jsonl")
		m, _, stderr := setup(t, "printersim", "--protocol", "cloudprnt", "--url", url, "--mac", "00:11:62:1D:9A:B7",
			"--poll", "50ms", "--out", paper)
		runSim(t, m)
		waitLine(t, stderr, "printersim CloudPRNT polling ")
		select {
		case <-polled:
		case <-time.After(10 * time.Second):
			t.Fatal("the simulator did not poll")
		}
		if err := p.Print(context.Background(), &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001"}); err != nil {
			t.Fatalf("Print: %v", err)
		}
		if got := readPaper(t, paper); len(got) != 1 || got[0].TaskNo != "order_1_station_hot" {
			t.Fatalf("got paper %+v, want the ticket", got)
		}
	})

	t.Run("PrinterSim", func(t *testing.T) {
		t.Parallel()
		paper := filepath.Join(t.TempDir(), "paper.jsonl")
		text := filepath.Join(t.TempDir(), "paper.txt")
		m, _, stderr := setup(t, "printersim", "--listen", "127.0.0.1:0", "--out", paper, "--control", "127.0.0.1:0",
			"--paper", text, "--name", "hot-1")
		runSim(t, m)
		addr, _, _ := strings.Cut(waitLine(t, stderr, "printersim listening on "), " ")
		control := waitLine(t, stderr, "printersim control on ")

		cfg := printertest.Config(5 * time.Second)
		cfg.Driver, cfg.Address = "tcp", addr
		p := tcp.New(cfg, "store-001")
		defer p.Close()
		if err := p.Print(context.Background(), &gateway.PrintJob{Ticket: printertest.Ticket("order_1_station_hot"), ProcessID: "0001"}); err != nil {
			t.Fatalf("Print: %v", err)
		}
		// The ticket is on the paper file as soon as it is confirmed.
		lines := readPaper(t, paper)
		if len(lines) != 1 || lines[0].TaskNo != "order_1_station_hot" || lines[0].At.IsZero() {
			t.Fatalf("got paper %+v, want one ticket", lines)
		}
		// And as text, as it reads on paper.
		b, err := os.ReadFile(text)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), lines[0].PaperText("hot-1", time.Local); got != want {
			t.Fatalf("got --paper\n%s\nwant\n%s", got, want)
		}

		// Faults change through the control API.
		req, err := http.NewRequest("PUT", control+"/fault", strings.NewReader(`{"fault":"paper_end"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT /fault: got %d, want 200", resp.StatusCode)
		}
		err = p.Print(context.Background(), &gateway.PrintJob{Ticket: printertest.Ticket("order_2_station_hot"), ProcessID: "0002"})
		if gateway.Outcome(err) != gateway.PrintNotReady {
			t.Fatalf("got %v, want not ready under paper_end", err)
		}
	})

	t.Run("PrinterSimSerial", func(t *testing.T) {
		t.Parallel()
		line := printertest.NewPTYPair(t)
		paper := filepath.Join(t.TempDir(), "paper.jsonl")
		m, _, stderr := setup(t, "printersim", "--serial", line.A, "--out", paper)
		runSim(t, m)
		waitLine(t, stderr, "printersim on serial "+line.A+" ")
		if strings.Contains(stderr.String(), "printersim listening on") {
			t.Errorf("got a TCP listener with --serial alone:\n%s", stderr)
		}

		cfg := printertest.Config(5 * time.Second)
		cfg.Driver, cfg.Address = "serial", line.B
		cfg.ConnectTimeout.Duration = 200 * time.Millisecond // a status request lost while the simulator reopens
		p := serial.New(cfg, "store-001")
		defer p.Close()
		printUntilSent(t, p, "order_1_station_hot", "0001")

		// Unplugged and plugged back: the simulator opens its end again.
		if err := line.Unplug(); err != nil {
			t.Fatal(err)
		}
		if err := line.Plug(); err != nil {
			t.Fatal(err)
		}
		printUntilSent(t, p, "order_2_station_hot", "0002")

		got := readPaper(t, paper)
		if len(got) != 2 || got[0].TaskNo != "order_1_station_hot" || got[1].TaskNo != "order_2_station_hot" {
			t.Fatalf("got paper %+v, want both tickets once", got)
		}
	})

	t.Run("ErrSerial", func(t *testing.T) {
		t.Parallel()
		m, _, _ := setup(t, "printersim", "--serial", filepath.Join(t.TempDir(), "ttyNONE"), "--out", filepath.Join(t.TempDir(), "p.jsonl"))
		defer m.Close()
		if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--serial") {
			t.Fatalf("got %v, want an error naming --serial", err)
		}
	})

	t.Run("ErrListen", func(t *testing.T) {
		t.Parallel()
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		m, _, _ := setup(t, "printersim", "--listen", busy.Addr().String(), "--out", filepath.Join(t.TempDir(), "p.jsonl"))
		defer m.Close()
		if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--listen") {
			t.Fatalf("got %v, want an error naming --listen", err)
		}
	})

	t.Run("ErrOut", func(t *testing.T) {
		t.Parallel()
		m, _, _ := setup(t, "printersim", "--listen", "127.0.0.1:0", "--out", filepath.Join(t.TempDir(), "missing", "p.jsonl"))
		defer m.Close()
		if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--out") {
			t.Fatalf("got %v, want an error naming --out", err)
		}
	})
}
