package escpos

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
)

func TestDecoder_Decode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		encoding string
		stream   string
		want     []string // events, formatted by describe
	}{
		{
			name: "TextAndCommands", encoding: GB18030,
			stream: "\x1b@\x1c&\x1ba\x01\x1bE\x01\x1b!\x30\x1b2\x1b3\x18\x1d!\x11" +
				"\xb9\xac\xb1\xa3\xbc\xa6\xb6\xa1\n\x1bd\x04\x1dV\x01",
			want: []string{"ESC @", "FS &", "ESC a 0x01", "ESC E 0x01", "ESC ! 0x30", "ESC 2", "ESC 3 0x18", "GS ! 0x11",
				"TEXT 宫保鸡丁", "ESC d 0x04", "CUT GS V 0x01"},
		},
		{
			name: "CodePage", encoding: GB18030,
			stream: "\x1c.\x1bt\x00caf\x82\n\x1c&\xc4\xe3\n",
			want:   []string{"FS .", "ESC t 0x00", "TEXT café", "FS &", "TEXT 你"},
		},
		{
			name: "InitResetsEncoding", encoding: UTF8,
			stream: "\x1c&\xc4\xe3\n\x1b@\xe4\xbd\xa0\n",
			want:   []string{"FS &", "TEXT 你", "ESC @", "TEXT 你"},
		},
		{
			name: "Requests", encoding: GB18030,
			stream: "\x10\x04\x01\x10\x04\x02\x10\x04\x04\x1d(H\x06\x00\x30\x300427",
			want:   []string{"STATUS 1", "STATUS 2", "STATUS 4", "PROCESS 0427"},
		},
		{
			name: "OtherGSParenH", encoding: GB18030,
			stream: "\x1d(H\x06\x00\x30\x31abcd\x1d(H\x01\x00\x30ok\n",
			want:   []string{"GS ( H 0x06 0x00 0x30 0x31 0x61 0x62 0x63 0x64", "GS ( H 0x01 0x00 0x30", "TEXT ok"},
		},
		{
			name: "CutForms", encoding: GB18030,
			stream: "a\x1dVA\x03b\x1dV\x30c\x1bid\x1bm",
			want: []string{"TEXT a", "CUT GS V A 0x03", "TEXT b", "CUT GS V 0", "TEXT c", "CUT ESC i", "TEXT d",
				"CUT ESC m"},
		},
		{
			name: "BulkDataSkipped", encoding: GB18030,
			stream: "\x1d(k\x04\x001A2\x00x\n" + // QR code model
				"\x1dv0\x00\x02\x00\x02\x00\n\n\n\n" + // 2x2 raster image with LF bytes in it
				"\x1b*\x00\x03\x00\x1b\x1d\n" + // bit image
				"\x1dkA\x03\x10\x04\x01" + // barcode with DLE EOT bytes in its data
				"\x1dk\x04AB\x1b\x00" + // NUL-terminated barcode
				"end\n",
			want: []string{"GS ( k 0x04 0x00", "TEXT x", "GS v 0 0x00 0x02 0x00 0x02 0x00", "ESC * 0x00 0x03 0x00",
				"GS k A 0x03", "GS k 0x04", "TEXT end"},
		},
		{
			name: "Controls", encoding: UTF8,
			stream: "a\tb\rc\x00\x7f\x0cd\n\n",
			want:   []string{"TEXT a bcd", "TEXT "},
		},
		{
			name: "InvalidText", encoding: UTF8,
			stream: "ok\xff\xc2\x85\n",
			want:   []string{"TEXT ok\uFFFD\uFFFD"},
		},
		{
			name: "InitClearsLine", encoding: GB18030,
			stream: "half\x1b@whole\n",
			want:   []string{"ESC @", "TEXT whole"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Whole, and a byte at a time: the results must agree.
			for _, chunk := range []int{len(tt.stream), 1} {
				d, err := NewDecoder(tt.encoding)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for i := 0; i < len(tt.stream); i += chunk {
					got = append(got, describe(d.Decode([]byte(tt.stream[i:min(i+chunk, len(tt.stream))])))...)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("chunks of %d: got\n%q\nwant\n%q", chunk, got, tt.want)
				}
			}
		})
	}
	t.Run("Flush", func(t *testing.T) {
		t.Parallel()
		d, _ := NewDecoder(GB18030)
		if got := describe(d.Decode([]byte("no newline"))); len(got) != 0 {
			t.Fatalf("got %q before the flush, want nothing", got)
		}
		if got := describe(d.Flush()); !reflect.DeepEqual(got, []string{"TEXT no newline"}) {
			t.Fatalf("got %q, want the pending line", got)
		}
	})
	t.Run("LongLine", func(t *testing.T) {
		t.Parallel()
		d, _ := NewDecoder(GB18030)
		events := d.Decode([]byte(strings.Repeat("x", maxLine*2+1)))
		if len(events) != 2 || len(events[0].Text) != maxLine {
			t.Fatalf("got %d events, want two lines of %d", len(events), maxLine)
		}
	})
	t.Run("ErrUnknownEncoding", func(t *testing.T) {
		t.Parallel()
		if _, err := NewDecoder("ebcdic"); err == nil {
			t.Fatal("got no error, want one")
		}
	})
}

func describe(events []Event) []string {
	var out []string
	for _, ev := range events {
		switch ev.Kind {
		case EventLine:
			out = append(out, "TEXT "+ev.Text)
		case EventCut:
			out = append(out, "CUT "+commandName(ev.Cmd))
		case EventStatusRequest:
			out = append(out, "STATUS "+string(rune('0'+ev.N)))
		case EventProcessID:
			out = append(out, "PROCESS "+ev.ID)
		default:
			out = append(out, commandName(ev.Cmd))
		}
	}
	return out
}

func FuzzDecoder(f *testing.F) {
	for _, tc := range encodeCases() {
		b, err := Encode(tc.ticket, tc.encoding, tc.width, cst)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(b, ProcessIDRequest("0001")...), uint8(7))
	}
	f.Add([]byte("\x1d(H\x06\x00\x30\x301234\x10\x04\x01"), uint8(1))
	f.Add([]byte("\x1d(\xff\xff\x1b"), uint8(3))
	f.Add([]byte("\x1dv0\x00\xff\xff\xff\xff"), uint8(2))
	f.Add([]byte("\x1c&\x81\x30\x81\x30\xfe\n\x1c.\x1bt\x10\x80\n"), uint8(5))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		whole, err := NewDecoder(GB18030)
		if err != nil {
			t.Fatal(err)
		}
		want := append(whole.Decode(b), whole.Flush()...)

		// The same stream in chunks decodes the same.
		split, _ := NewDecoder(GB18030)
		n := int(chunk%16) + 1
		var got []Event
		for i := 0; i < len(b); i += n {
			got = append(got, split.Decode(b[i:min(i+n, len(b))])...)
		}
		got = append(got, split.Flush()...)
		if !reflect.DeepEqual(describe(got), describe(want)) {
			t.Fatalf("chunks of %d decode differently:\n%q\nwant\n%q", n, describe(got), describe(want))
		}

		for _, ev := range want {
			switch ev.Kind {
			case EventLine:
				for _, r := range ev.Text {
					if unicode.IsControl(r) {
						t.Fatalf("line %q holds control character %U", ev.Text, r)
					}
				}
			case EventProcessID:
				if !ValidProcessID(ev.ID) {
					t.Fatalf("process id %q is not four digits", ev.ID)
				}
			default:
				if len(ev.Cmd) < 2 {
					t.Fatalf("%v event with command % x", ev.Kind, ev.Cmd)
				}
			}
		}
	})
}
