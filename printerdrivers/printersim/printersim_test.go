package printersim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// waitTimeout bounds every wait in these tests; nothing waits this long
// unless something is broken.
const waitTimeout = 10 * time.Second

// client is a raw connection to the simulator.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(waitTimeout)); err != nil {
		t.Fatal(err)
	}
	return &client{t: t, conn: c, r: bufio.NewReader(c)}
}

func (c *client) send(b []byte) {
	c.t.Helper()
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// status asks DLE EOT 1, 2, 4 and parses the answers. As the printer
// answers in arrival order, an answer also proves that everything sent
// before the request has been received.
func (c *client) status() storeprint.PrinterStatus {
	c.t.Helper()
	c.send(escpos.StatusQuery())
	n1, n2, n4, err := escpos.ReadStatus(c.r)
	if err != nil {
		c.t.Fatalf("read status: %v", err)
	}
	return escpos.ParseStatus(n1, n2, n4)
}

func (c *client) confirmation() string {
	c.t.Helper()
	id, err := escpos.ReadConfirmation(c.r)
	if err != nil {
		c.t.Fatalf("read confirmation: %v", err)
	}
	return id
}

func ticket(t *testing.T, taskNo string) []byte {
	t.Helper()
	b, err := escpos.Encode(storeprint.Ticket{
		StoreID: "store-001", Station: "hot", OrderID: "1001",
		Items:  []storeprint.Item{{Name: "宫保鸡丁", Qty: 2, Station: "hot"}},
		TaskNo: taskNo,
	}, escpos.GB18030, 48, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPrinter_Serve(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		out := &testlog.Buffer{}
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		p, addr := printertest.StartTCP(t, printersim.Options{Out: out, Now: func() time.Time { return at }})
		c := dial(t, addr)
		c.send(append(ticket(t, "order_1_station_hot"), escpos.ProcessIDRequest("0427")...))
		if got := c.confirmation(); got != "0427" {
			t.Fatalf("got confirmation %q, want 0427", got)
		}
		printed := p.Printed()
		if len(printed) != 1 || printed[0].TaskNo != "order_1_station_hot" {
			t.Fatalf("got printed %+v, want one ticket order_1_station_hot", printed)
		}
		if !strings.Contains(printed[0].Text, "2 x 宫保鸡丁") {
			t.Errorf("got text %q, want the item in it", printed[0].Text)
		}
		var line struct {
			TaskNo string    `json:"task_no"`
			Text   string    `json:"text"`
			At     time.Time `json:"at"`
		}
		if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
			t.Fatalf("out %q: %v", out.String(), err)
		}
		if line.TaskNo != "order_1_station_hot" || line.Text != printed[0].Text || !line.At.Equal(at) {
			t.Fatalf("got out line %+v, want the printed ticket", line)
		}
		if strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("got out %q, want one line", out.String())
		}
	})

	t.Run("Status", func(t *testing.T) {
		t.Parallel()
		for _, f := range printersim.Faults {
			if f == printersim.FaultDown {
				continue
			}
			t.Run(string(f), func(t *testing.T) {
				t.Parallel()
				_, addr := printertest.StartTCP(t, printersim.Options{Fault: f})
				if got, want := dial(t, addr).status(), f.Status(); got != want {
					t.Fatalf("got %+v, want %+v", got, want)
				}
			})
		}
	})

	t.Run("ByteAtATime", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{})
		c := dial(t, addr)
		for _, b := range append(ticket(t, "order_2_station_hot"), escpos.ProcessIDRequest("0002")...) {
			c.send([]byte{b})
		}
		if got := c.confirmation(); got != "0002" {
			t.Fatalf("got %q, want 0002", got)
		}
		if got := printertest.TaskNos(p.Printed()); len(got) != 1 || got[0] != "order_2_station_hot" {
			t.Fatalf("got %q", got)
		}
	})

	t.Run("HoldWhileNotReady", func(t *testing.T) {
		t.Parallel()
		for _, f := range []printersim.Fault{printersim.FaultOffline, printersim.FaultPaperEnd, printersim.FaultCoverOpen} {
			t.Run(string(f), func(t *testing.T) {
				t.Parallel()
				p, addr := printertest.StartTCP(t, printersim.Options{Fault: f})
				c := dial(t, addr)
				c.send(append(ticket(t, "order_3_station_hot"), escpos.ProcessIDRequest("0003")...))
				if got := c.status(); got != f.Status() {
					t.Fatalf("got status %+v, want %+v", got, f.Status())
				}
				if got := p.Printed(); len(got) != 0 {
					t.Fatalf("got %d tickets printed under %s, want none", len(got), f)
				}
				p.SetFault(printersim.FaultNone)
				if got := c.confirmation(); got != "0003" {
					t.Fatalf("got %q, want 0003", got)
				}
				if got := printertest.TaskNos(p.Printed()); len(got) != 1 {
					t.Fatalf("got %q after the fault cleared, want the kept ticket", got)
				}
			})
		}
	})

	t.Run("Slow", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultSlow, SlowDelay: time.Hour})
		c := dial(t, addr)
		c.send(append(ticket(t, "order_4_station_hot"), escpos.ProcessIDRequest("0004")...))
		if got := c.status().State; got != storeprint.PrinterReady {
			t.Fatalf("got %v while slow, want ready", got)
		}
		if got := p.Printed(); len(got) != 0 {
			t.Fatalf("got %d tickets within the slow delay, want none", len(got))
		}
		p.SetFault(printersim.FaultNone)
		if got := c.confirmation(); got != "0004" {
			t.Fatalf("got %q, want 0004", got)
		}
	})

	t.Run("SlowDelayPasses", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultSlow, SlowDelay: time.Millisecond})
		c := dial(t, addr)
		c.send(append(ticket(t, "order_5_station_hot"), escpos.ProcessIDRequest("0005")...))
		if got := c.confirmation(); got != "0005" {
			t.Fatalf("got %q, want 0005", got)
		}
		if got := p.Fault(); got != printersim.FaultSlow {
			t.Fatalf("got fault %v, want it unchanged", got)
		}
	})

	t.Run("Drop", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultDrop})
		c := dial(t, addr)
		if got := c.status().State; got != storeprint.PrinterReady {
			t.Fatalf("got %v, want ready", got)
		}
		c.send(append(ticket(t, "order_6_station_hot"), escpos.ProcessIDRequest("0006")...))
		if _, err := c.r.ReadByte(); err == nil {
			t.Fatal("got an answer, want the connection closed")
		}
		if got := p.Printed(); len(got) != 0 {
			t.Fatalf("got %d tickets, want none", len(got))
		}
		p.SetFault(printersim.FaultNone)
		c2 := dial(t, addr)
		c2.send(append(ticket(t, "order_7_station_hot"), escpos.ProcessIDRequest("0007")...))
		if got := c2.confirmation(); got != "0007" {
			t.Fatalf("got %q, want 0007", got)
		}
		if got := printertest.TaskNos(p.Printed()); len(got) != 1 || got[0] != "order_7_station_hot" {
			t.Fatalf("got %q, want only the ticket sent after the fault", got)
		}
	})

	t.Run("LostAck", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultLostAck})
		c := dial(t, addr)
		c.send(append(ticket(t, "order_8_station_hot"), escpos.ProcessIDRequest("0008")...))
		// The status answer proves the request was received, under
		// lost_ack, even if it came in a read after the ticket's.
		c.status()
		printertest.WaitPrinted(t, p, 1)
		p.SetFault(printersim.FaultNone)
		c.send(append(ticket(t, "order_9_station_hot"), escpos.ProcessIDRequest("0009")...))
		// Answers come in order: had 0008 been answered, it would come first.
		if got := c.confirmation(); got != "0009" {
			t.Fatalf("got %q, want 0009 (0008 was received under lost_ack)", got)
		}
		if got := printertest.TaskNos(p.Printed()); len(got) != 2 {
			t.Fatalf("got %q, want both tickets printed", got)
		}
	})

	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultDown})
		c := dial(t, addr)
		c.send(escpos.StatusQuery())
		if _, err := c.r.ReadByte(); err == nil {
			t.Fatal("got an answer while down, want the connection closed")
		}
		p.SetFault(printersim.FaultNone)
		if got := dial(t, addr).status().State; got != storeprint.PrinterReady {
			t.Fatalf("got %v after down cleared, want ready", got)
		}
	})

	t.Run("OnePrinterManyConnections", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultOffline})
		a, b := dial(t, addr), dial(t, addr)
		a.send(append(ticket(t, "order_10_station_hot"), escpos.ProcessIDRequest("0010")...))
		a.status() // received
		b.send(append(ticket(t, "order_11_station_hot"), escpos.ProcessIDRequest("0011")...))
		b.status()
		p.SetFault(printersim.FaultNone)
		if got := b.confirmation(); got != "0011" {
			t.Fatalf("b: got %q", got)
		}
		// b's ticket arrived after a's, so a's printed first.
		if got := a.confirmation(); got != "0010" {
			t.Fatalf("a: got %q", got)
		}
		if got := printertest.TaskNos(p.Printed()); strings.Join(got, ",") != "order_10_station_hot,order_11_station_hot" {
			t.Fatalf("got %q, want arrival order", got)
		}
	})

	t.Run("PartialTicketDiscarded", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{})
		c := dial(t, addr)
		b := ticket(t, "order_12_station_hot")
		c.send(b[:bytes.IndexByte(b, '\n')+1]) // the first line, and no cut
		c.status()
		c.conn.Close()
		c2 := dial(t, addr)
		c2.send(append(ticket(t, "order_13_station_hot"), escpos.ProcessIDRequest("0013")...))
		c2.confirmation()
		if got := printertest.TaskNos(p.Printed()); len(got) != 1 || got[0] != "order_13_station_hot" {
			t.Fatalf("got %q, want only the complete ticket", got)
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		t.Parallel()
		p, err := printersim.New(printersim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Serve(l); !errors.Is(err, printersim.ErrClosed) {
			t.Fatalf("got %v, want ErrClosed", err)
		}
	})
}

