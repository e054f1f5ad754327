package escpos

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/storeprint/storeprint"
)

func TestProcessIDRequest(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		got := ProcessIDRequest("0427")
		want := []byte{0x1D, 0x28, 0x48, 0x06, 0x00, 0x30, 0x30, '0', '4', '2', '7'}
		if !bytes.Equal(got, want) {
			t.Fatalf("got % x, want % x", got, want)
		}
		if got, want := ProcessIDAnswer("0427"), []byte{0x37, 0x22, '0', '4', '2', '7', 0x00}; !bytes.Equal(got, want) {
			t.Fatalf("answer: got % x, want % x", got, want)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, id := range []string{"", "123", "12345", "12a4", "١٢٣٤"} {
			if got := ProcessIDRequest(id); got != nil {
				t.Errorf("ProcessIDRequest(%q): got % x, want nil", id, got)
			}
			if got := ProcessIDAnswer(id); got != nil {
				t.Errorf("ProcessIDAnswer(%q): got % x, want nil", id, got)
			}
		}
	})
}

func TestReadConfirmation(t *testing.T) {
	t.Parallel()
	answer := func(id string) string { return string(ProcessIDAnswer(id)) }
	tests := []struct {
		name   string
		stream string
		want   []string // ids in order
	}{
		{name: "OK", stream: answer("0001"), want: []string{"0001"}},
		{name: "StatusBytesFirst", stream: "\x12\x12\x12" + answer("0002"), want: []string{"0002"}},
		{name: "Several", stream: answer("0001") + "\x14\x00\x00\x0f" + answer("0002"), want: []string{"0001", "0002"}},
		{name: "Overlapping", stream: "\x37\x37\x22" + "0003\x00", want: []string{"0003"}},
		{name: "BrokenThenGood", stream: "\x37\x22" + "12\x37\x22" + "4567\x00", want: []string{"4567"}},
		{name: "MissingNUL", stream: "\x37\x22" + "1234\x01" + answer("5678"), want: []string{"5678"}},
		{name: "NotDigits", stream: "\x37\x22" + "12a4\x00", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Byte at a time, as a slow link delivers it.
			r := bufio.NewReader(iotest.OneByteReader(strings.NewReader(tt.stream)))
			var got []string
			for {
				id, err := ReadConfirmation(r)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("ReadConfirmation: %v", err)
				}
				got = append(got, id)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got ids %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("ErrRead", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		r := bufio.NewReader(iotest.ErrReader(boom))
		if _, err := ReadConfirmation(r); !errors.Is(err, boom) {
			t.Fatalf("got %v, want the read error", err)
		}
	})
}

func FuzzParseConfirmation(f *testing.F) {
	f.Add([]byte{0x37, 0x22, '1', '2', '3', '4', 0x00})
	f.Add([]byte{0x12, 0x12, 0x72, 0x37, 0x37, 0x22, '0', '0', '0', '0', 0x00})
	f.Add([]byte{0x37, 0x22, '1', '2', 0x37, 0x22, '9', '9', '9', '9', 0x00, 0x37})
	f.Add([]byte("random noise \x00\x37\x22"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := ReadConfirmation(bytes.NewReader(b))
		first := firstAnswer(b)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("got error %v, want io.EOF", err)
			}
			if first >= 0 {
				t.Fatalf("missed the answer at %d in % x", first, b)
			}
			return
		}
		if first < 0 {
			t.Fatalf("got id %q from % x, which holds no answer", id, b)
		}
		if want := string(b[first+2 : first+6]); id != want {
			t.Fatalf("got id %q, want the first answer's %q", id, want)
		}
	})
}

// firstAnswer returns where the first process ID answer in b starts, or -1:
// the obvious, slow way to find one.
func firstAnswer(b []byte) int {
	for i := 0; i+7 <= len(b); i++ {
		if answerPrefix(b[i:i+7]) && b[i+6] == 0 {
			return i
		}
	}
	return -1
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		n1, n2, n4 byte
		want       storeprint.PrinterStatus
	}{
		{"Ready", 0x12, 0x12, 0x12, storeprint.PrinterStatus{State: storeprint.PrinterReady}},
		{"NearEnd", 0x12, 0x12, 0x1E, storeprint.PrinterStatus{State: storeprint.PrinterReady, PaperNearEnd: true}},
		{"Offline", 0x1A, 0x12, 0x12, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
		{"Error", 0x12, 0x52, 0x12, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
		{"CoverOpen", 0x1A, 0x16, 0x12, storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen}},
		{"PaperEndStop", 0x1A, 0x32, 0x12, storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd}},
		{"PaperEndSensor", 0x1A, 0x12, 0x72, storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd}},
		{"PaperEndAndNearEnd", 0x1A, 0x32, 0x7E, storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}},
		{"CoverOpenBeatsPaperEnd", 0x1A, 0x36, 0x7E, storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen, PaperNearEnd: true}},
		{"ErrFixedBits", 0x37, 0x12, 0x12, storeprint.PrinterStatus{State: storeprint.PrinterUnknown}},
		{"ErrZero", 0x00, 0x00, 0x00, storeprint.PrinterStatus{State: storeprint.PrinterUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ParseStatus(tt.n1, tt.n2, tt.n4); got != tt.want {
				t.Fatalf("ParseStatus(%#02x, %#02x, %#02x): got %+v, want %+v", tt.n1, tt.n2, tt.n4, got, tt.want)
			}
		})
	}
}

