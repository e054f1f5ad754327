package escpos

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/escpos")

// cst is the zone the golden tickets show their time in.
var cst = time.FixedZone("CST", 8*3600)

func sampleTicket() storeprint.Ticket {
	return storeprint.Ticket{
		StoreID: "store-001",
		Station: "hot",
		OrderID: "1001",
		Table:   "A3",
		Note:    "快点 please",
		Items: []storeprint.Item{
			{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "不要花生"},
			{Name: "Fried rice", Qty: 1, Station: "hot"},
		},
		AcceptedAt: time.Date(2026, 3, 1, 4, 34, 56, 0, time.UTC),
		TaskNo:     "order_1001_station_hot",
	}
}

type encodeCase struct {
	name     string
	ticket   storeprint.Ticket
	encoding string
	width    int
}

func encodeCases() []encodeCase {
	flags := sampleTicket()
	flags.Reprint = true
	flags.BackupFrom = "hot-1"
	flags.CopyOf = "order_1001_station_hot"
	flags.TaskNo = "order_1001_station_hot_copy_1"

	latin := sampleTicket()
	latin.Items = append(latin.Items,
		storeprint.Item{Name: "Crème brûlée", Qty: 3, Station: "hot", Note: "☺ for table Ω"},
	)

	long := sampleTicket()
	long.OrderID = strings.Repeat("9", 64)
	long.TaskNo = storeprint.TaskNo(long.OrderID, "hot")
	long.Items = []storeprint.Item{
		{Name: "Slow braised pork belly with preserved mustard greens", Qty: 12, Station: "hot",
			Note: "customer is allergic to peanuts, sesame and shellfish; use a clean wok"},
		{Name: "梅菜扣肉配手工馒头和时令青菜加辣加麻", Qty: 1, Station: "hot", Note: "少盐少油，不要香菜，打包带走"},
		{Name: "Supercalifragilisticexpialidocious noodles", Qty: 1, Station: "hot"},
	}

	control := sampleTicket()
	control.Table = "A3\x1b@\x1dV\x00"
	control.Note = "line one\nline two\ttab\x7f\u0085end"
	control.Items = []storeprint.Item{{Name: "Soup\x10\x04\x01", Qty: 1, Station: "hot", Note: "\x1d(H\x06\x0000" + "1234"}}

	return []encodeCase{
		{name: "gb18030", ticket: sampleTicket(), encoding: GB18030, width: 48},
		{name: "cp437", ticket: latin, encoding: CP437, width: 48},
		{name: "utf8", ticket: latin, encoding: UTF8, width: 48},
		{name: "flags", ticket: flags, encoding: GB18030, width: 48},
		{name: "wrap", ticket: long, encoding: GB18030, width: 32},
		{name: "control", ticket: control, encoding: GB18030, width: 48},
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	for _, tc := range encodeCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Encode(tc.ticket, tc.encoding, tc.width, cst)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			checkTicket(t, got, tc, tc.ticket.TaskNo)
			golden(t, tc.name, got, tc.encoding)
		})
	}

	t.Run("ErrUnknownEncoding", func(t *testing.T) {
		t.Parallel()
		_, err := Encode(sampleTicket(), "latin-9", 48, cst)
		if err == nil || !strings.Contains(err.Error(), `"latin-9"`) {
			t.Fatalf("got error %v, want one naming the encoding", err)
		}
	})
	t.Run("ErrWidth", func(t *testing.T) {
		t.Parallel()
		for _, w := range []int{-1, 8, 81} {
			if _, err := Encode(sampleTicket(), GB18030, w, cst); err == nil {
				t.Errorf("width %d: got no error, want one", w)
			}
		}
	})
	t.Run("ErrNoTaskNo", func(t *testing.T) {
		t.Parallel()
		tk := sampleTicket()
		tk.TaskNo = " "
		if _, err := Encode(tk, GB18030, 48, cst); err == nil {
			t.Fatal("got no error, want one")
		}
	})
	t.Run("DefaultWidth", func(t *testing.T) {
		t.Parallel()
		a, err := Encode(sampleTicket(), GB18030, 0, cst)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Encode(sampleTicket(), GB18030, storeprint.DefaultWidth, cst)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatal("width 0 does not render like the default width")
		}
	})
	t.Run("Reprint", func(t *testing.T) {
		t.Parallel()
		tk := sampleTicket()
		lines := decodeLines(t, mustEncode(t, tk, GB18030, 48), GB18030)
		if contains(lines, "REPRINT") {
			t.Fatalf("got REPRINT on a first print: %q", lines)
		}
		tk.Reprint = true
		lines = decodeLines(t, mustEncode(t, tk, GB18030, 48), GB18030)
		if !contains(lines, "REPRINT") {
			t.Fatalf("got lines %q, want a REPRINT line", lines)
		}
	})
	t.Run("Unencodable", func(t *testing.T) {
		t.Parallel()
		tk := sampleTicket()
		tk.Items = []storeprint.Item{{Name: "宫保 chicken", Qty: 1, Station: "hot"}}
		lines := decodeLines(t, mustEncode(t, tk, CP437, 48), CP437)
		if !contains(lines, "1 x ?? chicken") {
			t.Fatalf("got lines %q, want %q", lines, "1 x ?? chicken")
		}
	})
	t.Run("LocalTime", func(t *testing.T) {
		t.Parallel()
		lines := decodeLines(t, mustEncode(t, sampleTicket(), GB18030, 48), GB18030)
		if !contains(lines, "Time: 2026-03-01 12:34:56") {
			t.Fatalf("got lines %q, want the time in the given zone", lines)
		}
	})
}

