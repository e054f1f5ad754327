package http

import (
	_ "embed"
	"encoding/json"
	"net/http"

	"github.com/storeprint/storeprint"
)

// OpenAPI is the POS API's OpenAPI 3.1 document, served at /openapi.json
// without a token. Tests check every route of the server against it and
// every exchange of the end-to-end tests.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(OpenAPI)
}

// words is the catalogue of what people read, as JSON: word → language →
// text. The LAN page says every reason and printer state from it.
var words = func() []byte {
	b, err := json.Marshal(storeprint.Catalogue)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return b
}()

func serveWords(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(words)
}
