package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	stdsync "sync"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/authlimit"
)

// Server is the gateway's HTTP server. Set the exported fields, then
// Listen and Serve (or use it as an http.Handler). The services are
// required unless said otherwise.
type Server struct {
	// Config gives the listen address, hostnames, allowed_origins, TLS
	// keys, store id and displays.
	Config *gateway.Config
	// Tokens are the admin tokens (api_tokens).
	Tokens []string
	Logger *slog.Logger // discarded when nil
	// Now is the clock of pairing codes, rate limits and device use
	// (time.Now when nil).
	Now func() time.Time
	// Metrics serves GET /metrics; nil: 404.
	Metrics http.Handler

	Health         HealthService
	Changes        Changes
	OrderService   OrderService
	TaskService    TaskService
	PrinterService PrinterService
	AuditService   AuditService
	DeviceService  DeviceService
	BoardService   BoardService
	DisplayService DisplayService
	// Link, Storage and Backup are optional (set them before Serve):
	// without them /healthz and the board say nothing of the sync link or
	// the disk, and GET /v1/backup answers 404.
	Link    Link
	Storage Storage
	Backup  Backup
	// CloudPRNT serves the Star CloudPRNT endpoint (printerdrivers/cloudprnt)
	// at /v1/cloudprnt; nil: not served.
	CloudPRNT http.Handler
	// Cluster is the node the gateway runs on when its store runs on a
	// cluster (cluster.go); nil when it runs alone.
	Cluster Cluster

	once    stdsync.Once
	log     *slog.Logger
	tokens  [][32]byte // SHA-256 of each admin token (api_tokens)
	srv     *http.Server
	ln      net.Listener
	mux     *http.ServeMux
	closing chan struct{}              // closed on Shutdown: ends live-update streams
	fwd     *http.Server               // serves the requests followers pass on, on a cluster
	routes  []string                   // "METHOD /path" of every route, for the OpenAPI document's tests
	roles   map[string]storeprint.Role // the role each route needs
	allow   map[string][]string        // path → its methods, for a JSON 405

	hosts     *hostCheck
	origins   map[string]bool
	tlsConfig *tls.Config
	tlsPrint  string // SHA-256 fingerprint of the certificate, when serving HTTPS
	pairing   *gateway.Pairing
	badTokens *authlimit.Limiter
	badCodes  *authlimit.Limiter
	touchMu   stdsync.Mutex
	touched   map[string]time.Time // device id → when its last use was stored

	boardMu    stdsync.Mutex
	boardCache *gateway.Board // the board as of boardGen
	boardGen   uint64
}

// Limits of failed authentication per client address.
const (
	// BadTokenBurst bad tokens at once, then one per BadTokenEvery.
	BadTokenBurst = 10
	BadTokenEvery = time.Second
	// BadCodeBurst wrong pairing codes at once, then one per BadCodeEvery:
	// at most 5 a minute.
	BadCodeBurst = 5
	BadCodeEvery = 12 * time.Second
)

// init sets the server up from its fields, once: the routes, the limits
// and the configuration's allowed_origins and hostnames.
func (s *Server) init() {
	s.once.Do(func() {
		s.log = s.Logger
		if s.log == nil {
			s.log = slog.New(slog.DiscardHandler)
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		s.mux, s.closing = http.NewServeMux(), make(chan struct{})
		s.hosts, s.origins = newHostCheck(s.Config), map[string]bool{}
		s.pairing = gateway.NewPairing(s.Now)
		s.badTokens = authlimit.New(BadTokenBurst, BadTokenEvery, s.Now)
		s.badCodes = authlimit.New(BadCodeBurst, BadCodeEvery, s.Now)
		s.touched = map[string]time.Time{}
		for _, t := range s.Tokens {
			s.tokens = append(s.tokens, sha256.Sum256([]byte(t)))
		}
		for _, o := range s.Config.AllowedOrigins {
			s.origins[o] = true
		}
		s.register()
		s.srv = &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		}
		s.srv.RegisterOnShutdown(func() { close(s.closing) })
		if s.Cluster != nil {
			s.serveCluster()
		}
	})
}

