package http

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the cloud API's OpenAPI 3.1 document, served at /openapi.json
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
