package storeprint

import "slices"

// TargetKind is what a station's tickets go to: a printer, or a kitchen
// display whose "printed" is a bump. The gateway reports both to HQ in one
// list; the kind tells them apart.
type TargetKind string

const (
	TargetPrinter TargetKind = "printer"
	TargetDisplay TargetKind = "display"
)

// TargetKinds lists every target kind.
var TargetKinds = []TargetKind{TargetPrinter, TargetDisplay}

// Valid reports whether k is a known target kind.
func (k TargetKind) Valid() bool { return slices.Contains(TargetKinds, k) }
