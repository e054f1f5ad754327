package http

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

// FuzzDecode feeds the body parser arbitrary bytes: no panic; a body that
// is not valid UTF-8 is refused, never altered, and whatever it accepts
// holds exactly the text that was sent.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"code":"123456","name":"till"}`, "{\"name\":\"a\xffb\"}", `{"name":"\ufffd"}`, `{"name":"\u202e"}`, ``, `{}`, `{"code":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/v1/pair", strings.NewReader(string(body)))
		w := httptest.NewRecorder()
		var v struct {
			Code string `json:"code"`
			Name string `json:"name"`
		}
		err := decode(w, r, &v, false)
		if !utf8.Valid(body) {
			if storeprint.ErrorCode(err) != storeprint.EINVALID || !strings.Contains(err.Error(), "UTF-8") {
				t.Fatalf("invalid UTF-8 %q: got %v, want invalid naming UTF-8", body, err)
			}
			return
		}
		if err != nil {
			if c := storeprint.ErrorCode(err); c != storeprint.EINVALID && c != storeprint.ETOOLARGE {
				t.Fatalf("%q: got %v, want invalid input", body, err)
			}
			return
		}
		for _, s := range []string{v.Code, v.Name} {
			if strings.ContainsRune(s, utf8.RuneError) && !strings.Contains(string(body), "\ufffd") && !strings.Contains(strings.ToLower(string(body)), `\ufffd`) && !strings.Contains(strings.ToLower(string(body)), `\ud`) {
				t.Fatalf("%q decoded to %q: text altered", body, s)
			}
		}
	})
}
