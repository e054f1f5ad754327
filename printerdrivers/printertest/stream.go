package printertest

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// Serve is a scripted device at the end of a driver's byte stream, for
// the behaviours the simulator has no fault for: it reads what the driver
// sends from r and answers on w, until it returns.
type Serve func(w io.Writer, r *bufio.Reader)

// testStream checks how a driver on a byte stream (Harness.Script) reads
// a TM printer's answers: the status query's, the confirmation among
// other bytes, and what is not an answer at all; and the ticket it sends.
func testStream(t *testing.T, h Harness) {
	streamAnswers(t, h)
	streamTicket(t, h)
}

// tm is cfg for a TM printer, which confirms with its process ID
// (GS ( H).
func tm(cfg gateway.PrinterConfig) gateway.PrinterConfig {
	cfg.Options = printerdrivers.Stream{Confirm: string(storeprint.ConfirmProcessID)}
	return cfg
}

// streamAnswers: the answers of scripted devices.
func streamAnswers(t *testing.T, h Harness) {
	t.Run("IgnoresOtherAnswers", func(t *testing.T) {
		t.Parallel()
		p := h.Script(t, tm(Config(confirmTimeout)), func(w io.Writer, r *bufio.Reader) {
			if ReadStatusQuery(r) != nil {
				return
			}
			w.Write([]byte{0x12, 0x12, 0x12})
			id, err := readUntilProcessID(r)
			if err != nil {
				return
			}
			// Noise, an automatic status block, an answer to an older
			// request, then ours.
			w.Write([]byte("\x12\x14\x00\x00\x0f\x37\x22"))
			w.Write(escpos.ProcessIDAnswer("9999"))
			w.Write(escpos.ProcessIDAnswer(id))
			io.Copy(io.Discard, r)
		})
		r := &recorder{}
		if err := p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0042")); err != nil {
			t.Fatalf("got %v, want the matching answer to confirm", err)
		}
		r.check(t, "prepare,submitted")
	})
	t.Run("ErrNoStatusAnswer", func(t *testing.T) {
		t.Parallel()
		cfg := tm(Config(confirmTimeout))
		cfg.ConnectTimeout.Duration = shortTimeout
		p := h.Script(t, cfg, func(w io.Writer, r *bufio.Reader) { io.Copy(io.Discard, r) }) // listens, never answers
		r := &recorder{}
		CheckOutcome(t, p.Print(WaitCtx(t), r.job(Ticket("order_1_station_hot"), "0001")), gateway.PrintNotSent, storeprint.PrinterUnknown)
		r.check(t, "") // nothing sent
	})
	t.Run("StatusErrNoAnswer", func(t *testing.T) {
		t.Parallel()
		cfg := tm(Config(confirmTimeout))
		cfg.ConnectTimeout.Duration = shortTimeout
		p := h.Script(t, cfg, func(w io.Writer, r *bufio.Reader) { io.Copy(io.Discard, r) })
		st, err := p.Status(WaitCtx(t))
		if err == nil || st.State != storeprint.PrinterUnknown {
			t.Fatalf("got %+v, %v; want unknown and an error", st, err)
		}
	})
	t.Run("ErrNotStatus", func(t *testing.T) {
		t.Parallel()
		p := h.Script(t, tm(Config(confirmTimeout)), func(w io.Writer, r *bufio.Reader) {
			if ReadStatusQuery(r) != nil {
				return
			}
			w.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			io.Copy(io.Discard, r)
		})
		err := p.Print(WaitCtx(t), (&recorder{}).job(Ticket("order_1_station_hot"), "0001"))
		CheckOutcome(t, err, gateway.PrintNotSent, storeprint.PrinterUnknown)
		if !errors.Is(err, escpos.ErrStatusAnswer) {
			t.Fatalf("got %v, want ErrStatusAnswer in it", err)
		}
	})
}

// streamTicket: the ticket the driver sends to a simulated TM printer.
func streamTicket(t *testing.T, h Harness) {
	open := func(t *testing.T, cfg gateway.PrinterConfig) (gateway.Printer, Sim) {
		return h.Open(t, tm(cfg), printersim.Options{Model: printersim.ModelTM})
	}
	t.Run("ErrProcessID", func(t *testing.T) {
		t.Parallel()
		p, sim := open(t, Config(confirmTimeout))
		CheckOutcome(t, p.Print(WaitCtx(t), (&recorder{}).job(Ticket("order_1_station_hot"), "42")), gateway.PrintNotSent, "")
		if got := sim.Printed(); len(got) != 0 {
			t.Fatalf("got %d tickets, want none", len(got))
		}
	})
	t.Run("ErrRender", func(t *testing.T) {
		t.Parallel()
		cfg := Config(confirmTimeout)
		cfg.Encoding = "ebcdic"
		p, _ := open(t, cfg)
		err := p.Print(WaitCtx(t), (&recorder{}).job(Ticket("order_1_station_hot"), "0001"))
		CheckOutcome(t, err, gateway.PrintNotSent, "")
		if !strings.Contains(err.Error(), "ebcdic") {
			t.Fatalf("got %v, want the encoding named", err)
		}
	})
	t.Run("ErrClosed", func(t *testing.T) {
		t.Parallel()
		p, _ := open(t, Config(confirmTimeout))
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		CheckOutcome(t, p.Print(WaitCtx(t), (&recorder{}).job(Ticket("order_1_station_hot"), "0001")), gateway.PrintNotSent, "")
	})
	// A ticket carries the store id; the driver's stands in for none.
	t.Run("StoreIDFallback", func(t *testing.T) {
		t.Parallel()
		p, sim := open(t, Config(confirmTimeout))
		tk := Ticket("order_1_station_hot")
		tk.StoreID = ""
		if err := p.Print(WaitCtx(t), (&recorder{}).job(tk, "0001")); err != nil {
			t.Fatal(err)
		}
		if got := sim.Printed()[0].Text; !strings.HasPrefix(got, "store-001\n") {
			t.Fatalf("got ticket %q, want it headed by the driver's store id (store-001)", got)
		}
	})
}

// ReadStatusQuery reads one DLE EOT 1, 2, 4 query, for a Serve that
// answers it; an error says the bytes are not one.
func ReadStatusQuery(r *bufio.Reader) error {
	q := make([]byte, len(escpos.StatusQuery()))
	if _, err := io.ReadFull(r, q); err != nil {
		return err
	}
	if string(q) != string(escpos.StatusQuery()) {
		return errors.New("not a status query")
	}
	return nil
}

// readUntilProcessID reads a ticket up to its process ID request and
// returns the request's id.
func readUntilProcessID(r *bufio.Reader) (string, error) {
	d, err := escpos.NewDecoder(escpos.GB18030)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		for _, ev := range d.Decode(buf[:n]) {
			if ev.Kind == escpos.EventProcessID {
				return ev.ID, nil
			}
		}
		if err != nil {
			return "", err
		}
	}
}
