package escpos

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// EventKind says what a decoded Event is.
type EventKind uint8

const (
	// EventLine is a line of text the printer printed (LF, or a command
	// that prints the buffer such as ESC d or a cut). Text holds it.
	EventLine EventKind = iota + 1
	// EventCut is a paper cut: GS V, ESC i or ESC m.
	EventCut
	// EventStatusRequest is a real-time status request DLE EOT n; N
	// holds n.
	EventStatusRequest
	// EventProcessID is a process ID request (GS ( H, fn = 48); ID holds
	// its four digits.
	EventProcessID
	// EventCommand is any other command.
	EventCommand
)

func (k EventKind) String() string {
	switch k {
	case EventLine:
		return "line"
	case EventCut:
		return "cut"
	case EventStatusRequest:
		return "status_request"
	case EventProcessID:
		return "process_id"
	case EventCommand:
		return "command"
	}
	return "event(" + strconv.Itoa(int(k)) + ")"
}

// Event is one thing a Decoder found in a byte stream.
type Event struct {
	Kind EventKind
	Text string // EventLine: the line, decoded to UTF-8, without control characters
	N    byte   // EventStatusRequest: n of DLE EOT n
	ID   string // EventProcessID: the four digits
	Cmd  []byte // EventCut, EventStatusRequest, EventProcessID, EventCommand: the command's bytes, without bulk data (images, barcodes)
}

// maxLine bounds a line's undecoded bytes: a stream without LF is cut into
// lines of this size rather than buffered without end.
const maxLine = 4096

// Decoder turns an ESC/POS byte stream back into text lines, cuts and
// requests, the way a printer reads it. It is streaming: a command or a
// character split across calls to Decode is completed by the next call.
//
// It knows the length of every command Encode emits and of the common ones
// besides (ESC @, ESC a, ESC E, ESC !, ESC d, ESC t, ESC 2, ESC 3, GS !,
// GS V, GS ( x with its data, DLE EOT, FS &, FS ., images and barcodes). An
// unknown ESC, GS, FS or DLE command is taken to be two bytes long.
//
// Text is decoded in the printer's encoding: FS & selects Chinese
// (GB18030) mode, FS . leaves it for the single-byte code page chosen by
// ESC t (cp437 by default), and ESC @ returns to the encoding the Decoder
// was made with.
type Decoder struct {
	def      encoding.Encoding // power-on encoding; nil: UTF-8
	cur      encoding.Encoding
	codePage encoding.Encoding

	cmd     []byte // a command being read
	skip    int    // bytes of bulk data left to skip
	skipNUL bool   // skipping bulk data up to a NUL

	raw  []byte          // undecoded bytes of the current line, in cur
	text strings.Builder // decoded part of the current line

	events []Event
}

// NewDecoder returns a decoder for a printer whose power-on encoding is
// encoding (gb18030, cp437 or utf-8).
func NewDecoder(encoding string) (*Decoder, error) {
	cs, err := charset(encoding)
	if err != nil {
		return nil, err
	}
	return &Decoder{def: cs, cur: cs, codePage: charmap.CodePage437}, nil
}

// Decode reads p and returns the events it completed, in stream order.
func (d *Decoder) Decode(p []byte) []Event {
	d.events = nil
	for _, b := range p {
		d.byte(b)
	}
	return d.events
}

// Flush returns the text left in the line buffer as a line, if any: what a
// printer prints when data ends without a line feed.
func (d *Decoder) Flush() []Event {
	d.events = nil
	d.printLine(false)
	return d.events
}

func (d *Decoder) byte(b byte) {
	switch {
	case d.skip > 0:
		d.skip--
		return
	case d.skipNUL:
		d.skipNUL = b != 0
		return
	case len(d.cmd) > 0:
		d.cmd = append(d.cmd, b)
		if n := commandLen(d.cmd); n > 0 && len(d.cmd) >= n {
			d.command()
			d.cmd = d.cmd[:0]
		}
		return
	}
	switch b {
	case DLE, ESC, FS, GS:
		d.cmd = append(d.cmd, b)
	case LF:
		d.printLine(true)
	case '\t':
		d.raw = append(d.raw, ' ')
	default:
		if b < 0x20 || b == 0x7f {
			return // CR, FF, CAN and other controls print nothing
		}
		d.raw = append(d.raw, b)
		if len(d.raw) >= maxLine {
			d.printLine(true)
		}
	}
}

