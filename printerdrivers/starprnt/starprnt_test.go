package starprnt_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/starprnt"
)

func ticket() storeprint.Ticket {
	return storeprint.Ticket{
		StoreID: "store-001", Station: "hot", OrderID: "1001", Table: "A3",
		Items:      []storeprint.Item{{Name: "宫保鸡丁", Qty: 2, Note: "不要花生"}, {Name: "Tea\x1bd\x00", Qty: 1}},
		AcceptedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), TaskNo: "order_1001_station_hot", CopyOf: "order_1000_station_hot",
	}
}

func decode(t *testing.T, enc string, b []byte) (lines []string, cuts int) {
	t.Helper()
	d, err := starprnt.NewDecoder(enc)
	if err != nil {
		t.Fatal(err)
	}
	// In pieces, as a network delivers it.
	for len(b) > 0 {
		n := min(len(b), 7)
		for _, ev := range d.Decode(b[:n]) {
			switch ev.Kind {
			case starprnt.EventLine:
				lines = append(lines, ev.Text)
			case starprnt.EventCut:
				cuts++
			}
		}
		b = b[n:]
	}
	return lines, cuts
}

func TestEncode(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"gb18030", "utf-8", "cp437"} {
		t.Run(enc, func(t *testing.T) {
			b, err := starprnt.Encode(ticket(), enc, 32, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte{starprnt.ESC, '@'}) || !bytes.HasSuffix(b, []byte("order_1001_station_hot\n\x1bd\x03")) {
				t.Fatalf("got % x, want ESC @ first and the task_no line right before the cut", b)
			}
			lines, cuts := decode(t, enc, b)
			if cuts != 1 || lines[len(lines)-1] != "order_1001_station_hot" {
				t.Fatalf("got %q with %d cuts, want the task_no last and one cut", lines, cuts)
			}
			text := strings.Join(lines, "\n")
			for _, want := range []string{"Order: 1001", "Table: A3", "COPY OF order_1000_station_hot", "1 x Tea d "} {
				if !strings.Contains(text, want) {
					t.Errorf("got %q, want %q in it", text, want)
				}
			}
			if enc != "cp437" && !strings.Contains(text, "2 x 宫保鸡丁") {
				t.Errorf("got %q, want the Chinese item", text)
			}
			if enc == "cp437" && !strings.Contains(text, "2 x ????") {
				t.Errorf("got %q, want ? for what cp437 cannot print", text)
			}
		})
	}
	t.Run("Err", func(t *testing.T) {
		if _, err := starprnt.Encode(ticket(), "ebcdic", 0, nil); err == nil {
			t.Error("got nil for an unknown encoding")
		}
		tk := ticket()
		tk.TaskNo = ""
		if _, err := starprnt.Encode(tk, "utf-8", 0, nil); err == nil {
			t.Error("got nil for a ticket without task_no")
		}
	})
}

func FuzzDecoder(f *testing.F) {
	b, _ := starprnt.Encode(ticket(), "gb18030", 48, time.UTC)
	f.Add(b)
	f.Add([]byte{0x1b, 0x1d})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := starprnt.NewDecoder("gb18030")
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range d.Decode(b) {
			if strings.ContainsAny(ev.Text, "\n\x1b") {
				t.Fatalf("line %q holds a control byte", ev.Text)
			}
		}
	})
}