// checkTicket checks the properties every ticket has: the task_no alone as
// the last text line, then a feed and a cut and nothing else; no line wider
// than the paper; no control byte outside a command.
// wantTaskNo "" skips comparing the last line's text.
func checkTicket(t *testing.T, b []byte, tc encodeCase, wantTaskNo string) {
	t.Helper()
	d, err := NewDecoder(tc.encoding)
	if err != nil {
		t.Fatal(err)
	}
	te, err := newTextEncoder(tc.encoding)
	if err != nil {
		t.Fatal(err)
	}
	events := d.Decode(b)
	if len(events) < 2 {
		t.Fatalf("got %d events, want a ticket", len(events))
	}
	// The task_no line, then nothing but the cut.
	tail := events[len(events)-2:]
	if tail[0].Kind != EventLine || (wantTaskNo != "" && tail[0].Text != wantTaskNo) {
		t.Errorf("got last line %+v, want the task_no %q", tail[0], wantTaskNo)
	}
	if tail[1].Kind != EventCut {
		t.Errorf("got %+v after the task_no, want the cut", tail[1])
	}
	size := 1
	for _, ev := range events[:len(events)-2] {
		switch {
		case ev.Kind == EventCommand && bytes.Equal(ev.Cmd, cmdSizeDouble):
			size = 2
		case ev.Kind == EventCommand && bytes.Equal(ev.Cmd, cmdSizeNormal):
			size = 1
		case ev.Kind == EventLine:
			if cols := lineColumns(te.glyphs(ev.Text)) * size; cols > tc.width {
				t.Errorf("line %q takes %d columns, want at most %d", ev.Text, cols, tc.width)
			}
		case ev.Kind != EventCommand:
			t.Errorf("got %v event %+v inside the ticket", ev.Kind, ev)
		}
	}
	// Every command in the ticket is one Encode means to send.
	known := [][]byte{cmdInit, cmdChineseOn, cmdChineseOff, cmdCodePage437, cmdAlignLeft, cmdAlignCenter,
		cmdBoldOn, cmdBoldOff, cmdSizeNormal, cmdSizeDouble, cmdCut}
	for _, ev := range events {
		if ev.Kind == EventLine {
			continue
		}
		ok := false
		for _, k := range known {
			ok = ok || bytes.Equal(ev.Cmd, k)
		}
		if !ok {
			t.Errorf("got command % x, which Encode never sends: ticket text leaked into a command", ev.Cmd)
		}
	}
}

func golden(t *testing.T, name string, got []byte, encoding string) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "escpos", name)
	txt := disassemble(t, got, encoding)
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ticket.bin"), got, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ticket.txt"), []byte(txt), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(filepath.Join(dir, "ticket.bin"))
	if err != nil {
		t.Fatalf("read golden file (run go test -update to write it): %v", err)
	}
	if !bytes.Equal(got, want) {
		wantTxt, _ := os.ReadFile(filepath.Join(dir, "ticket.txt"))
		t.Errorf("ticket differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", dir, txt, wantTxt)
	}
}

// disassemble renders a ticket readably: one command or text line a line.
func disassemble(t *testing.T, b []byte, encoding string) string {
	t.Helper()
	d, err := NewDecoder(encoding)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, ev := range append(d.Decode(b), d.Flush()...) {
		if ev.Kind == EventLine {
			fmt.Fprintf(&sb, "TEXT %q\n", ev.Text)
			continue
		}
		sb.WriteString(commandName(ev.Cmd))
		sb.WriteByte('\n')
	}
	return sb.String()
}

func commandName(c []byte) string {
	names := map[byte]string{DLE: "DLE", ESC: "ESC", FS: "FS", GS: "GS"}
	s := names[c[0]]
	for _, b := range c[1:] {
		if b > 0x20 && b < 0x7f && len(s) <= 4 {
			s += " " + string(b)
		} else {
			s += fmt.Sprintf(" 0x%02x", b)
		}
	}
	return s
}

func mustEncode(t *testing.T, tk storeprint.Ticket, encoding string, width int) []byte {
	t.Helper()
	b, err := Encode(tk, encoding, width, cst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeLines(t *testing.T, b []byte, encoding string) []string {
	t.Helper()
	d, err := NewDecoder(encoding)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ev := range d.Decode(b) {
		if ev.Kind == EventLine {
			lines = append(lines, ev.Text)
		}
	}
	return lines
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func FuzzEncode(f *testing.F) {
	f.Add("宫保鸡丁", "不要花生", "A3", "order_1001_station_hot", 48, true)
	f.Add("Crème brûlée ☺", "\x1b@\x1dV\x00", "\n", "t", 16, false)
	f.Add(strings.Repeat("长", 100), strings.Repeat("word ", 40), "", "order_x_station_y", 32, false)
	f.Fuzz(func(t *testing.T, name, note, table, taskNo string, width int, reprint bool) {
		if width < 16 || width > 80 || strings.TrimSpace(taskNo) == "" {
			return
		}
		tk := storeprint.Ticket{StoreID: "s", Station: "hot", OrderID: "1", Table: table, Note: note,
			Items: []storeprint.Item{{Name: name, Qty: 1, Note: note}}, TaskNo: taskNo, Reprint: reprint}
		for _, enc := range []string{GB18030, CP437, UTF8} {
			b, err := Encode(tk, enc, width, time.UTC)
			if err != nil {
				t.Fatalf("%s: %v", enc, err)
			}
			// The task_no comes back as it went in where the encoding
			// can carry it.
			want := strings.TrimSpace(taskNo)
			if enc == CP437 || !printable(want) {
				want = ""
			}
			checkTicket(t, b, encodeCase{ticket: tk, encoding: enc, width: width}, want)
		}
	})
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}
