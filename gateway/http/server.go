package http

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/authlimit"
	"github.com/storeprint/storeprint/internal/jsondoc"
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
	s.handle("GET /openapi.json", none, jsondoc.Handler(OpenAPI))
	s.handle("GET /v1/words", none, jsondoc.Words)
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

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, s.log, storeprint.Errorf(storeprint.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.Health.Health(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "error": storeprint.ErrorMessage(err), "storage": s.storageState()})
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
