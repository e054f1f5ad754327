package escpos

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// TimeLayout is how a ticket shows its acceptance time.
const TimeLayout = "2006-01-02 15:04:05"

// Commands Encode emits.
var (
	cmdInit        = []byte{ESC, '@'}
	cmdChineseOn   = []byte{FS, '&'}
	cmdChineseOff  = []byte{FS, '.'}
	cmdCodePage437 = []byte{ESC, 't', 0}
	cmdAlignLeft   = []byte{ESC, 'a', 0}
	cmdAlignCenter = []byte{ESC, 'a', 1}
	cmdBoldOn      = []byte{ESC, 'E', 1}
	cmdBoldOff     = []byte{ESC, 'E', 0}
	cmdSizeNormal  = []byte{GS, '!', 0x00}
	cmdSizeDouble  = []byte{GS, '!', 0x11} // double width and height
	// cmdCut feeds the paper to the cutter and cuts (GS V 66 0: partial cut
	// after feeding to the cutting position). One command, so nothing but
	// the cut follows the task_no line.
	cmdCut = []byte{GS, 'V', 66, 0}
)

// Encode renders t as an ESC/POS kitchen ticket for a printer configured
// with encoding (gb18030, cp437 or utf-8) and width columns of normal type
// (0 means storeprint.DefaultWidth). The acceptance time is shown in loc (nil
// means the local time zone).
//
// The ticket: the store, the station in large type, order id, table and
// acceptance time; REPRINT, BACKUP FROM and COPY OF lines when they apply;
// a separator; each item with its quantity in large type and its note below;
// the order's note; a separator; the task_no alone as the last text line;
// a feed and a cut. Lines are wrapped to the width; the task_no line is
// never wrapped by Encode, so it stays one line in the data even when the
// printer folds it on paper.
//
// Text is never an error: a character the encoding cannot express prints as
// '?', and control characters never reach the printer. Only an unknown
// encoding, a width out of range (16-80) or a ticket without a task_no is
// an error.
func Encode(t storeprint.Ticket, encoding string, width int, loc *time.Location) ([]byte, error) {
	te, err := newTextEncoder(encoding)
	if err != nil {
		return nil, fmt.Errorf("escpos: %w", err)
	}
	if width == 0 {
		width = storeprint.DefaultWidth
	}
	if width < 16 || width > 80 {
		return nil, fmt.Errorf("escpos: width %d is not between 16 and 80", width)
	}
	if strings.TrimSpace(t.TaskNo) == "" {
		return nil, fmt.Errorf("escpos: ticket has no task_no")
	}
	if loc == nil {
		loc = time.Local
	}
	w := &ticketWriter{te: te, width: width}

	w.cmd(cmdInit)
	switch {
	case te.chinese:
		w.cmd(cmdChineseOn)
	case te.enc != nil:
		w.cmd(cmdChineseOff)
		w.cmd(cmdCodePage437)
	}

	w.cmd(cmdAlignCenter)
	w.text(t.StoreID, 1, 0)
	w.cmd(cmdSizeDouble)
	w.text(t.Station, 2, 0)
	w.cmd(cmdSizeNormal)
	w.cmd(cmdAlignLeft)
	if t.OrderID != "" {
		w.text("Order: "+t.OrderID, 1, 7)
	}
	if t.Table != "" {
		w.text("Table: "+t.Table, 1, 7)
	}
	if !t.AcceptedAt.IsZero() {
		w.text("Time: "+t.AcceptedAt.In(loc).Format(TimeLayout), 1, 0)
	}
	if t.Reprint {
		w.cmd(cmdSizeDouble)
		w.cmd(cmdBoldOn)
		w.text("REPRINT", 2, 0)
		w.cmd(cmdBoldOff)
		w.cmd(cmdSizeNormal)
	}
	if t.BackupFrom != "" || t.CopyOf != "" {
		w.cmd(cmdBoldOn)
		if t.BackupFrom != "" {
			w.text("BACKUP FROM "+t.BackupFrom, 1, 0)
		}
		if t.CopyOf != "" {
			w.text("COPY OF "+t.CopyOf, 1, 0)
		}
		w.cmd(cmdBoldOff)
	}
	w.separator()

	for _, it := range t.Items {
		qty := strconv.Itoa(it.Qty) + " x "
		w.cmd(cmdSizeDouble)
		w.text(qty+it.Name, 2, len(qty))
		w.cmd(cmdSizeNormal)
		if it.Note != "" {
			w.text("  - "+it.Note, 1, 4)
		}
	}
	if t.Note != "" {
		w.text("Note: "+t.Note, 1, 6)
	}
	w.separator()

	w.line(te.glyphs(strings.TrimSpace(t.TaskNo)))
	w.cmd(cmdCut)
	return w.buf, nil
}

// ticketWriter accumulates a ticket's bytes.
type ticketWriter struct {
	te    *textEncoder
	width int
	buf   []byte
}

func (w *ticketWriter) cmd(c []byte) { w.buf = append(w.buf, c...) }

// text writes s wrapped to the width; size 2 is double-size type, which
// takes twice the columns. Continuation lines are indented by indent
// columns. Empty text writes nothing.
func (w *ticketWriter) text(s string, size, indent int) {
	if strings.TrimSpace(s) == "" {
		return
	}
	for _, l := range wrap(w.te.glyphs(s), w.width/size, indent) {
		w.line(l)
	}
}

func (w *ticketWriter) line(gs []glyph) {
	for _, g := range gs {
		w.buf = append(w.buf, g.b...)
	}
	w.buf = append(w.buf, LF)
}

func (w *ticketWriter) separator() {
	w.buf = append(w.buf, strings.Repeat("-", w.width)...)
	w.buf = append(w.buf, LF)
}
