package printersim

import (
	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

// The printer the simulator says it is when asked with GS I n: an Epson
// TM-T88V with an autocutter. Every answer is one of the two forms of
// Epson's ESC/POS reference: one byte with bits 4 and 7 clear (n = 1..3,
// 49..51), or a block 5F <text> 00 (n = 65..69).
const (
	Maker     = "EPSON"         // GS I 66
	ModelName = "TM-T88V"       // GS I 67
	Firmware  = "30.01 ESC/POS" // GS I 65
	Serial    = "SIM0000001"    // GS I 68

	modelID   = 0x20 // GS I 1: the TM-T88 series
	versionID = 0x46 // GS I 3

	typeMultiByte = 0x01 // GS I 2: multi-byte characters (GB18030) supported
	typeCutter    = 0x02 // GS I 2: autocutter installed
)

// What a basic model (a low-cost ESC/POS printer) says it is, to GS I 66
// and 67.
const (
	BasicMaker     = "GENERIC"
	BasicModelName = "POS-80"
)

// printerID returns the answer to GS I n of a printer of model m whose
// power-on encoding is encoding, or nil for an n a TM-T88V ignores. A
// basic model names another maker and model.
func printerID(n byte, encoding string, m Model) []byte {
	if m == ModelBasic {
		switch n {
		case 66:
			return block(BasicMaker)
		case 67:
			return block(BasicModelName)
		}
	}
	switch n {
	case 1, 49:
		return []byte{modelID}
	case 2, 50:
		if encoding == escpos.GB18030 {
			return []byte{typeCutter | typeMultiByte}
		}
		return []byte{typeCutter}
	case 3, 51:
		return []byte{versionID}
	case 65:
		return block(Firmware)
	case 66:
		return block(Maker)
	case 67:
		return block(ModelName)
	case 68:
		return block(Serial)
	case 69: // the font of the country's language
		if encoding == escpos.GB18030 {
			return block("CHINA GB18030")
		}
		return block("")
	}
	return nil
}

func block(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, 0x5F)
	b = append(b, s...)
	return append(b, 0x00)
}

// Bits of the automatic status back (GS a n) and of GS r n, Epson's layout.
const (
	asbFixed     = 0x10 // first byte: bit 4 always on
	asbOffline   = 0x08 // first byte
	asbCoverOpen = 0x20 // first byte
	asbFeeding   = 0x40 // first byte: paper fed by the feed button
	asbErrors    = 0x6C // second byte: recoverable, autocutter, unrecoverable, auto-recoverable error
	asbNearEnd   = 0x03 // third byte; also GS r 1
	asbPaperEnd  = 0x0C // third byte; also GS r 1
)

// asb returns the 4 bytes of automatic status back of a printer in status
// st. They are built from the printer's answers to DLE EOT 1 to 4, so that
// both always tell the same story.
func asb(st storeprint.PrinterStatus) [4]byte {
	n1, _ := escpos.StatusByte(st, escpos.StatusPrinter)
	n2, _ := escpos.StatusByte(st, escpos.StatusOffline)
	n3, _ := escpos.StatusByte(st, escpos.StatusError)
	n4, _ := escpos.StatusByte(st, escpos.StatusPaper)
	b := [4]byte{asbFixed | n1&asbOffline, n3 & asbErrors, 0, 0}
	if n2&0x04 != 0 { // DLE EOT 2: cover open
		b[0] |= asbCoverOpen
	}
	if n2&0x08 != 0 { // DLE EOT 2: paper fed by the feed button
		b[0] |= asbFeeding
	}
	if n4&0x0C != 0 { // DLE EOT 4: near-end sensor
		b[2] |= asbNearEnd
	}
	if n4&0x60 != 0 { // DLE EOT 4: paper end sensor
		b[2] |= asbPaperEnd
	}
	return b
}

// Items of GS a n: a change of an enabled item sends the status.
const (
	asbItemOnline = 0x02 // online/offline, cover, feed button
	asbItemError  = 0x04 // errors
	asbItemPaper  = 0x08 // roll paper sensors
)

// asbChanged reports whether a printer with automatic status back items
// mask sends its status when it goes from prev to next.
func asbChanged(mask byte, prev, next [4]byte) bool {
	var watch [4]byte
	if mask&asbItemOnline != 0 {
		watch[0] |= asbOffline | asbCoverOpen | asbFeeding
	}
	if mask&asbItemError != 0 {
		watch[1] |= asbErrors
	}
	if mask&asbItemPaper != 0 {
		watch[2] |= asbNearEnd | asbPaperEnd
	}
	for i := range watch {
		if (prev[i]^next[i])&watch[i] != 0 {
			return true
		}
	}
	return false
}

// transmitStatus returns the answer to GS r n of a printer in status st,
// or nil for an n a TM-T88V ignores: n = 1 or 49 the paper sensors,
// n = 2 or 50 the drawer kick-out connector (pin 3 low: no drawer).
func transmitStatus(n byte, st storeprint.PrinterStatus) []byte {
	switch n {
	case 1, 49:
		b := asb(st)[2] & (asbNearEnd | asbPaperEnd)
		return []byte{b}
	case 2, 50:
		return []byte{0x00}
	}
	return nil
}
