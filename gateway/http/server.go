package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Server is the gateway's HTTP server.
type Server struct {
	g       *gateway.Gateway
	log     *slog.Logger
	tokens  [][32]byte // SHA-256 of each API token
	metrics http.Handler
	srv     *http.Server
	ln      net.Listener
	mux     *http.ServeMux
	closing chan struct{} // closed on Shutdown: ends live-update streams
	link    func() any    // the sync link's state, when there is one
	storage func() any    // the data disk and the last recovery
	backup  func(io.Writer) error

	boardMu    stdsync.Mutex
	boardCache *gateway.Board // the board as of boardGen
	boardGen   uint64
}

// SetLink shows the sync link's state on the LAN page and /healthz.
func (s *Server) SetLink(state func() any) { s.link = state }

func (s *Server) linkState() any {
	if s.link == nil {
		return nil
	}
	return s.link()
}

// NewServer returns a server for the gateway. metrics may be nil.
func NewServer(g *gateway.Gateway, tokens []string, metrics http.Handler, log *slog.Logger) *Server {
	s := &Server{g: g, log: log, metrics: metrics, mux: http.NewServeMux(), closing: make(chan struct{})}
	for _, t := range tokens {
		s.tokens = append(s.tokens, sha256.Sum256([]byte(t)))
	}
	s.routes()
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	s.srv.RegisterOnShutdown(func() { close(s.closing) })
	return s
}

func (s *Server) routes() {
	s.handle("GET /healthz", http.HandlerFunc(s.healthz))
	s.handle("GET /metrics", s.auth(s.metricsHandler))
	s.handle("POST /v1/orders", s.auth(s.api(s.createOrder)))
	s.handle("POST /v1/orders/{order_id}/void", s.auth(s.api(s.voidOrder)))
	s.handle("GET /v1/tasks", s.auth(s.api(s.listTasks)))
	s.handle("GET /v1/tasks/{task_no}", s.auth(s.api(s.getTask)))
	s.handle("GET /v1/tasks/{task_no}/receipts", s.auth(s.api(s.getReceipts)))
	s.handle("POST /v1/tasks/{task_no}/retry", s.auth(s.api(s.retryTask)))
	s.handle("POST /v1/tasks/{task_no}/reprint", s.auth(s.api(s.reprintTask)))
	s.handle("POST /v1/tasks/{task_no}/resolve", s.auth(s.api(s.resolveTask)))
	s.handle("GET /v1/printers", s.auth(s.api(s.listPrinters)))
	s.handle("POST /v1/printers/{printer_id}/acknowledge", s.auth(s.api(s.ackFailover)))
	s.handle("POST /v1/printers/{printer_id}/failback", s.auth(s.api(s.failback)))
	s.handle("POST /v1/stations/{station}/print-stale", s.auth(s.api(s.printStale)))
	s.handle("GET /v1/audit", s.auth(s.api(s.listAudit)))
	s.handle("GET /v1/backup", s.auth(s.api(s.getBackup)))
	s.pageRoutes()
	s.mux.HandleFunc("/", s.notFound)
}

// handle registers "METHOD /path" and answers other methods on the path
// with a JSON 405.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	method, path, _ := strings.Cut(pattern, " ")
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", method)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, method)})
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

// Listen binds addr; Addr then returns the bound address.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	s.ln = ln
	return nil
}

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting requests and waits for those in flight.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// api adapts a handler that returns its error: a coded error becomes the
// status of its code with {"error"}, anything else a logged 500.
func (s *Server) api(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

// auth requires a valid bearer token. Tokens are compared as SHA-256
// hashes in constant time, and every configured token is compared.
func (s *Server) auth(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint"`)
			writeError(w, r, s.log, gateway.Errorf(gateway.EUNAUTHORIZED, "missing bearer token (Authorization: Bearer <token>)"))
			return
		}
		sum := sha256.Sum256([]byte(tok))
		match := 0
		for i := range s.tokens {
			match |= subtle.ConstantTimeCompare(sum[:], s.tokens[i][:])
		}
		if match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint", error="invalid_token"`)
			writeError(w, r, s.log, gateway.Errorf(gateway.EUNAUTHORIZED, "invalid token"))
			return
		}
		h(w, r)
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}

// statuses maps error codes to HTTP statuses.
var statuses = map[string]int{
	gateway.EINVALID:      http.StatusBadRequest,
	gateway.ENOTFOUND:     http.StatusNotFound,
	gateway.ECONFLICT:     http.StatusConflict,
	gateway.EUNAUTHORIZED: http.StatusUnauthorized,
	gateway.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	gateway.EUNAVAILABLE:  http.StatusServiceUnavailable,
	gateway.EINTERNAL:     http.StatusInternalServerError,
}

