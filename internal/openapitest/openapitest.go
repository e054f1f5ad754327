package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	stdsync "sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

func init() {
	// The pages, their assets and the metrics are text; their schemas say
	// only that.
	for _, ct := range []string{"text/html", "text/css", "text/javascript", "image/svg+xml", "application/openmetrics-text"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// Checker validates exchanges against one document.
type Checker struct {
	Doc    *openapi3.T
	name   string
	router routers.Router

	mu   stdsync.Mutex
	seen map[string]int // "METHOD /path" of the document → exchanges checked
}

// New loads and validates a document; name says which in errors.
func New(name string, spec []byte) (*Checker, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: load: %w", name, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("%s: not a valid OpenAPI document: %w", name, err)
	}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: router: %w", name, err)
	}
	return &Checker{Doc: doc, name: name, router: r, seen: map[string]int{}}, nil
}

// MustNew is New for package variables of tests; it panics on a broken
// document.
func MustNew(name string, spec []byte) *Checker {
	c, err := New(name, spec)
	if err != nil {
		panic(err)
	}
	return c
}

// Operations lists "METHOD /path" of every operation in the document.
func (c *Checker) Operations() []string {
	var out []string
	for path, item := range c.Doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// Seen returns how many exchanges were checked per operation.
func (c *Checker) Seen() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}

var muxWildcard = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}`)

// FromMux turns a net/http ServeMux pattern ("GET /v1/tasks/{task_no}",
// "GET /{$}", "GET /assets/") into the document's "METHOD /path" form;
// prefix patterns end in {file}.
func FromMux(pattern string) string {
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{$}", "")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "{file}"
	}
	path = muxWildcard.ReplaceAllString(path, "{$1}")
	return method + " " + path
}

// Operation returns the document's operation for a ServeMux pattern, or
// nil.
func (c *Checker) Operation(pattern string) *openapi3.Operation {
	method, path, _ := strings.Cut(FromMux(pattern), " ")
	item := c.Doc.Paths.Value(path)
	if item == nil {
		return nil
	}
	return item.GetOperation(method)
}

// Missing returns the server routes (ServeMux patterns) that the
// document lacks, and the document's operations no route serves.
func (c *Checker) Missing(routes []string) (undocumented, unserved []string) {
	ops := c.Operations()
	served := map[string]bool{}
	for _, r := range routes {
		op := FromMux(r)
		served[op] = true
		if !slices.Contains(ops, op) {
			undocumented = append(undocumented, r)
		}
	}
	for _, op := range ops {
		if !served[op] {
			unserved = append(unserved, op)
		}
	}
	return undocumented, unserved
}

var authOptions = &openapi3filter.Options{
	IncludeResponseStatus: true,
	MultiError:            false,
	AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
		h := in.RequestValidationInput.Request.Header.Get("Authorization")
		if s, tok, ok := strings.Cut(h, " "); !ok || !strings.EqualFold(s, "Bearer") || tok == "" {
			return errors.New("no bearer token")
		}
		return nil
	},
}

// Check validates one exchange: the request (with its body), and the
// answer's status, headers and body (nil for a stream). A request the
// document does not allow must be answered 4xx; an operation the document
// lacks must be answered 404 or 405 with an error body.
func (c *Checker) Check(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	ctx := context.Background()
	r := req.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }
	r.ContentLength = int64(len(reqBody))
	if len(reqBody) > 0 && !isJSON(r.Header.Get("Content-Type")) {
		// The servers read every body as JSON, whatever the Content-Type
		// says; the document describes it as such.
		r.Header.Set("Content-Type", "application/json")
	}
	what := fmt.Sprintf("%s: %s %s → %d", c.name, req.Method, req.URL.RequestURI(), status)
	route, params, err := c.router.FindRoute(r)
	if err != nil {
		if (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) && isErrorBody(header, body) {
			return nil // the server does not answer it either
		}
		return fmt.Errorf("%s: the document has no such operation (%v), but the server answered it", what, err)
	}
	c.mu.Lock()
	c.seen[route.Method+" "+route.Path]++
	c.mu.Unlock()
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: authOptions}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		if status < 400 || status >= 500 {
			return fmt.Errorf("%s: the document refuses the request (%v), but the server accepted it", what, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: authOptions}
	if body == nil {
		opts := *authOptions
		opts.ExcludeResponseBody = true
		out.Options = &opts
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("%s: the answer does not match the document: %v\nbody: %.600s", what, err, body)
	}
	return nil
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func isErrorBody(h http.Header, body []byte) bool {
	var e struct {
		Error string `json:"error"`
	}
	return isJSON(h.Get("Content-Type")) && json.Unmarshal(body, &e) == nil && e.Error != ""
}

// streaming answers are checked without their body, which never ends.
func streaming(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// Transport returns a RoundTripper that checks every exchange through
// base (http.DefaultTransport when nil). A failed check is the request's
// error.
func (c *Checker) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, base: base}
}

type transport struct {
	c    *Checker
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if streaming(resp.Header) {
		if err := t.c.Check(req, reqBody, resp.StatusCode, resp.Header, nil); err != nil {
			resp.Body.Close()
			return nil, err
		}
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if req.Method == http.MethodHead {
		return resp, nil
	}
	if err := t.c.Check(req, reqBody, resp.StatusCode, resp.Header, body); err != nil {
		return nil, err
	}
	return resp, nil
}

// Hosts checks each exchange against the document of the server it goes
// to, known by host:port; exchanges with other hosts pass unchecked.
type Hosts struct {
	base http.RoundTripper
	mu   stdsync.Mutex
	m    map[string]http.RoundTripper
}

// NewHosts returns an empty set of servers whose requests go through base
// (http.DefaultTransport when nil).
func NewHosts(base http.RoundTripper) *Hosts {
	if base == nil {
		base = http.DefaultTransport
	}
	return &Hosts{base: base, m: map[string]http.RoundTripper{}}
}

// Add checks the exchanges with the server at baseURL against c.
func (h *Hosts) Add(baseURL string, c *Checker) {
	u, err := url.Parse(baseURL)
	if err != nil {
		panic(fmt.Sprintf("openapitest: base URL %q: %v", baseURL, err))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[u.Host] = c.Transport(h.base)
}

// RoundTrip implements http.RoundTripper.
func (h *Hosts) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	rt := h.m[req.URL.Host]
	h.mu.Unlock()
	if rt == nil {
		rt = h.base
	}
	return rt.RoundTrip(req)
}
