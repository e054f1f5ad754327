// Package starprnt speaks Star PRNT mode, the command set of Star
// Micronics receipt printers (mC-Print, TSP100IV), as far as a kitchen
// ticket needs it, from Star's StarPRNT command specifications: Encode
// renders a ticket, Decoder reads a byte stream back into text lines and
// cuts for the printer simulator and for tests.
//
// Commands used: ESC @ (initialize), ESC GS a n (alignment), ESC i n1 n2
// (character expansion), ESC E / ESC F (emphasis on, off), LF, and
// ESC d 3 (feed to the cutting position and partial cut), which follows
// the task_no line directly. Text goes in the printer's configured
// encoding (gb18030 for a printer set to Simplified Chinese, cp437, or
// utf-8), which is set on the printer itself; control characters in a
// ticket never reach it.
package starprnt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/storeprint/storeprint"
)

// Command bytes.
const (
	ESC = 0x1B
	GS  = 0x1D
	LF  = 0x0A
	CR  = 0x0D
)

// TimeLayout is how a ticket shows its acceptance time (as escpos does).
const TimeLayout = "2006-01-02 15:04:05"

var (
	cmdInit        = []byte{ESC, '@'}
	cmdAlignLeft   = []byte{ESC, GS, 'a', 0}
	cmdAlignCenter = []byte{ESC, GS, 'a', 1}
	cmdSizeNormal  = []byte{ESC, 'i', 0, 0}
	cmdSizeDouble  = []byte{ESC, 'i', 1, 1} // double height and width
	cmdBoldOn      = []byte{ESC, 'E'}
	cmdBoldOff     = []byte{ESC, 'F'}
	cmdCut         = []byte{ESC, 'd', 3} // feed to the cutting position, partial cut
)

// charset maps an encoding name to its x/text encoding; nil is UTF-8.
func charset(name string) (encoding.Encoding, error) {
	switch strings.ToLower(name) {
	case "gb18030", "":
		return simplifiedchinese.GB18030, nil
	case "cp437":
		return charmap.CodePage437, nil
	case "utf-8", "utf8":
		return nil, nil
	}
	return nil, fmt.Errorf("starprnt: unknown encoding %q (one of gb18030, cp437, utf-8)", name)
}

// Encode renders t for a Star printer set to encoding, laid out as
// escpos.Encode lays out a ticket: the store, the station in large type,
// order, table and time, REPRINT, BACKUP FROM and COPY OF when they apply,
// a rule of width columns, each item in large type with its note, the
// order's note, a rule, the task_no alone as the last line, and the cut.
// The printer wraps long lines itself. The acceptance time is shown in
// loc (nil: local time).
func Encode(t storeprint.Ticket, encodingName string, width int, loc *time.Location) ([]byte, error) {
	cs, err := charset(encodingName)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(t.TaskNo) == "" {
		return nil, errors.New("starprnt: ticket has no task_no")
	}
	if width == 0 {
		width = storeprint.DefaultWidth
	}
	if loc == nil {
		loc = time.Local
	}
	w := &writer{}
	if cs != nil {
		w.enc = cs.NewEncoder()
	}
	w.cmd(cmdInit)
	w.cmd(cmdAlignCenter)
	if t.StoreID != "" {
		w.line(t.StoreID)
	}
	w.cmd(cmdSizeDouble)
	w.line(t.Station)
	w.cmd(cmdSizeNormal)
	w.cmd(cmdAlignLeft)
	if t.OrderID != "" {
		w.line("Order: " + t.OrderID)
	}
	if t.Table != "" {
		w.line("Table: " + t.Table)
	}
	if !t.AcceptedAt.IsZero() {
		w.line("Time: " + t.AcceptedAt.In(loc).Format(TimeLayout))
	}
	if t.Reprint {
		w.cmd(cmdSizeDouble)
		w.cmd(cmdBoldOn)
		w.line("REPRINT")
		w.cmd(cmdBoldOff)
		w.cmd(cmdSizeNormal)
	}
	if t.BackupFrom != "" || t.CopyOf != "" {
		w.cmd(cmdBoldOn)
		if t.BackupFrom != "" {
			w.line("BACKUP FROM " + t.BackupFrom)
		}
		if t.CopyOf != "" {
			w.line("COPY OF " + t.CopyOf)
		}
		w.cmd(cmdBoldOff)
	}
	rule := strings.Repeat("-", width)
	w.line(rule)
	for _, it := range t.Items {
		w.cmd(cmdSizeDouble)
		w.line(strconv.Itoa(it.Qty) + " x " + it.Name)
		w.cmd(cmdSizeNormal)
		if it.Note != "" {
			w.line("  - " + it.Note)
		}
	}
	if t.Note != "" {
		w.line("Note: " + t.Note)
	}
	w.line(rule)
	w.line(strings.TrimSpace(t.TaskNo))
	w.cmd(cmdCut)
	return w.buf, nil
}

