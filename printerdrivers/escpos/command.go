package escpos

import (
	"errors"
	"fmt"
	"io"
)

// Command prefixes.
const (
	DLE = 0x10
	ESC = 0x1B
	FS  = 0x1C
	GS  = 0x1D
	LF  = 0x0A
)

// Status request arguments for DLE EOT n.
const (
	StatusPrinter = 1 // printer status: offline
	StatusOffline = 2 // offline cause: cover open, paper end, error
	StatusError   = 3 // error cause
	StatusPaper   = 4 // roll paper sensor: near end, end
)

// StatusRequest returns the real-time status request DLE EOT n.
func StatusRequest(n byte) []byte { return []byte{DLE, 0x04, n} }

// ValidProcessID reports whether id is four ASCII digits, the only form a
// printer's process ID request and answer carry.
func ValidProcessID(id string) bool {
	if len(id) != 4 {
		return false
	}
	for i := 0; i < 4; i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// ProcessIDRequest returns GS ( H with fn = 48: the printer answers with
// the same id (see ReadConfirmation) once everything sent before the
// request has been printed. id must be four ASCII digits; for anything else
// ProcessIDRequest returns nil.
func ProcessIDRequest(id string) []byte {
	if !ValidProcessID(id) {
		return nil
	}
	return []byte{GS, '(', 'H', 0x06, 0x00, 0x30, 0x30, id[0], id[1], id[2], id[3]}
}

// ProcessIDAnswer returns a printer's answer to a process ID request,
// 37 22 d1 d2 d3 d4 00, or nil if id is not four ASCII digits.
func ProcessIDAnswer(id string) []byte {
	if !ValidProcessID(id) {
		return nil
	}
	return []byte{0x37, 0x22, id[0], id[1], id[2], id[3], 0x00}
}

// ReadConfirmation reads from r until it has read a complete process ID
// answer (37 22 d1 d2 d3 d4 00) and returns its id. Every byte that is not
// part of such an answer (status answers, automatic status back, noise) is
// skipped. A read error ends the scan and is returned as is, so a deadline
// on the underlying connection bounds the wait.
func ReadConfirmation(r io.ByteReader) (string, error) {
	var buf [7]byte
	n := 0 // bytes of a candidate answer in buf
	for {
		b, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		buf[n] = b
		n++
		if !answerPrefix(buf[:n]) {
			// The candidate broke; the bytes after its first one may
			// start a new candidate (37 37 22 ...).
			n = resync(buf[:n])
			continue
		}
		if n == len(buf) {
			return string(buf[2:6]), nil
		}
	}
}

// answerPrefix reports whether b is a prefix of a process ID answer.
func answerPrefix(b []byte) bool {
	for i, c := range b {
		switch {
		case i == 0 && c != 0x37,
			i == 1 && c != 0x22,
			i >= 2 && i <= 5 && (c < '0' || c > '9'),
			i == 6 && c != 0x00:
			return false
		}
	}
	return true
}

// resync drops bytes from the front of b until what is left is a prefix of
// an answer, and returns its length.
func resync(b []byte) int {
	for i := 1; i < len(b); i++ {
		if answerPrefix(b[i:]) {
			return copy(b, b[i:])
		}
	}
	return 0
}

// ErrStatusAnswer is returned by ReadStatus for a byte that cannot be a
// status answer.
var ErrStatusAnswer = errors.New("not an ESC/POS status answer")

// StatusQuery returns DLE EOT 1, DLE EOT 2 and DLE EOT 4 in one slice: the
// three requests whose answers ReadStatus reads and ParseStatus parses.
func StatusQuery() []byte {
	return []byte{DLE, 0x04, StatusPrinter, DLE, 0x04, StatusOffline, DLE, 0x04, StatusPaper}
}

// ReadStatus reads the answers to StatusQuery (one byte each for DLE EOT 1,
// 2 and 4, in that order) from r. A byte that lacks the fixed bits of a
// status answer is an error wrapping ErrStatusAnswer.
func ReadStatus(r io.Reader) (n1, n2, n4 byte, err error) {
	var b [3]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, 0, err
	}
	for i, c := range b {
		if !validStatusByte(c) {
			return 0, 0, 0, fmt.Errorf("status byte %d is %#02x: %w", i+1, c, ErrStatusAnswer)
		}
	}
	return b[0], b[1], b[2], nil
}

// TransmitStatusRequest returns GS r 1, transmit status of the paper
// sensors. It is not a real-time command: the printer answers it (see
// ReadTransmitStatus) once it has processed everything sent before it, so
// after a ticket its answer follows the printed ticket. Most low-cost
// ESC/POS printers answer it and not GS ( H.
func TransmitStatusRequest() []byte { return []byte{GS, 'r', 1} }

// Bits of the answer to GS r 1.
const (
	TransmitNearEnd  = 0x03 // roll paper near-end sensor
	TransmitPaperEnd = 0x0C // roll paper end sensor
)

// ReadTransmitStatus reads from r until it has read an answer to GS r 1:
// one byte with bits 4 and 7 clear. Bytes that cannot be one are skipped:
// status answers (bit 4 set), whole process ID answers (37 22 d1..d4 00,
// whose 22 and 00 alone would pass), such as the late answer to an
// earlier request, and whole automatic status back blocks (4 bytes, the
// first with bit 4 set and bits 0, 1 and 7 clear; the other 3 would
// pass), from a printer whose memory switches turn it on, and printer ID
// blocks (5F <text> 00, the late answer to GS I). A read error ends the
// scan and is returned as is.
func ReadTransmitStatus(r io.ByteReader) (byte, error) {
	skip := 0 // bytes left of a process ID answer or status block being skipped
	after37 := false
	block := -1 // bytes of a printer ID block read so far; -1: none
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch {
		case block >= 0:
			if block++; b == 0x00 || block > maxIDBlock {
				block = -1
			}
			continue
		case skip > 0:
			skip--
			continue
		case after37 && b == 0x22:
			skip, after37 = 5, false // d1..d4 00
			continue
		case b == 0x5F:
			block, after37 = 0, false
			continue
		case b&0x93 == 0x10:
			skip, after37 = 3, false // the rest of an automatic status back block
			continue
		}
		after37 = b == 0x37
		if b&0x90 == 0 {
			return b, nil
		}
	}
}

// MakerRequest returns GS I 66: the printer's maker, answered (see
// ReadIDBlock) in turn with what it prints. Epson TM printers answer
// "EPSON".
func MakerRequest() []byte { return []byte{GS, 'I', 66} }

// maxIDBlock bounds the text of a printer ID block.
const maxIDBlock = 80

// ReadIDBlock reads from r until it has read a printer ID block, 5F
// <text> 00 (the answer to GS I n for n = 65..69), and returns its text.
// Bytes before the block are skipped; a block longer than 80 bytes is not
// one and the scan goes on after it. A read error ends the scan.
func ReadIDBlock(r io.ByteReader) (string, error) {
	var text []byte
	in := false
	for {
		b, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case !in:
			in = b == 0x5F
		case b == 0x00:
			return string(text), nil
		case len(text) == maxIDBlock:
			in, text = false, text[:0]
		default:
			text = append(text, b)
		}
	}
}
