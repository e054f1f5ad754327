package http

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/internal/authlimit"
	"github.com/storeprint/storeprint/internal/jsondoc"
)

// ShutdownTimeout bounds how long Close waits for requests in flight.
const ShutdownTimeout = 10 * time.Second

// Pinger checks a dependency for /healthz.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Server is the cloud's HTTP server. Set the exported fields, then Open.
type Server struct {
	Addr       string // listen address, e.g. "127.0.0.1:0"
	AdminToken string // the operator's token; empty disables the admin token
	Logger     *slog.Logger

	Health         Pinger
	TenantService  cloud.TenantService
	StoreService   cloud.StoreService
	GatewayService cloud.GatewayService
	OrderService   cloud.OrderService
	TaskService    cloud.TaskService
	CommandService cloud.CommandService
	AuditService   cloud.AuditService
	DeviceService  cloud.DeviceService
	LinkService    cloud.LinkService
	// DashboardService answers the HQ dashboard at / (see page.go).
	DashboardService cloud.DashboardService
	// Sync serves the gateways' websocket link at /v1/sync (sync/server).
	Sync http.Handler
	// CloudPRNTService serves CloudPRNT printers of stores without a
	// gateway (see cloudprnt.go); nil: none.
	CloudPRNTService cloud.CloudPRNTService

	// MetricsAddr, when set, serves /metrics there without a token instead
	// of on Addr behind the admin token (e.g. a port only Prometheus
	// reaches).
	MetricsAddr string
	// Now is the clock of the failed-authentication limit (time.Now when
	// nil).
	Now func() time.Time
	// Registry, when set, is the node's registry (cloud/prometheus): the
	// HTTP metrics join it and /metrics serves it whole. When nil the
	// server makes its own, with the Go and process collectors.
	Registry *prometheus.Registry

	adminHash     []byte
	ln            net.Listener
	server        *http.Server
	metricsLn     net.Listener
	metricsServer *http.Server
	metrics       *metrics
	registry      *prometheus.Registry
	badTokens     *authlimit.Limiter
	routes        []string
}

// Limits of bad tokens per client address: BadTokenBurst at once, then
// one per BadTokenEvery, past that 429.
const (
	BadTokenBurst = 10
	BadTokenEvery = time.Second
)

// NewServer returns a server with a quiet logger.
func NewServer() *Server {
	return &Server{Logger: slog.New(slog.DiscardHandler)}
}

// Open listens on Addr and serves in the background.
func (s *Server) Open() error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Addr, err)
	}
	s.ln = ln
	s.server = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := s.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("http server stopped", "err", err)
		}
	}()
	if s.MetricsAddr != "" {
		mln, err := net.Listen("tcp", s.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s (--metrics-listen): %w", s.MetricsAddr, err)
		}
		s.metricsLn = mln
		s.metricsServer = &http.Server{
			Handler:           promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
		}
		go func() {
			if err := s.metricsServer.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.Logger.Error("metrics server stopped", "err", err)
			}
		}()
	}
	return nil
}

// MetricsURL is the base URL of the metrics listener, when there is one.
func (s *Server) MetricsURL() string {
	if s.metricsLn == nil {
		return ""
	}
	return "http://" + s.metricsLn.Addr().String()
}

// Close stops accepting requests and waits, bounded, for those in flight.
func (s *Server) Close() error {
	if s.server == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if s.metricsServer != nil {
		_ = s.metricsServer.Close() // scrapes hold nothing worth waiting for
	}
	if err := s.server.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down http server: %w", err)
	}
	return nil
}

// Port returns the port Open listens on (useful with ":0").
func (s *Server) Port() int {
	if s.ln == nil {
		return 0
	}
	return s.ln.Addr().(*net.TCPAddr).Port
}

// URL returns the server's base URL on the loopback or listen address.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	host, _, _ := net.SplitHostPort(s.ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(s.Port()))
}

