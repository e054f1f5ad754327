// Package jsonenc writes JSON by hand for the values every order and
// every print encode, the same bytes as encoding/json without its
// reflection.
package jsonenc

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// OptString appends name and s when s is not empty (omitempty).
func OptString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return String(append(b, name...), s)
}

// OptInt appends name and n when n is not 0 (omitempty).
func OptInt(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), int64(n), 10)
}

// Time appends a time as encoding/json does (RFC 3339 with nanoseconds),
// and refuses the same times it refuses.
func Time(b []byte, t time.Time) ([]byte, error) {
	b, err := t.AppendText(append(b, '"'))
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

const hexDigits = "0123456789abcdef"

// String appends s as a JSON string, escaped as encoding/json
// escapes it: control characters, the HTML characters <, > and &, the
// line and paragraph separators U+2028 and U+2029, and invalid UTF-8 as
// U+FFFD.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
