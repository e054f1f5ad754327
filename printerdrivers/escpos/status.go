package escpos

import (
	"github.com/storeprint/storeprint"
)

// Bits of the real-time status answers (DLE EOT n). Every answer has bits
// 1 and 4 set and bits 0 and 7 clear.
const (
	statusFixedMask = 0x93
	statusFixed     = 0x12

	printerOffline = 0x08 // n=1: printer is offline

	offlineCoverOpen = 0x04 // n=2: cover is open
	offlinePaperEnd  = 0x20 // n=2: printing stopped because the paper ran out
	offlineError     = 0x40 // n=2: an error occurred

	paperNearEnd = 0x0C // n=4: roll paper near-end sensor
	paperEnd     = 0x60 // n=4: roll paper end sensor
)

func validStatusByte(b byte) bool { return b&statusFixedMask == statusFixed }

// ParseStatus turns the answers to DLE EOT 1, 2 and 4 into a status. When
// several conditions hold, the one a person must fix first wins: cover
// open, then paper end, then offline. An answer without the fixed bits of a
// status byte makes the state PrinterUnknown.
func ParseStatus(n1, n2, n4 byte) storeprint.PrinterStatus {
	if !validStatusByte(n1) || !validStatusByte(n2) || !validStatusByte(n4) {
		return storeprint.PrinterStatus{State: storeprint.PrinterUnknown}
	}
	st := storeprint.PrinterStatus{PaperNearEnd: n4&paperNearEnd != 0}
	switch {
	case n2&offlineCoverOpen != 0:
		st.State = storeprint.PrinterCoverOpen
	case n2&offlinePaperEnd != 0 || n4&paperEnd != 0:
		st.State = storeprint.PrinterPaperEnd
	case n1&printerOffline != 0 || n2&offlineError != 0:
		st.State = storeprint.PrinterOffline
	default:
		st.State = storeprint.PrinterReady
	}
	return st
}

// StatusByte returns what a printer in status st answers to DLE EOT n, the
// inverse of ParseStatus. ok is false for an n a printer does not answer.
// A printer with its cover open or out of paper is offline too, as real
// printers report.
func StatusByte(st storeprint.PrinterStatus, n byte) (b byte, ok bool) {
	b = statusFixed
	switch n {
	case StatusPrinter:
		switch st.State {
		case storeprint.PrinterOffline, storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen, storeprint.PrinterUnknown:
			b |= printerOffline
		}
	case StatusOffline:
		switch st.State {
		case storeprint.PrinterCoverOpen:
			b |= offlineCoverOpen
		case storeprint.PrinterPaperEnd:
			b |= offlinePaperEnd
		case storeprint.PrinterUnknown:
			b |= offlineError
		}
	case StatusError:
	case StatusPaper:
		if st.PaperNearEnd || st.State == storeprint.PrinterPaperEnd {
			b |= paperNearEnd
		}
		if st.State == storeprint.PrinterPaperEnd {
			b |= paperEnd
		}
	default:
		return 0, false
	}
	return b, true
}
