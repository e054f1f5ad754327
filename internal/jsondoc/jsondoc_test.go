package jsondoc_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/jsondoc"
)

// get serves GET / from h and returns the answer with its body.
func get(t *testing.T, h http.Handler) (*http.Response, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("got Content-Type %q, want application/json", got)
	}
	if got := res.Header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("got Cache-Control %q, want no-cache", got)
	}
	return res, body
}

func TestHandler(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"openapi":"3.1.0"}`)
	res, body := get(t, jsondoc.Handler(doc))
	if res.StatusCode != http.StatusOK || string(body) != string(doc) {
		t.Errorf("got %d %s, want 200 %s", res.StatusCode, body, doc)
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	_, body := get(t, jsondoc.Words)
	var got map[storeprint.Word]map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("got %s: %v", body, err)
	}
	if len(got) != len(storeprint.Catalogue) {
		t.Fatalf("got %d words, want the catalogue's %d", len(got), len(storeprint.Catalogue))
	}
	for w, langs := range storeprint.Catalogue {
		for lang, text := range langs {
			if got[w][lang] != text {
				t.Errorf("got %s in %s %q, want %q", w, lang, got[w][lang], text)
			}
		}
	}
}
