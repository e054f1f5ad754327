package storeprint

import "time"

// DefaultWidth is the characters a line of a ticket holds when the printer's
// config gives no width: 80 mm paper in the printer's normal font.
const DefaultWidth = 48

// Ticket is what goes on paper for one attempt of a task: the gateway fills
// it in, the encoders (ESC/POS, StarPRNT, ePOS) render it.
type Ticket struct {
	StoreID    string
	Station    string
	OrderID    string
	Table      string
	Note       string
	Items      []Item
	AcceptedAt time.Time
	TaskNo     string
	Reprint    bool   // print a REPRINT line
	BackupFrom string // print "BACKUP FROM <printer>"
	CopyOf     string // a deliberate copy of another task
}

// PrinterStatus is one status reading of a printer.
type PrinterStatus struct {
	State        PrinterState
	PaperNearEnd bool
}
