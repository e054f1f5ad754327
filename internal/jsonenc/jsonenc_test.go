package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode"

	"pgregory.net/rapid"
)

// String and Time write what encoding/json writes, byte for byte, and
// refuse what it refuses.
func TestSameAsEncodingJSON(t *testing.T) {
	t.Run("string", rapid.MakeCheck(func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.SampledFrom([]string{"", "宫保鸡丁", "<b>&amp;</b>", "a\"b\\c", "\u2028\u2029", "\x00\x1f\x7f", "\xff\xfe", "\t\n\b\f\r"}),
			rapid.String(),
			rapid.StringOf(rapid.RuneFrom(nil, unicode.Han, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Latin)),
			rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) }),
		).Draw(t, "s")
		want, _ := json.Marshal(s)
		if got := String(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("String(%q): got %s, want %s", s, got, want)
		}
	}))
	t.Run("time", rapid.MakeCheck(func(t *rapid.T) {
		sec := rapid.Int64Range(-62135596800-1000, 253402300799+1000).Draw(t, "sec")
		nsec := rapid.Int64Range(0, 999999999).Draw(t, "nsec")
		loc := rapid.SampledFrom([]*time.Location{time.UTC, time.FixedZone("", 8*3600), time.FixedZone("", -(3*3600 + 30*60)), time.FixedZone("x", 45), time.FixedZone("", 24*3600)}).Draw(t, "loc")
		tm := time.Unix(sec, nsec).In(loc)
		want, werr := json.Marshal(tm)
		got, err := Time(nil, tm)
		if (err != nil) != (werr != nil) || (werr == nil && !bytes.Equal(got, want)) {
			t.Fatalf("Time(%v): got %s %v, want %s %v", tm, got, err, want, werr)
		}
	}))
}