// commandLen returns the length of the command in c (without bulk data),
// or 0 when c is too short to tell.
func commandLen(c []byte) int {
	if len(c) < 2 {
		return 0
	}
	switch c[0] {
	case DLE:
		switch c[1] {
		case 0x04, 0x05: // DLE EOT n, DLE ENQ n
			return 3
		case 0x14: // DLE DC4 fn ...
			if len(c) < 3 {
				return 0
			}
			if c[2] == 8 {
				return 10
			}
			return 5
		}
	case ESC:
		switch c[1] {
		case '!', '-', '3', 'a', 'E', 'G', 'J', 'M', 'R', 't', 'V', '{', 'd', 'e',
			'U', ' ', '%', '=', 'r', 'T', '?', 'u', 'v':
			return 3
		case '$', '\\', 'c':
			return 4
		case 'p', '*', '(': // ESC * and ESC ( x carry bulk data after these
			return 5
		case 'W':
			return 10
		}
	case FS:
		switch c[1] {
		case '!', '-', 'W', 'C':
			return 3
		case 'S', 'p':
			return 4
		case '(':
			return 5
		}
	case GS:
		switch c[1] {
		case '!', 'B', 'H', 'h', 'w', 'f', 'a', 'r', 'I', 'b', 'T', '/', 'E':
			return 3
		case 'L', 'W', '$', '\\', 'P', '*':
			return 4
		case 'V': // GS V m, or GS V m n for m >= 65
			if len(c) < 3 {
				return 0
			}
			if c[2] >= 65 {
				return 4
			}
			return 3
		case 'k': // GS k m d... NUL, or GS k m n d1..dn
			if len(c) < 3 {
				return 0
			}
			if c[2] <= 6 {
				return 3
			}
			return 4
		case '(':
			if len(c) < 5 {
				return 0
			}
			// Keep a short GS ( H whole: it may be a process ID request.
			if n := int(c[3]) | int(c[4])<<8; c[2] == 'H' && n <= 16 {
				return 5 + n
			}
			return 5
		case 'v':
			return 8
		case '8':
			return 7
		}
	}
	return 2
}

// command acts on the complete command in d.cmd.
func (d *Decoder) command() {
	c := d.cmd
	ev := Event{Kind: EventCommand}
	switch c[0] {
	case DLE:
		if c[1] == 0x04 {
			ev = Event{Kind: EventStatusRequest, N: c[2]}
		}
	case ESC:
		switch c[1] {
		case '@':
			d.raw = d.raw[:0]
			d.text.Reset()
			d.cur, d.codePage = d.def, charmap.CodePage437
		case 'd', 'J', 'e':
			d.printLine(false)
		case 'i', 'm':
			d.printLine(false)
			ev.Kind = EventCut
		case 't':
			d.codePage = codePage(c[2])
			if d.cur != nil && d.cur != simplifiedchinese.GB18030 {
				d.setMode(d.codePage) // in single-byte mode the new table applies at once
			}
		case '*':
			n := int(c[3]) | int(c[4])<<8
			if c[2] >= 32 {
				n *= 3
			}
			d.skip = n
		case '(':
			d.skip = int(c[3]) | int(c[4])<<8
		case 'D':
			d.skipNUL = true
		}
	case FS:
		switch c[1] {
		case '&':
			d.setMode(simplifiedchinese.GB18030)
		case '.':
			d.setMode(d.codePage)
		case '(':
			d.skip = int(c[3]) | int(c[4])<<8
		}
	case GS:
		switch c[1] {
		case 'V':
			d.printLine(false)
			ev.Kind = EventCut
		case 'k':
			if c[2] <= 6 {
				d.skipNUL = true
			} else {
				d.skip = int(c[3])
			}
		case '(':
			n := int(c[3]) | int(c[4])<<8
			switch {
			case len(c) == 5:
				d.skip = n
			case c[2] == 'H' && n == 6 && c[5] == 0x30 && c[6] == 0x30 && ValidProcessID(string(c[7:])):
				ev = Event{Kind: EventProcessID, ID: string(c[7:])}
			}
		case '*':
			d.skip = int(c[2]) * int(c[3]) * 8
		case 'v':
			d.skip = (int(c[4]) | int(c[5])<<8) * (int(c[6]) | int(c[7])<<8)
		case '8':
			if c[2] == 'L' {
				d.skip = int(c[3]) | int(c[4])<<8 | int(c[5])<<16 | int(c[6])<<24
			}
		}
	}
	ev.Cmd = append([]byte(nil), c...)
	d.events = append(d.events, ev)
}

// codePage maps ESC t n to a code page; unknown tables read as cp437.
func codePage(n byte) encoding.Encoding {
	switch n {
	case 2:
		return charmap.CodePage850
	case 3:
		return charmap.CodePage860
	case 4:
		return charmap.CodePage863
	case 5:
		return charmap.CodePage865
	case 16:
		return charmap.Windows1252
	case 17:
		return charmap.CodePage866
	case 19:
		return charmap.CodePage858
	}
	return charmap.CodePage437
}

// setMode switches the text encoding, decoding what was read so far in the
// old one.
func (d *Decoder) setMode(e encoding.Encoding) {
	d.decodeRaw()
	d.cur = e
}

func (d *Decoder) decodeRaw() {
	if len(d.raw) == 0 {
		return
	}
	var s string
	if d.cur == nil {
		s = strings.ToValidUTF8(string(d.raw), string(utf8.RuneError))
	} else if b, err := d.cur.NewDecoder().Bytes(d.raw); err == nil {
		s = string(b)
	} else {
		s = strings.Repeat(string(utf8.RuneError), len(d.raw))
	}
	d.raw = d.raw[:0]
	d.text.WriteString(s)
}

// printLine emits the line buffer as a line. An empty buffer makes an
// empty line only for a line feed (always true).
func (d *Decoder) printLine(always bool) {
	d.decodeRaw()
	if d.text.Len() == 0 && !always {
		return
	}
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, d.text.String())
	d.text.Reset()
	d.events = append(d.events, Event{Kind: EventLine, Text: s})
}