// register sets up every route with the role it needs ("" for none).
func (s *Server) register() {
	const none, pos, staff, admin = "", storeprint.RolePOS, storeprint.RoleStaff, storeprint.RoleAdmin
	s.handle("GET /healthz", none, http.HandlerFunc(s.healthz))
	s.handle("GET /openapi.json", none, http.HandlerFunc(serveOpenAPI))
	s.handle("GET /v1/words", none, http.HandlerFunc(serveWords))
	s.handle("GET /metrics", pos, http.HandlerFunc(s.metricsHandler))
	s.handle("GET /v1/me", pos, s.api(s.me))
	s.handle("POST /v1/orders", pos, s.api(s.createOrder))
	s.handle("GET /v1/orders/{order_id}", pos, s.api(s.getOrder))
	s.handle("POST /v1/orders/{order_id}/void", pos, s.api(s.voidOrder))
	s.handle("GET /v1/tasks", pos, s.api(s.listTasks))
	s.handle("GET /v1/tasks/{task_no}", pos, s.api(s.getTask))
	s.handle("GET /v1/tasks/{task_no}/receipts", pos, s.api(s.getReceipts))
	s.handle("POST /v1/tasks/{task_no}/reprint", pos, s.api(s.reprintTask))
	s.handle("POST /v1/tasks/{task_no}/retry", staff, s.api(s.retryTask))
	s.handle("POST /v1/tasks/{task_no}/resolve", staff, s.api(s.resolveTask))
	s.handle("GET /v1/printers", pos, s.api(s.listPrinters))
	s.handle("POST /v1/printers/{printer_id}/acknowledge", staff, s.api(s.ackFailover))
	s.handle("POST /v1/printers/{printer_id}/failback", staff, s.api(s.failback))
	s.handle("POST /v1/printers/{printer_id}/test-page", staff, s.api(s.testPage))
	s.handle("POST /v1/stations/{station}/print-stale", staff, s.api(s.printStale))
	s.handle("GET /v1/audit", staff, s.api(s.listAudit))
	s.handle("GET /v1/board", pos, s.api(s.getBoard))
	s.handle("GET /v1/events", pos, http.HandlerFunc(s.events))
	s.handle("POST /v1/pairing", staff, s.api(s.createPairing))
	s.handle("POST /v1/pair", none, s.api(s.pair))
	s.handle("GET /v1/devices", admin, s.api(s.listDevices))
	s.handle("DELETE /v1/devices/{device_id}", admin, s.api(s.revokeDevice))
	s.handle("GET /v1/backup", admin, s.api(s.getBackup))
	s.pageRoutes()
	s.displayRoutes()
	s.clusterRoutes()
	if s.CloudPRNT != nil {
		s.cloudPRNTRoutes()
	}
	s.mux.HandleFunc("/", s.notFound)
}

// Routes returns "METHOD /path" of every route the server answers, in the
// mux's syntax ("GET /{$}" is the page, "GET /assets/" its files).
func (s *Server) Routes() []string {
	s.init()
	return slices.Clone(s.routes)
}

// RouteRole returns the least role a route needs ("" for none).
func (s *Server) RouteRole(pattern string) storeprint.Role {
	s.init()
	return s.roles[pattern]
}

// handle registers "METHOD /path" behind the role it needs, and answers
// other methods on the path with a JSON 405.
func (s *Server) handle(pattern string, need storeprint.Role, h http.Handler) {
	if need != "" {
		h = s.auth(need, h)
	}
	s.mux.Handle(pattern, h)
	s.routes = append(s.routes, pattern)
	if s.roles == nil {
		s.roles = map[string]storeprint.Role{}
	}
	s.roles[pattern] = need
	method, path, _ := strings.Cut(pattern, " ")
	if s.allow == nil {
		s.allow = map[string][]string{}
	}
	s.allow[path] = append(s.allow[path], method)
	if len(s.allow[path]) > 1 {
		return // the path's 405 is registered already
	}
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		allow := strings.Join(s.allow[path], ", ")
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, allow)})
	})
}

