package printersim_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/printersim")

func gsI(n byte) []byte { return []byte{escpos.GS, 'I', n} }
func gsA(n byte) []byte { return []byte{escpos.GS, 'a', n} }
func gsR(n byte) []byte { return []byte{escpos.GS, 'r', n} }

var escInit = []byte{escpos.ESC, '@'}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// bareTicket is a ticket without the ESC @ that Encode starts with (which
// turns automatic status back off): a line and a cut.
func bareTicket(taskNo string) []byte {
	return cat([]byte(taskNo+"\n"), []byte{escpos.GS, 'V', 'B', 0})
}

// The automatic status back of a printer in each state.
var (
	asbReady     = []byte{0x10, 0x00, 0x00, 0x00}
	asbOffline   = []byte{0x18, 0x00, 0x00, 0x00}
	asbPaperEnd  = []byte{0x18, 0x00, 0x0F, 0x00}
	asbCoverOpen = []byte{0x38, 0x00, 0x00, 0x00}
)

// readN reads exactly n bytes of answers.
func (c *client) readN(n int) []byte {
	c.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		c.t.Fatalf("read %d bytes: got % x, %v", n, b, err)
	}
	return b
}

// nothingMore checks that the next answer is the one to a status request
// sent now: nothing else was waiting to be read.
func (c *client) nothingMore() {
	c.t.Helper()
	c.send(escpos.StatusRequest(escpos.StatusPrinter))
	b := c.readN(1)
	if b[0]&0x93 != 0x12 {
		c.t.Fatalf("got % x, want only the answer to DLE EOT 1", b)
	}
}

