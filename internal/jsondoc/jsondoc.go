package jsondoc

import (
	"encoding/json"
	"net/http"

	"github.com/storeprint/storeprint"
)

// Handler serves b as JSON, to be asked for again each time (a browser
// keeps no stale copy after an upgrade).
func Handler(b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
	})
}

// Words serves the catalogue of what people read, as JSON: word →
// language → text. The LAN page and the HQ dashboard say every reason
// and printer state from it, in the same words.
var Words = Handler(words())

func words() []byte {
	b, err := json.Marshal(storeprint.Catalogue)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return b
}