func TestStatusByte(t *testing.T) {
	t.Parallel()
	for _, st := range []storeprint.PrinterStatus{
		{State: storeprint.PrinterReady},
		{State: storeprint.PrinterReady, PaperNearEnd: true},
		{State: storeprint.PrinterOffline},
		{State: storeprint.PrinterCoverOpen},
		{State: storeprint.PrinterPaperEnd, PaperNearEnd: true},
	} {
		n1, _ := StatusByte(st, 1)
		n2, _ := StatusByte(st, 2)
		n4, _ := StatusByte(st, 4)
		if got := ParseStatus(n1, n2, n4); got != st {
			t.Errorf("round trip of %+v: got %+v", st, got)
		}
	}
	if _, ok := StatusByte(storeprint.PrinterStatus{State: storeprint.PrinterReady}, 7); ok {
		t.Error("StatusByte(7): got ok, want no answer")
	}
}

func TestReadStatus(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		n1, n2, n4, err := ReadStatus(strings.NewReader("\x1a\x32\x7e"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ParseStatus(n1, n2, n4).State; got != storeprint.PrinterPaperEnd {
			t.Fatalf("got %v, want paper_end", got)
		}
	})
	t.Run("ErrNotStatus", func(t *testing.T) {
		t.Parallel()
		_, _, _, err := ReadStatus(strings.NewReader("\x12\x37\x12"))
		if !errors.Is(err, ErrStatusAnswer) {
			t.Fatalf("got %v, want ErrStatusAnswer", err)
		}
	})
	t.Run("ErrShort", func(t *testing.T) {
		t.Parallel()
		_, _, _, err := ReadStatus(strings.NewReader("\x12"))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
		}
	})
	if got, want := StatusQuery(), []byte{0x10, 0x04, 1, 0x10, 0x04, 2, 0x10, 0x04, 4}; !bytes.Equal(got, want) {
		t.Fatalf("StatusQuery: got % x, want % x", got, want)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add(byte(0x12), byte(0x12), byte(0x12))
	f.Add(byte(0x1A), byte(0x16), byte(0x12))
	f.Add(byte(0x1A), byte(0x32), byte(0x7E))
	f.Add(byte(0x1A), byte(0x52), byte(0x1E))
	f.Add(byte(0x00), byte(0xFF), byte(0x37))
	f.Fuzz(func(t *testing.T, n1, n2, n4 byte) {
		st := ParseStatus(n1, n2, n4)
		valid := n1&0x93 == 0x12 && n2&0x93 == 0x12 && n4&0x93 == 0x12
		var want storeprint.PrinterState
		switch {
		case !valid:
			want = storeprint.PrinterUnknown
		case n2&0x04 != 0:
			want = storeprint.PrinterCoverOpen
		case n2&0x20 != 0 || n4&0x60 != 0:
			want = storeprint.PrinterPaperEnd
		case n1&0x08 != 0 || n2&0x40 != 0:
			want = storeprint.PrinterOffline
		default:
			want = storeprint.PrinterReady
		}
		if st.State != want {
			t.Fatalf("ParseStatus(%#02x, %#02x, %#02x): got %v, want %v", n1, n2, n4, st.State, want)
		}
		if valid && st.PaperNearEnd != (n4&0x0C != 0) {
			t.Fatalf("PaperNearEnd: got %v for n4 %#02x", st.PaperNearEnd, n4)
		}
		// A printer answering with these bytes answers the same again.
		if valid && want != storeprint.PrinterUnknown {
			b1, _ := StatusByte(st, 1)
			b2, _ := StatusByte(st, 2)
			b4, _ := StatusByte(st, 4)
			if again := ParseStatus(b1, b2, b4); again.State != st.State {
				t.Fatalf("StatusByte of %+v parses as %+v", st, again)
			}
		}
	})
}

func TestReadTransmitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []byte
		want byte
	}{
		{"Plain", []byte{0x00}, 0x00},
		{"PaperEnd", []byte{0x0C}, 0x0C},
		// Status answers and a late process ID answer (whose 22 and 00
		// alone would pass) come first.
		{"AfterOthers", append(append([]byte{0x12, 0x16}, ProcessIDAnswer("0042")...), 0x03), 0x03},
		// An automatic status back block (ready, no error, paper near end)
		// first: its last 3 bytes alone would pass.
		{"AfterASB", []byte{0x10, 0x00, 0x03, 0x00, 0x0C}, 0x0C},
		// A late printer ID block (GS I 66) first.
		{"AfterIDBlock", append([]byte("\x5FGENERIC\x00"), 0x00), 0x00},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTransmitStatus(bufio.NewReader(bytes.NewReader(tc.in)))
			if err != nil || got != tc.want {
				t.Fatalf("got %#02x, %v; want %#02x", got, err, tc.want)
			}
		})
	}
	t.Run("ErrNone", func(t *testing.T) {
		_, err := ReadTransmitStatus(bufio.NewReader(bytes.NewReader(ProcessIDAnswer("0042"))))
		if err != io.EOF {
			t.Fatalf("got %v, want io.EOF: a process ID answer is no answer to GS r", err)
		}
	})
}

func TestReadIDBlock(t *testing.T) {
	t.Parallel()
	in := append([]byte{0x00, 0x12}, append([]byte{0x5F}, []byte("EPSON\x00")...)...)
	got, err := ReadIDBlock(bufio.NewReader(bytes.NewReader(in)))
	if err != nil || got != "EPSON" {
		t.Fatalf("got %q, %v; want EPSON", got, err)
	}
	if _, err := ReadIDBlock(bufio.NewReader(bytes.NewReader([]byte("EPSON\x00")))); err != io.EOF {
		t.Fatalf("got %v, want io.EOF: no block", err)
	}
}