// TestPrinter_Answers sends requests and checks the bytes that come back.
// Requests answered in turn with printing end with a process ID request,
// so that the answer to it proves every earlier one has come.
func TestPrinter_Answers(t *testing.T) {
	t.Parallel()
	pid, pidAnswer := escpos.ProcessIDRequest("0001"), escpos.ProcessIDAnswer("0001")
	eot1 := escpos.StatusRequest(escpos.StatusPrinter)
	tests := []struct {
		name string
		opts printersim.Options
		send []byte
		want []byte
	}{
		{name: "GSI1ModelID", send: cat(gsI(1), pid), want: cat([]byte{0x20}, pidAnswer)},
		{name: "GSI49ModelID", send: cat(gsI(49), pid), want: cat([]byte{0x20}, pidAnswer)},
		{name: "GSI2TypeIDChinese", send: cat(gsI(2), pid), want: cat([]byte{0x03}, pidAnswer)},
		{name: "GSI50TypeIDSingleByte", opts: printersim.Options{Encoding: escpos.CP437}, send: cat(gsI(50), pid), want: cat([]byte{0x02}, pidAnswer)},
		{name: "GSI3VersionID", send: cat(gsI(3), pid), want: cat([]byte{0x46}, pidAnswer)},
		{name: "GSI65Firmware", send: cat(gsI(65), pid), want: cat([]byte("_30.01 ESC/POS\x00"), pidAnswer)},
		{name: "GSI66Maker", send: cat(gsI(66), pid), want: cat([]byte("_EPSON\x00"), pidAnswer)},
		{name: "GSI67Model", send: cat(gsI(67), pid), want: cat([]byte("_TM-T88V\x00"), pidAnswer)},
		{name: "GSI68Serial", send: cat(gsI(68), pid), want: cat([]byte("_SIM0000001\x00"), pidAnswer)},
		{name: "GSI69FontChinese", send: cat(gsI(69), pid), want: cat([]byte("_CHINA GB18030\x00"), pidAnswer)},
		{name: "GSI69FontNone", opts: printersim.Options{Encoding: escpos.UTF8}, send: cat(gsI(69), pid), want: cat([]byte("_\x00"), pidAnswer)},
		{name: "GSI4Ignored", send: cat(gsI(4), gsI(0), gsI(70), pid), want: pidAnswer},
		{name: "GSIMakerModel", send: cat(gsI('B'), gsI('C')), want: []byte("_EPSON\x00_TM-T88V\x00")}, // as receiptio asks
		{name: "GSIAfterTicket", send: cat(ticket(t, "order_1_station_hot"), gsI(1)), want: []byte{0x20}},
		{name: "GSr1Paper", send: cat(gsR(1), pid), want: cat([]byte{0x00}, pidAnswer)},
		{name: "GSr49Paper", send: cat(gsR(49), pid), want: cat([]byte{0x00}, pidAnswer)},
		{name: "GSr2Drawer", send: cat(gsR(2), pid), want: cat([]byte{0x00}, pidAnswer)},
		{name: "GSr3Ignored", send: cat(gsR(3), gsR(52), pid), want: pidAnswer},
		{name: "GSrAfterTicket", send: cat(ticket(t, "order_2_station_hot"), gsR('1')), want: []byte{0x00}}, // as receiptio ends a receipt
		{name: "GSaEnabled", send: gsA(0xFF), want: asbReady},
		{name: "GSaOneItem", send: gsA(0x08), want: asbReady},
		{name: "GSaDisabled", send: cat(gsA(0), pid), want: pidAnswer},
		{name: "GSaAfterPrint", send: cat(gsA(0xFF), bareTicket("order_3_station_hot"), pid), want: cat(asbReady, asbReady, pidAnswer)},
		{name: "GSaOffByESC@", send: cat(gsA(0xFF), escInit, bareTicket("order_4_station_hot"), pid), want: cat(asbReady, pidAnswer)},
		{name: "GSaOffByEncodedTicket", send: cat(gsA(0xFF), ticket(t, "order_5_station_hot"), pid), want: cat(asbReady, pidAnswer)},
		{name: "ESC@ThenGSa", send: cat(escInit, gsA(0xFF)), want: asbReady}, // as receiptio enables it
		{name: "GSaOffline", opts: printersim.Options{Fault: printersim.FaultOffline}, send: gsA(0xFF), want: asbOffline},
		{name: "GSaPaperEnd", opts: printersim.Options{Fault: printersim.FaultPaperEnd}, send: gsA(0xFF), want: asbPaperEnd},
		{name: "GSaCoverOpen", opts: printersim.Options{Fault: printersim.FaultCoverOpen}, send: gsA(0xFF), want: asbCoverOpen},
		{name: "GSaSlow", opts: printersim.Options{Fault: printersim.FaultSlow, SlowDelay: time.Hour}, send: gsA(0xFF), want: asbReady},
		{name: "DLEENQ", send: cat([]byte{escpos.DLE, 0x05, 1}, []byte{escpos.DLE, 0x05, 2}, pid), want: pidAnswer},
		{name: "HeldUnderPaperEnd", opts: printersim.Options{Fault: printersim.FaultPaperEnd}, send: cat(gsI(1), gsR(1), pid, eot1), want: []byte{0x1A}},
		{name: "LostAckGSr", opts: printersim.Options{Fault: printersim.FaultLostAck}, send: cat(gsR(1), pid, gsI(1)), want: []byte{0x20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, addr := printertest.StartTCP(t, tt.opts)
			c := dial(t, addr)
			c.send(tt.send)
			if got := c.readN(len(tt.want)); !bytes.Equal(got, tt.want) {
				t.Fatalf("sent % x:\ngot  % x\nwant % x", tt.send, got, tt.want)
			}
			c.nothingMore()
		})
	}
}