// ServeHTTP implements http.Handler: a request for another Host is
// refused (421) before anything else, then CORS answers preflights from
// the allowed origins.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !s.hosts.ok(r.Host) {
		writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"error": fmt.Sprintf(
			"this gateway does not answer for host %q; use its address, localhost, or a name listed in hostnames", r.Host)})
		return
	}
	if s.cors(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Listen binds addr, with TLS when the configuration asks for it; Addr
// then returns the bound address.
func (s *Server) Listen(addr string) error {
	s.init()
	cfg, print, err := loadTLS(s.Config)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	s.hosts.listening(ln.Addr().String())
	if cfg != nil {
		s.tlsConfig, s.tlsPrint = cfg, print
		ln = tls.NewListener(ln, cfg)
	}
	s.ln = ln
	return nil
}

// TLSFingerprint is the SHA-256 fingerprint of the certificate served
// (AB:CD:...), empty for plain HTTP.
func (s *Server) TLSFingerprint() string { return s.tlsPrint }

// URL is the server's base URL on its bound address.
func (s *Server) URL() string {
	scheme := "http"
	if s.tlsConfig != nil {
		scheme = "https"
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	if s.fwd != nil {
		go s.fwd.Serve(s.Cluster.Forwarded())
	}
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting requests and waits for those in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	return s.srv.Shutdown(ctx)
}

// api adapts a handler that returns its error: a coded error becomes the
// status of its code with {"error"}, anything else a logged 500.
func (s *Server) api(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

// auth requires a valid bearer token whose role allows need. The token
// is checked first: a valid one is served whatever other requests from
// its address sent. Bad tokens are counted per client address and logged
// without the token; past the limit a bad token is answered 429 with
// Retry-After instead of 401.
func (s *Server) auth(need storeprint.Role, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := authlimit.Addr(r)
		tok, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint"`)
			writeError(w, r, s.log, gateway.Errorf(gateway.EUNAUTHORIZED, "missing bearer token (Authorization: Bearer <token>)"))
			return
		}
		p, err := s.authenticate(r.Context(), tok)
		if gateway.ErrorCode(err) == gateway.EUNAUTHORIZED {
			wait := s.badTokens.Wait(addr)
			limited := s.badTokens.Fail(addr)
			s.log.Warn("bad token", "addr", addr, "method", r.Method, "path", r.URL.Path, "rate_limited", limited || wait > 0)
			if wait > 0 {
				w.Header().Set("Retry-After", authlimit.RetryAfter(wait))
				writeError(w, r, s.log, gateway.Errorf(gateway.ETOOMANY, "too many bad tokens from %s; try again in %s", addr, authlimit.RetryAfter(wait)+"s"))
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint", error="invalid_token"`)
		}
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		if !p.Role.Allows(need) {
			writeError(w, r, s.log, gateway.Errorf(gateway.EFORBIDDEN, "%s %s needs a %s token; this one is %s", r.Method, r.Pattern[strings.IndexByte(r.Pattern, ' ')+1:], need, p.Role))
			return
		}
		s.touch(r.Context(), p)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

type principalKey struct{}

// principal is the request's authenticated token.
func principal(r *http.Request) *gateway.Principal {
	p, _ := r.Context().Value(principalKey{}).(*gateway.Principal)
	return p
}

// authenticate compares the token with every admin token (as SHA-256
// hashes, in constant time), then looks it up among the devices.
func (s *Server) authenticate(ctx context.Context, tok string) (*gateway.Principal, error) {
	sum := sha256.Sum256([]byte(tok))
	match := 0
	for i := range s.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], s.tokens[i][:])
	}
	if match == 1 {
		return &gateway.Principal{Role: storeprint.RoleAdmin, Name: "admin"}, nil
	}
	d, err := s.DeviceService.AuthenticateDevice(ctx, tok)
	if err != nil {
		return nil, err
	}
	return &gateway.Principal{Role: d.Role, DeviceID: d.ID, Name: d.Name, Display: d.Display}, nil
}

// touch stores a device's last use, once a minute at most.
func (s *Server) touch(ctx context.Context, p *gateway.Principal) {
	if p.DeviceID == "" {
		return
	}
	now := s.Now()
	s.touchMu.Lock()
	last, ok := s.touched[p.DeviceID]
	if ok && now.Sub(last) < time.Minute {
		s.touchMu.Unlock()
		return
	}
	s.touched[p.DeviceID] = now
	s.touchMu.Unlock()
	if err := s.DeviceService.TouchDevice(ctx, p.DeviceID, now); err != nil {
		s.log.Warn("record the use of a device", "device_id", p.DeviceID, "err", err)
	}
}

// statuses maps error codes to HTTP statuses.
var statuses = map[string]int{
	gateway.EINVALID:      http.StatusBadRequest,
	gateway.ENOTFOUND:     http.StatusNotFound,
	gateway.ECONFLICT:     http.StatusConflict,
	gateway.EUNAUTHORIZED: http.StatusUnauthorized,
	gateway.EFORBIDDEN:    http.StatusForbidden,
	gateway.ETOOMANY:      http.StatusTooManyRequests,
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
	if !utf8.Valid(b) {
		return gateway.Errorf(gateway.EINVALID, "request body is not valid UTF-8 (at byte %d): text is refused, not altered", invalidAt(b))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return gateway.Errorf(gateway.EINVALID, "request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return gateway.Errorf(gateway.EINVALID, "%s", storeprint.TypeError(b, te).Error())
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return gateway.Errorf(gateway.EINVALID, "%s", storeprint.UnknownField(b, err).Error())
		}
		return gateway.Errorf(gateway.EINVALID, "malformed JSON: %v", err)
	}
	if dec.More() {
		return gateway.Errorf(gateway.EINVALID, "malformed JSON: unexpected data after the object")
	}
	return nil
}

// invalidAt is the offset of b's first byte that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, s.log, gateway.Errorf(gateway.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.Health.Health(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "error": gateway.ErrorMessage(err), "storage": s.storageState()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "cloud": s.linkState(r.Context()), "storage": s.storageState()})
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request) {
	if s.Metrics == nil {
		s.notFound(w, r)
		return
	}
	s.Metrics.ServeHTTP(w, r)
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) error {
	var o storeprint.Order
	if err := decode(w, r, &o, false); err != nil {
		return err
	}
	res, created, err := s.OrderService.AcceptOrder(r.Context(), &o, storeprint.SourcePOS)
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

func (s *Server) getOrder(w http.ResponseWriter, r *http.Request) error {
	o, err := s.OrderService.Order(r.Context(), r.PathValue("order_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) voidOrder(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	res, err := s.OrderService.Void(r.Context(), r.PathValue("order_id"), a)
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
	// Word is what people read about the task: why it needs a person, or
	// where it is (GET /v1/words says it in their language).
	Word storeprint.Word `json:"word"`
	// WaitedS is how long it has waited since it was accepted, in seconds
	// (on the LAN page's board only).
	WaitedS *int64 `json:"waited_s,omitempty"`
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
	v.Word = storeprint.StatusWord(t.Status)
	if t.Reason != "" && (t.Status == storeprint.StatusAttention || t.Status == storeprint.StatusFailed) {
		v.Word = storeprint.ReasonWord(t.Reason)
	}
	return v
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.TaskService.Task(r.Context(), r.PathValue("task_no"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

func (s *Server) getReceipts(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.TaskService.Receipts(r.Context(), r.PathValue("task_no"))
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
		tasks, err = s.TaskService.TasksAfter(r.Context(), q.Get("after"), limit)
	} else {
		tasks, err = s.TaskService.Tasks(r.Context(), storeprint.Status(q.Get("status")), limit)
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
	res, err := s.TaskService.Retry(r.Context(), r.PathValue("task_no"), a)
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
	t, err := s.TaskService.Reprint(r.Context(), r.PathValue("task_no"), a)
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
	t, err := s.TaskService.Resolve(r.Context(), r.PathValue("task_no"), body.Outcome, body.Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

func (s *Server) listPrinters(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.PrinterService.Printers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ps)
	return nil
}

func (s *Server) ackFailover(w http.ResponseWriter, r *http.Request) error {
	return s.failoverAction(w, r, s.PrinterService.AckFailover)
}

func (s *Server) failback(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		gateway.Actor
		Force bool `json:"force"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	f, err := s.PrinterService.Failback(r.Context(), r.PathValue("printer_id"), body.Operator, body.Reason, body.Force)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
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
	tasks, err := s.TaskService.PrintStale(r.Context(), r.PathValue("station"), a)
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
	entries, err := s.AuditService.Audit(r.Context(), after, 1000)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []*gateway.AuditEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}