// Handler returns the API as an http.Handler.
func (s *Server) Handler() http.Handler {
	if s.AdminToken != "" {
		sum := sha256.Sum256([]byte(s.AdminToken))
		s.adminHash = sum[:]
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	s.badTokens = authlimit.New(BadTokenBurst, BadTokenEvery, s.Now)
	reg := s.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s.metrics = newMetrics(reg)
	s.registry = reg

	mux := http.NewServeMux()
	s.routes = nil
	methods := map[string][]string{} // path → its methods, for a JSON 405
	plain := func(pattern string, h http.Handler) {
		mux.Handle(pattern, h)
		s.routes = append(s.routes, pattern)
		method, path, _ := strings.Cut(pattern, " ")
		methods[path] = append(methods[path], method)
	}
	api := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		plain(pattern, s.authenticate(checkIDs(h)))
	}
	plain("GET /healthz", http.HandlerFunc(s.handleHealth))
	plain("GET /openapi.json", jsondoc.Handler(OpenAPI))
	plain("GET /v1/words", jsondoc.Words)
	if s.Sync != nil {
		plain("GET /v1/sync", s.Sync)
	}
	if s.MetricsAddr == "" {
		scrape := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		api("GET /metrics", func(w http.ResponseWriter, r *http.Request) error {
			if _, err := cloud.RequireAdmin(r.Context()); err != nil {
				return err
			}
			scrape.ServeHTTP(w, r)
			return nil
		})
	}
	api("POST /v1/admin/tenants", s.handleCreateTenant)
	api("POST /v1/admin/tenants/{tenant_id}/tokens", s.handleCreateTenantToken)
	api("GET /v1/admin/tenants/{tenant_id}/tokens", s.handleFindTenantTokens)
	api("DELETE /v1/admin/tenants/{tenant_id}/tokens/{token_id}", s.handleRevokeTenantToken)
	api("POST /v1/admin/stores", s.handleCreateStore)
	api("POST /v1/admin/stores/{store_id}/gateways", s.handleCreateGateway)
	api("DELETE /v1/admin/gateways/{gateway_id}", s.handleRevokeGateway)
	api("GET /v1/stores", s.handleFindStores)
	api("POST /v1/stores/{store_id}/orders", s.handleCreateOrder)
	api("GET /v1/stores/{store_id}/orders/{order_id}", s.handleFindOrder)
	api("GET /v1/stores/{store_id}/tasks", s.handleFindTasks)
	api("GET /v1/stores/{store_id}/tasks/{task_no}", s.handleFindTask)
	api("POST /v1/stores/{store_id}/tasks/{task_no}/retry", s.handleCommand(storeprint.CommandRetry))
	api("POST /v1/stores/{store_id}/tasks/{task_no}/reprint", s.handleCommand(storeprint.CommandReprint))
	api("POST /v1/stores/{store_id}/printers/{printer_id}/failover/ack", s.handleCommand(storeprint.CommandFailoverAck))
	api("GET /v1/stores/{store_id}/alerts", s.handleFindAlerts)
	api("GET /v1/stores/{store_id}/devices", s.handleFindDevices)
	api("DELETE /v1/stores/{store_id}/devices/{device_id}", s.handleCommand(storeprint.CommandDeviceRevoke))
	api("GET /v1/stores/{store_id}/link", s.handleFindLink)
	api("POST /v1/stores/{store_id}/alerts/{alert_id}/ack", s.handleAcknowledgeAlert)
	api("GET /v1/audit", s.handleFindAudit)
	api("GET /v1/dashboard", s.handleDashboard)
	api("GET /v1/search", s.handleSearch)
	api("GET /v1/stores/{store_id}/bump-times", s.handleBumpTimes)
	s.cloudprntRoutes(plain, api)
	s.pageRoutes(mux)
	s.routes = append(s.routes, "GET /{$}", "GET /assets/")
	for path, ms := range methods {
		allow := strings.Join(ms, ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, allow)})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, storeprint.Errorf(storeprint.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path))
	})
	return s.observe(mux)
}

// Routes returns "METHOD /path" of every route the server answers, in the
// ServeMux's syntax; set after Handler or Open.
func (s *Server) Routes() []string { return slices.Clone(s.routes) }

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.Health != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.Health.Ping(ctx); err != nil {
			s.Logger.Warn("health check failed", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": "database unavailable"})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// observe counts, times and logs every request by its route pattern.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// Every answer says what it is: no browser guesses another type.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		route := r.Pattern // set by the mux on r
		if route == "" || route == "/" {
			route = "unmatched"
		}
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		s.metrics.duration.WithLabelValues(route).Observe(d.Seconds())
		// The path and status only: never headers, bodies or tokens.
		s.Logger.Info("request", append([]any{"method", r.Method, "path", r.URL.Path, "route", route,
			"status", sw.status, "duration", d.Round(time.Microsecond)}, idAttrs(r)...)...)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack lets the sync link take over the connection.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.status = http.StatusSwitchingProtocols
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