func TestPrinter_AutomaticStatusBack(t *testing.T) {
	t.Parallel()

	t.Run("OnChange", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{})
		c := dial(t, addr)
		c.send(gsA(0xFF))
		c.readN(4)
		for _, step := range []struct {
			fault printersim.Fault
			want  []byte // nil: the status did not change
		}{
			{printersim.FaultCoverOpen, asbCoverOpen},
			{printersim.FaultPaperEnd, asbPaperEnd},
			{printersim.FaultOffline, asbOffline},
			{printersim.FaultSlow, asbReady},
			{printersim.FaultLostAck, nil},
			{printersim.FaultDrop, nil},
			{printersim.FaultNone, nil},
			{printersim.FaultNone, nil},
		} {
			p.SetFault(step.fault)
			if step.want == nil {
				c.nothingMore()
				continue
			}
			if got := c.readN(4); !bytes.Equal(got, step.want) {
				t.Fatalf("%s: got % x, want % x", step.fault, got, step.want)
			}
		}
	})

	t.Run("EnabledItemsOnly", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{})
		c := dial(t, addr)
		c.send(gsA(0x08)) // roll paper sensors only
		c.readN(4)
		p.SetFault(printersim.FaultCoverOpen)
		c.nothingMore()
		p.SetFault(printersim.FaultPaperEnd)
		if got := c.readN(4); !bytes.Equal(got, asbPaperEnd) {
			t.Fatalf("got % x, want % x", got, asbPaperEnd)
		}
	})

	t.Run("OnlyWhereEnabled", func(t *testing.T) {
		t.Parallel()
		p, addr := printertest.StartTCP(t, printersim.Options{})
		on, off := dial(t, addr), dial(t, addr)
		on.send(gsA(0xFF))
		on.readN(4)
		off.nothingMore() // connected and served
		p.SetFault(printersim.FaultCoverOpen)
		if got := on.readN(4); !bytes.Equal(got, asbCoverOpen) {
			t.Fatalf("got % x, want % x", got, asbCoverOpen)
		}
		off.nothingMore()
	})

	t.Run("PrintAfterHold", func(t *testing.T) {
		t.Parallel()
		// A ticket kept under cover_open: the status when the cover
		// closes, then the status after the print, then its confirmation.
		p, addr := printertest.StartTCP(t, printersim.Options{Fault: printersim.FaultCoverOpen})
		c := dial(t, addr)
		c.send(cat(gsA(0xFF), bareTicket("order_1_station_hot"), gsR(1)))
		if got := c.readN(4); !bytes.Equal(got, asbCoverOpen) {
			t.Fatalf("got % x, want % x", got, asbCoverOpen)
		}
		c.nothingMore() // all received
		p.SetFault(printersim.FaultNone)
		if got, want := c.readN(9), cat(asbReady, asbReady, []byte{0x00}); !bytes.Equal(got, want) {
			t.Fatalf("got % x, want % x", got, want)
		}
		if got := p.Printed(); len(got) != 1 {
			t.Fatalf("got %d tickets, want 1", len(got))
		}
	})
}

// TestPrinter_StatusAgrees checks that DLE EOT and automatic status back
// tell the same story in every fault.
func TestPrinter_StatusAgrees(t *testing.T) {
	t.Parallel()
	for _, f := range printersim.Faults {
		if f == printersim.FaultDown {
			continue
		}
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			_, addr := printertest.StartTCP(t, printersim.Options{Fault: f, SlowDelay: time.Hour})
			c := dial(t, addr)
			eot := c.status()
			c.send(gsA(0xFF))
			var b [4]byte
			copy(b[:], c.readN(4))
			if got := parseASB(t, b); got != eot || got != f.Status() {
				t.Fatalf("got ASB % x = %+v, DLE EOT %+v; want both %+v", b, got, eot, f.Status())
			}
		})
	}
}

// parseASB reads automatic status back the way a client does.
func parseASB(t *testing.T, b [4]byte) storeprint.PrinterStatus {
	t.Helper()
	if b[0]&0x93 != 0x10 || b[1]&0x90 != 0 || b[2]&0x90 != 0 || b[3]&0x90 != 0 {
		t.Fatalf("% x is not automatic status back", b)
	}
	st := storeprint.PrinterStatus{PaperNearEnd: b[2]&0x03 != 0}
	switch {
	case b[0]&0x20 != 0:
		st.State = storeprint.PrinterCoverOpen
	case b[2]&0x0C != 0:
		st.State = storeprint.PrinterPaperEnd
	case b[0]&0x08 != 0 || b[1]&0x6C != 0:
		st.State = storeprint.PrinterOffline
	default:
		st.State = storeprint.PrinterReady
	}
	return st
}

