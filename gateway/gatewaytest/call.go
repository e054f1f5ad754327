package gatewaytest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/internal/openapitest"
)

// API checks every exchange of the tests against the POS API's OpenAPI
// document.
var API = openapitest.MustNew("gateway", gwhttp.OpenAPI)

// Client keeps connections alive like a POS terminal does; every request
// and answer must match the OpenAPI document.
var Client = &http.Client{Timeout: 30 * time.Second, Transport: API.Transport(&http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute})}

// Call sends a request with Token through Client and decodes a JSON
// answer into out, unless out is nil. It returns the answer's status.
func Call(t testing.TB, method, url string, body any, out any) int {
	t.Helper()
	return CallToken(t, Token, method, url, body, out)
}

// CallToken is Call with another token; with "" it sends none.
func CallToken(t testing.TB, tok, method, url string, body any, out any) int {
	t.Helper()
	return CallWith(t, Client, tok, method, url, body, out)
}

// CallWith is CallToken through another client. A body of type string or
// []byte is sent as it is, any other as JSON.
func CallWith(t testing.TB, c *http.Client, tok, method, url string, body any, out any) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, url, data, err)
		}
	}
	return resp.StatusCode
}

// NewJSONRequest is a request with body as JSON and Token, for a test
// that sends it itself (from many goroutines, say).
func NewJSONRequest(method, url string, body any) (*http.Request, error) {
	j, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(j))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	return req, nil
}