func TestPrinter_ServeConn(t *testing.T) {
	t.Parallel()
	// Any byte stream will do, as for a serial line.
	p, err := printersim.New(printersim.Options{Encoding: escpos.UTF8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	host, dev := net.Pipe()
	done := make(chan struct{})
	go func() {
		p.ServeConn(dev)
		close(done)
	}()
	b, err := escpos.Encode(storeprint.Ticket{Station: "bar", Items: []storeprint.Item{{Name: "Mojito 🍹", Qty: 1}}, TaskNo: "order_1_station_bar"},
		escpos.UTF8, 32, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if _, err := host.Write(append(b, escpos.ProcessIDRequest("1234")...)); err != nil {
			t.Errorf("write: %v", err)
		}
	}()
	host.SetDeadline(time.Now().Add(waitTimeout))
	if id, err := escpos.ReadConfirmation(bufio.NewReader(host)); err != nil || id != "1234" {
		t.Fatalf("got %q, %v; want 1234", id, err)
	}
	if got := p.Printed(); len(got) != 1 || !strings.Contains(got[0].Text, "Mojito 🍹") {
		t.Fatalf("got %+v", got)
	}
	host.Close()
	<-done
}

func TestNew(t *testing.T) {
	t.Parallel()
	t.Run("ErrEncoding", func(t *testing.T) {
		t.Parallel()
		if _, err := printersim.New(printersim.Options{Encoding: "latin-9"}); err == nil || !strings.Contains(err.Error(), "latin-9") {
			t.Fatalf("got %v, want an error naming the encoding", err)
		}
	})
	t.Run("ErrFault", func(t *testing.T) {
		t.Parallel()
		if _, err := printersim.New(printersim.Options{Fault: "jammed"}); err == nil || !strings.Contains(err.Error(), "jammed") {
			t.Fatalf("got %v, want an error naming the fault", err)
		}
	})
}

func TestParseFault(t *testing.T) {
	t.Parallel()
	for _, f := range printersim.Faults {
		got, err := printersim.ParseFault(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFault(%q): got %q, %v", f, got, err)
		}
		if f.Description() == "" {
			t.Errorf("%s has no description", f)
		}
	}
	_, err := printersim.ParseFault("PAPER_END")
	if err == nil || !strings.Contains(err.Error(), "paper_end") {
		t.Fatalf("got %v, want an error listing the faults", err)
	}
}
