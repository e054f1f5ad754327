package escpos

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/width"
)

// Encodings a printer can be configured with (gateway.Encodings).
const (
	GB18030 = "gb18030"
	CP437   = "cp437"
	UTF8    = "utf-8"
)

// charset maps an encoding name to its x/text encoding; nil means UTF-8,
// passed through.
func charset(name string) (encoding.Encoding, error) {
	switch strings.ToLower(name) {
	case GB18030, "":
		return simplifiedchinese.GB18030, nil
	case CP437:
		return charmap.CodePage437, nil
	case UTF8, "utf8":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown encoding %q (one of %s, %s, %s)", name, GB18030, CP437, UTF8)
}

// glyph is one character ready for the printer: its bytes in the printer's
// encoding and the columns it takes in normal type.
type glyph struct {
	b    []byte
	cols int
}

func (g glyph) space() bool { return len(g.b) == 1 && g.b[0] == ' ' }

// textEncoder turns ticket text into glyphs for one encoding.
type textEncoder struct {
	enc     *encoding.Encoder // nil: UTF-8
	chinese bool              // the printer is in Chinese (double-byte) mode
}

func newTextEncoder(name string) (*textEncoder, error) {
	cs, err := charset(name)
	if err != nil {
		return nil, err
	}
	e := &textEncoder{chinese: cs == simplifiedchinese.GB18030}
	if cs != nil {
		e.enc = cs.NewEncoder()
	}
	return e, nil
}

var question = glyph{b: []byte{'?'}, cols: 1}

// glyphs encodes s one character at a time. A control character becomes a
// space (tab, newline) or '?'; a character the encoding cannot express, or
// one that would encode to a control byte (cp437 maps some symbols to
// 0x01-0x1F), becomes '?'. Encoding never fails, so no ticket is lost to a
// character.
func (e *textEncoder) glyphs(s string) []glyph {
	out := make([]glyph, 0, len(s))
	var buf [utf8.UTFMax]byte
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			out = append(out, glyph{b: []byte{' '}, cols: 1})
			continue
		case r == utf8.RuneError || unicode.IsControl(r):
			out = append(out, question)
			continue
		}
		src := buf[:utf8.EncodeRune(buf[:], r)]
		b := append([]byte(nil), src...)
		if e.enc != nil {
			var err error
			if b, err = e.enc.Bytes(src); err != nil || len(b) == 0 {
				out = append(out, question)
				continue
			}
		}
		if hasControlByte(b) {
			out = append(out, question)
			continue
		}
		out = append(out, glyph{b: b, cols: e.columns(r, b)})
	}
	return out
}

// columns is how many columns r takes in normal type. East Asian wide and
// fullwidth characters take two; in Chinese mode the printer prints every
// double-byte character from its full-width font, so those take two as well.
func (e *textEncoder) columns(r rune, b []byte) int {
	if e.chinese && len(b) > 1 {
		return 2
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

func hasControlByte(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

func lineColumns(gs []glyph) int {
	n := 0
	for _, g := range gs {
		n += g.cols
	}
	return n
}

// wrap breaks gs into lines of at most cols columns. Lines after the first
// start with indent spaces. It breaks after a space or next to a wide
// character where it can, and inside a word only when a word alone is too
// long. Spaces at the edges of a break are dropped.
func wrap(gs []glyph, cols, indent int) [][]glyph {
	if indent*2 > cols {
		indent = 0
	}
	var lines [][]glyph
	var line []glyph
	start := 0 // glyphs of indentation at the start of line
	used := 0
	newLine := func() {
		lines = append(lines, trimRight(line))
		line = make([]glyph, 0, cols)
		for i := 0; i < indent; i++ {
			line = append(line, glyph{b: []byte{' '}, cols: 1})
		}
		start, used = indent, indent
	}
	for _, g := range gs {
		if g.space() && len(line) == start && len(lines) > 0 {
			continue // no leading space on a continuation line
		}
		if used+g.cols > cols && len(line) > start {
			if g.space() {
				newLine()
				continue
			}
			// Carry the word being written to the next line if there
			// is a break before it and it fits there; a word too long
			// for any line is broken where the line is full.
			bp := breakPoint(line, start, g)
			if indent+lineColumns(line[bp:])+g.cols > cols {
				bp = len(line)
			}
			carry := append([]glyph(nil), line[bp:]...)
			line = line[:bp]
			newLine()
			line = append(line, carry...)
			used += lineColumns(carry)
		}
		line = append(line, g)
		used += g.cols
	}
	if len(trimRight(line)) > start || len(lines) == 0 {
		lines = append(lines, trimRight(line))
	}
	return lines
}

// breakPoint returns where line may be split before next is added: after
// the last space, or next to a wide character. It returns len(line) (break
// before next) when next is wide or there is no better place.
func breakPoint(line []glyph, start int, next glyph) int {
	if next.cols > 1 || line[len(line)-1].cols > 1 {
		return len(line)
	}
	for i := len(line) - 1; i > start; i-- {
		if line[i-1].space() || line[i-1].cols > 1 {
			return i
		}
	}
	return len(line)
}

func trimRight(gs []glyph) []glyph {
	for len(gs) > 0 && gs[len(gs)-1].space() {
		gs = gs[:len(gs)-1]
	}
	return gs
}