type writer struct {
	enc *encoding.Encoder // nil: UTF-8
	buf []byte
}

func (w *writer) cmd(c []byte) { w.buf = append(w.buf, c...) }

// line writes s as one line: each character in the encoding, '?' for one
// it cannot express, a space for a control character.
func (w *writer) line(s string) {
	var tmp [utf8.UTFMax]byte
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			w.buf = append(w.buf, ' ')
			continue
		}
		n := utf8.EncodeRune(tmp[:], r)
		if w.enc == nil {
			w.buf = append(w.buf, tmp[:n]...)
			continue
		}
		b, err := w.enc.Bytes(tmp[:n])
		if err != nil || len(b) == 0 || (len(b) == 1 && b[0] < 0x20) {
			w.buf = append(w.buf, '?')
			continue
		}
		w.buf = append(w.buf, b...)
	}
	w.buf = append(w.buf, LF)
}

// Event is one thing a Decoder read.
type Event struct {
	Kind EventKind
	Text string // EventLine: the line's text, decoded
}

type EventKind int

const (
	EventLine EventKind = iota + 1 // a line feed ended a line of text
	EventCut                       // ESC d n: a cut
)

// Decoder turns a Star PRNT byte stream, in any pieces, into text lines
// and cuts. Commands it does not read are skipped by their length where
// it knows it, else as ESC and one byte.
type Decoder struct {
	dec     *encoding.Decoder // nil: UTF-8
	pending []byte            // an incomplete command from the previous piece
	text    []byte            // the current line's bytes
}

// NewDecoder returns a decoder for a printer set to encoding.
func NewDecoder(encodingName string) (*Decoder, error) {
	cs, err := charset(encodingName)
	if err != nil {
		return nil, err
	}
	d := &Decoder{}
	if cs != nil {
		d.dec = cs.NewDecoder()
	}
	return d, nil
}

// commandLen returns the length of the command starting at b (b[0] is
// ESC), or 0 when more bytes are needed to tell.
func commandLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '@', 'E', 'F', '4', '5':
		return 2
	case 'd', 'a', 'W', 'h', 'R', '/', ' ', 'J', 'I':
		return 3
	case 'i':
		return 4
	case GS:
		if len(b) < 3 {
			return 0
		}
		switch b[2] {
		case 'a', 't':
			return 4
		}
		return 3
	}
	return 2
}

// Decode reads the next piece of the stream and returns what it
// completed.
func (d *Decoder) Decode(b []byte) []Event {
	var out []Event
	data := append(d.pending, b...)
	d.pending = nil
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == ESC:
			n := commandLen(data[i:])
			if n == 0 || i+n > len(data) {
				d.pending = append([]byte(nil), data[i:]...)
				return out
			}
			if data[i+1] == 'd' {
				if len(d.text) > 0 {
					out = append(out, Event{Kind: EventLine, Text: d.flush()})
				}
				out = append(out, Event{Kind: EventCut})
			}
			i += n
		case c == LF:
			out = append(out, Event{Kind: EventLine, Text: d.flush()})
			i++
		case c == CR || c < 0x20:
			i++
		default:
			d.text = append(d.text, c)
			i++
		}
	}
	return out
}

func (d *Decoder) flush() string {
	b := d.text
	d.text = nil
	if d.dec == nil {
		return strings.ToValidUTF8(string(b), "?")
	}
	s, err := d.dec.Bytes(b)
	if err != nil {
		return strings.ToValidUTF8(string(b), "?")
	}
	return string(s)
}