func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := gateway.ErrorCode(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		code = gateway.EUNAVAILABLE
		err = gateway.Errorf(code, "request cancelled")
	}
	status, ok := statuses[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusInternalServerError {
		log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, status, map[string]string{"error": gateway.ErrorMessage(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do
}

// decode reads a JSON body of at most MaxRequestLen bytes into v. An empty
// body is allowed when optional.
func decode(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	r.Body = http.MaxBytesReader(w, r.Body, storeprint.MaxRequestLen)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return gateway.Errorf(gateway.ETOOLARGE, "request body is larger than %d bytes (1 MiB)", storeprint.MaxRequestLen)
		}
		return gateway.Errorf(gateway.EINVALID, "read request body: %v", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return gateway.Errorf(gateway.EINVALID, "request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return gateway.Errorf(gateway.EINVALID, "malformed JSON: field %q must be a %s", te.Field, te.Type.String())
		}
		return gateway.Errorf(gateway.EINVALID, "malformed JSON: %v", err)
	}
	if dec.More() {
		return gateway.Errorf(gateway.EINVALID, "malformed JSON: unexpected data after the object")
	}
	return nil
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, s.log, gateway.Errorf(gateway.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.g.Health(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "error": gateway.ErrorMessage(err), "storage": s.storageState()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "cloud": s.linkState(), "storage": s.storageState()})
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request) {
	if s.metrics == nil {
		s.notFound(w, r)
		return
	}
	s.metrics.ServeHTTP(w, r)
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) error {
	var o storeprint.Order
	if err := decode(w, r, &o, false); err != nil {
		return err
	}
	res, created, err := s.g.AcceptOrder(r.Context(), &o, storeprint.SourcePOS)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
	return nil
}

func (s *Server) voidOrder(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	res, err := s.g.Void(r.Context(), r.PathValue("order_id"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// taskView is a task as the API shows it.
type taskView struct {
	TaskNo     string            `json:"task_no"`
	Status     storeprint.Status `json:"status"`
	PrinterID  string            `json:"printer_id"`
	Attempt    int               `json:"attempt"`
	LastError  string            `json:"last_error"`
	CreatedAt  time.Time         `json:"created_at"`
	PrintedAt  *time.Time        `json:"printed_at"`
	OrderID    string            `json:"order_id"`
	Station    string            `json:"station"`
	Reason     storeprint.Reason `json:"reason,omitempty"`
	Source     storeprint.Source `json:"source,omitempty"`
	CopyOf     string            `json:"copy_of,omitempty"`
	BackupFrom string            `json:"backup_from,omitempty"`
	Reprint    bool              `json:"reprint,omitempty"`
	NextAt     *time.Time        `json:"next_attempt_at,omitempty"`
	Table      string            `json:"table,omitempty"`
	Items      []storeprint.Item `json:"items"`
}

func viewTask(t *gateway.Task) taskView {
	v := taskView{
		TaskNo: t.TaskNo, Status: t.Status, PrinterID: t.PrinterID, Attempt: t.Attempt,
		LastError: t.LastError, CreatedAt: t.CreatedAt, PrintedAt: t.PrintedAt, OrderID: t.OrderID,
		Station: t.Station, Reason: t.Reason, Source: t.Source, CopyOf: t.CopyOf,
		BackupFrom: t.BackupFrom, Reprint: t.Reprint, Table: t.Table, Items: t.Items,
	}
	if t.Status == storeprint.StatusRetryWait {
		n := t.NextAt
		v.NextAt = &n
	}
	return v
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.g.Task(r.Context(), r.PathValue("task_no"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

func (s *Server) getReceipts(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.g.Receipts(r.Context(), r.PathValue("task_no"))
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []*gateway.Receipt{}
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	limit := 1000
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100000 {
			return gateway.Errorf(gateway.EINVALID, "limit must be a number between 1 and 100000")
		}
		limit = n
	}
	q := r.URL.Query()
	var tasks []*gateway.Task
	var err error
	if q.Has("after") {
		// A cursor over every task, in task_no order.
		if q.Get("status") != "" {
			return gateway.Errorf(gateway.EINVALID, "after pages through every task; it does not combine with status")
		}
		tasks, err = s.g.TasksAfter(r.Context(), q.Get("after"), limit)
	} else {
		tasks, err = s.g.Tasks(r.Context(), storeprint.Status(q.Get("status")), limit)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTasks(tasks))
	return nil
}

func (s *Server) retryTask(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	res, err := s.g.Retry(r.Context(), r.PathValue("task_no"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": viewTask(res.Task), "changed": res.Changed, "message": res.Message})
	return nil
}

func (s *Server) reprintTask(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, false); err != nil {
		return err
	}
	t, err := s.g.Reprint(r.Context(), r.PathValue("task_no"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewTask(t))
	return nil
}

func (s *Server) resolveTask(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Outcome string `json:"outcome"`
		gateway.Actor
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	t, err := s.g.Resolve(r.Context(), r.PathValue("task_no"), body.Outcome, body.Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

func (s *Server) listPrinters(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.g.Printers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ps)
	return nil
}

func (s *Server) ackFailover(w http.ResponseWriter, r *http.Request) error {
	return s.failoverAction(w, r, s.g.AckFailover)
}

func (s *Server) failback(w http.ResponseWriter, r *http.Request) error {
	return s.failoverAction(w, r, s.g.Failback)
}

func (s *Server) failoverAction(w http.ResponseWriter, r *http.Request, fn func(context.Context, string, string, string) (*gateway.Failover, error)) error {
	var a gateway.Actor
	if err := decode(w, r, &a, false); err != nil {
		return err
	}
	f, err := fn(r.Context(), r.PathValue("printer_id"), a.Operator, a.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) printStale(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, false); err != nil {
		return err
	}
	tasks, err := s.g.PrintStale(r.Context(), r.PathValue("station"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTasks(tasks))
	return nil
}

func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return gateway.Errorf(gateway.EINVALID, "after must be a sequence number")
		}
		after = n
	}
	entries, err := s.g.Audit(r.Context(), after, 1000)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []*gateway.AuditEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}
