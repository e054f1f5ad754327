package http

import _ "embed"

// OpenAPI is the POS API's OpenAPI 3.1 document, served at /openapi.json
// without a token. Tests check every route of the server against it and
// every exchange of the end-to-end tests.
//
//go:embed openapi.json
var OpenAPI []byte