func TestTicket_PaperText(t *testing.T) {
	t.Parallel()
	cst := time.FixedZone("CST", 8*3600)
	for _, tc := range []struct {
		name    string
		printer string
		ticket  printersim.Ticket
	}{
		{"ticket", "hot-1", printersim.Ticket{TaskNo: "order_1001_station_hot", At: time.Date(2026, 3, 1, 4, 34, 56, 0, time.UTC),
			Text: "store-001\nhot\nOrder: 1001\nTable: A3\n" + "------------------------------------------------" + "\n2 x 宫保鸡丁\n  - 不要花生   \n\norder_1001_station_hot"}},
		{"empty", "", printersim.Ticket{At: time.Date(2026, 3, 1, 4, 34, 56, 0, time.UTC)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.ticket.PaperText(tc.printer, cst)
			path := filepath.Join("../../testdata/printersim/paper", tc.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (go test -update writes it): %v", err)
			}
			if got != string(want) {
				t.Fatalf("differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

func TestPrinter_Paper(t *testing.T) {
	t.Parallel()
	out, paper := &testlog.Buffer{}, &testlog.Buffer{}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p, addr := printertest.StartTCP(t, printersim.Options{Name: "pass-1", Out: out, Paper: paper, Now: func() time.Time { return at }})
	c := dial(t, addr)
	c.send(cat(ticket(t, "order_1_station_hot"), ticket(t, "order_2_station_hot"), escpos.ProcessIDRequest("0002")))
	c.confirmation()
	printed := p.Printed()
	want := printed[0].PaperText("pass-1", time.Local) + printed[1].PaperText("pass-1", time.Local)
	if got := paper.String(); got != want {
		t.Fatalf("got paper\n%s\nwant\n%s", got, want)
	}
}

// FuzzPrinter_Answers feeds any bytes to the simulator and checks that
// whatever it answers is a sequence of well-formed ESC/POS answers, each
// telling itself apart from the others as Epson's reference says: a
// real-time status byte (0xx1xx10), 4 bytes of automatic status back
// (0xx1xx00 then three bytes 0xx0xxxx), a one-byte ID or GS r status
// (0xx0xxxx), a 5F ... 00 block, or a process ID answer 37 22 dddd 00.
func FuzzPrinter_Answers(f *testing.F) {
	f.Add(cat([]byte{escpos.DLE, 0x04, 1}, escInit, gsA(0xFF), gsI('B'), gsI('C')))
	f.Add(cat(gsA(0xFF), []byte("text\n"), []byte{escpos.GS, 'V', 'B', 0}, gsR('1'), gsI(1), gsI(2), gsI(3), gsI(65), gsI(68), gsI(69)))
	f.Add(cat(escpos.ProcessIDRequest("1234"), []byte{escpos.DLE, 0x05, 2}, escpos.StatusQuery()))
	f.Add([]byte{escpos.GS, '(', 'H', 6, 0, 0x30, 0x30, '9', '9', '9', '9', escpos.GS, 'a'})
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := printersim.New(printersim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := &recordStream{r: bytes.NewReader(in)}
		p.ServeConn(s)                    // returns at the end of in
		if err := p.Close(); err != nil { // waits for the print loop to answer what it was sent
			t.Fatal(err)
		}
		if err := checkAnswers(s.written()); err != nil {
			t.Fatalf("sent % x: %v", in, err)
		}
	})
}

func checkAnswers(b []byte) error {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x37:
			if i+7 > len(b) || b[i+1] != 0x22 || !escpos.ValidProcessID(string(b[i+2:i+6])) || b[i+6] != 0 {
				return fmt.Errorf("byte %d: a broken process ID answer in % x", i, b)
			}
			i += 7
		case c == 0x5F:
			end := bytes.IndexByte(b[i:], 0)
			if end < 0 {
				return fmt.Errorf("byte %d: a block without its NUL in % x", i, b)
			}
			i += end + 1
		case c&0x93 == 0x12:
			i++
		case c&0x93 == 0x10:
			if i+4 > len(b) || b[i+1]&0x90 != 0 || b[i+2]&0x90 != 0 || b[i+3]&0x90 != 0 {
				return fmt.Errorf("byte %d: broken automatic status back in % x", i, b)
			}
			i += 4
		case c&0x90 == 0:
			i++
		default:
			return fmt.Errorf("byte %d: %02x is no answer in % x", i, c, b)
		}
	}
	return nil
}

// recordStream is a connection that reads r and records every answer,
// also those written after the printer closed it.
type recordStream struct {
	r  io.Reader
	mu sync.Mutex
	w  bytes.Buffer
}

func (s *recordStream) Read(p []byte) (int, error) { return s.r.Read(p) }

func (s *recordStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *recordStream) Close() error { return nil }

func (s *recordStream) written() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.w.Bytes())
}
