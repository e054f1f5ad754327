package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/http"
	"github.com/storeprint/storeprint/cloud/postgres"
	"github.com/storeprint/storeprint/cloud/prometheus"
	"github.com/storeprint/storeprint/internal/cli"
	"github.com/storeprint/storeprint/internal/version"
	"github.com/storeprint/storeprint/schema"
	syncserver "github.com/storeprint/storeprint/sync/server"
)

const usage = `storeprint-cloud: the cloud service (PostgreSQL).

Usage:
  storeprint-cloud run [flags]      apply the migrations, then serve the API
  storeprint-cloud migrate [flags]  apply the migrations and exit
  storeprint-cloud version          print the version (also --version)

Run 'storeprint-cloud <command> --help' for a command's flags.
`

const runUsage = `Usage: storeprint-cloud run [flags]

Applies the database migrations (unless --migrate=false), then serves the
admin and tenant API, the HQ dashboard and the gateways' sync link until it
is interrupted (Ctrl-C, SIGTERM). Logs go to standard error (under the
packaged systemd unit: journalctl -u storeprint-cloud).

Flags:
  --listen ADDR         address to serve on (default 127.0.0.1:9090); the bound
                        address is printed at start, so 127.0.0.1:0 works
  --admin-token TOKEN   the operator's admin token (use 16 or more random characters)
                        (prefer STOREPRINT_ADMIN_TOKEN: a flag shows in ps)
  --metrics-listen ADDR serve /metrics on ADDR without a token (a port only
                        Prometheus reaches); without it /metrics is on --listen
                        and needs the admin token
  --database-url URL    the PostgreSQL database (postgres://... or key=value)
  --migrate=false       run: do not apply the migrations at start
  --alert-ttl D         how long an alert nobody resolved asks for a person on the
                        dashboard before it expires into the store's history
                        (default 24h; Go units or days, e.g. 90m, 2d)
  --log-format F        text (default) or json: one JSON object a line with time,
                        level, msg and the ids (docs/operations.md, "Logs")

Environment (a flag wins over its variable):
  STOREPRINT_LISTEN, STOREPRINT_ADMIN_TOKEN, STOREPRINT_METRICS_LISTEN, STOREPRINT_MIGRATE,
  STOREPRINT_ALERT_TTL, STOREPRINT_LOG_FORMAT, STOREPRINT_DATABASE_URL
  (else DATABASE_URL);
  STOREPRINT_DEBUG=1 logs at debug level (e.g. every ingested batch)

Exit status: 0 stopped, 1 failed, 2 a flag or setting is missing or wrong.
`

const migrateUsage = `Usage: storeprint-cloud migrate [--database-url URL] [--log-format F]

Applies the numbered schema migrations to the database and prints the
schema version; applying them again changes nothing.

Flags:
  --database-url URL  the PostgreSQL database (postgres://... or key=value)
                      [$STOREPRINT_DATABASE_URL, else $DATABASE_URL]
  --log-format F      text (default) or json [$STOREPRINT_LOG_FORMAT]
`

const versionUsage = `Usage: storeprint-cloud version

Prints the program's version, the Go version it was built with and its
platform. Also: storeprint-cloud --version.
`

// MinAdminTokenLen is the shortest admin token run takes without a warning.
const MinAdminTokenLen = 16

// errHelp is returned by ParseFlags when help was asked for and printed:
// the program exits 0.
var errHelp = cli.ErrHelp

// Main is the cloud program.
type Main struct {
	Command       string
	Listen        string
	MetricsListen string
	AdminToken    string
	DatabaseURL   string
	Migrate       bool
	AlertTTL      time.Duration
	LogFormat     string

	// PresenceEvery is how often the sync server writes its links'
	// presence; zero means cloud.PresenceEvery. Tests change it.
	PresenceEvery time.Duration

	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string

	DB   *postgres.DB
	HTTP *http.Server
	Sync *syncserver.Server

	stopListener context.CancelFunc

	ready chan struct{}
}

// NewMain returns a program reading the process's environment.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, ready: make(chan struct{})}
}

// ParseFlags reads the command and its flags; each flag's default comes
// from its STOREPRINT_* variable.
func (m *Main) ParseFlags(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, usage)
		return errors.New("a command is required: run or migrate")
	}
	m.Command = args[0]
	switch m.Command {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(m.Stdout, usage)
		return errHelp
	case "-version", "--version", "version":
		m.Command = "version"
		if len(args) > 1 {
			if a := args[1]; a == "-h" || a == "-help" || a == "--help" {
				fmt.Fprint(m.Stdout, versionUsage)
				return errHelp
			}
			return fmt.Errorf("version: unexpected argument %q", args[1])
		}
		return nil
	case "run", "migrate":
	default:
		return fmt.Errorf("unknown command %q (run, migrate or version)", m.Command)
	}
	help := runUsage
	if m.Command == "migrate" {
		help = migrateUsage
	}
	migrate := true
	if v := m.Getenv("STOREPRINT_MIGRATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("STOREPRINT_MIGRATE: %q is not true or false", v)
		}
		migrate = b
	}
	m.AlertTTL = cloud.DefaultAlertTTL
	if v := m.Getenv("STOREPRINT_ALERT_TTL"); v != "" {
		d, err := parseTTL(v)
		if err != nil {
			return fmt.Errorf("STOREPRINT_ALERT_TTL: %w", err)
		}
		m.AlertTTL = d
	}
	fs := flag.NewFlagSet(m.Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&m.Listen, "listen", m.env("STOREPRINT_LISTEN", "127.0.0.1:9090"), "")
	fs.StringVar(&m.AdminToken, "admin-token", m.env("STOREPRINT_ADMIN_TOKEN", ""), "")
	fs.StringVar(&m.MetricsListen, "metrics-listen", m.env("STOREPRINT_METRICS_LISTEN", ""), "")
	fs.StringVar(&m.DatabaseURL, "database-url", m.env("STOREPRINT_DATABASE_URL", m.env("DATABASE_URL", "")), "")
	fs.BoolVar(&m.Migrate, "migrate", migrate, "")
	fs.Func("alert-ttl", "", func(v string) error {
		d, err := parseTTL(v)
		m.AlertTTL = d
		return err
	})
	fs.StringVar(&m.LogFormat, "log-format", m.env("STOREPRINT_LOG_FORMAT", "text"), "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(m.Stdout, help)
			return errHelp
		}
		return fmt.Errorf("%s: %w", m.Command, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", m.Command, fs.Arg(0))
	}
	if m.LogFormat != "text" && m.LogFormat != "json" {
		return fmt.Errorf("--log-format: %q is not text or json", m.LogFormat)
	}
	if m.DatabaseURL == "" {
		return fmt.Errorf("%s: --database-url (or STOREPRINT_DATABASE_URL or DATABASE_URL) is required", m.Command)
	}
	if m.Command == "run" {
		if m.AdminToken == "" {
			return errors.New("run: --admin-token (or STOREPRINT_ADMIN_TOKEN) is required")
		}
	}
	return nil
}

// parseTTL reads a positive duration in Go's units or in days ("2d").
func parseTTL(v string) (time.Duration, error) {
	d, err := cloud.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 24h, 90m or 2d", v)
	}
	return d, nil
}

func (m *Main) env(k, def string) string {
	if v := m.Getenv(k); v != "" {
		return v
	}
	return def
}

func (m *Main) logger() *slog.Logger {
	if m.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(m.Stderr, &slog.HandlerOptions{Level: m.logLevel()}))
	}
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: m.logLevel()}))
}

// Stopped reports the error the program stops with on Stderr: on a line
// of its own, or, with --log-format json, as a JSON log line like every
// other, so that a log collector reads the last line too.
func (m *Main) Stopped(err error) {
	cli.Stopped(m.Stderr, m.logger, m.LogFormat, "storeprint-cloud", err)
}

// Ready is closed once run serves requests.
func (m *Main) Ready() <-chan struct{} { return m.ready }

// Run runs the command; run serves until ctx ends.
func (m *Main) Run(ctx context.Context) error {
	if m.Command == "version" {
		fmt.Fprintln(m.Stdout, version.Line("storeprint-cloud"))
		return nil
	}
	if m.Command == "migrate" {
		v, err := schema.Up(ctx, m.DatabaseURL)
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "schema at version %d\n", v)
		return nil
	}
	log := m.logger()
	if len(m.AdminToken) < MinAdminTokenLen {
		log.Warn("the admin token is short and easy to guess; use 16 or more random characters", "length", len(m.AdminToken))
	}
	if m.Migrate {
		v, err := schema.Up(ctx, m.DatabaseURL)
		if err != nil {
			return err
		}
		log.Info("schema migrated", "version", v)
	}
	db, err := postgres.Open(ctx, m.DatabaseURL)
	if err != nil {
		return err
	}
	m.DB = db

	metrics := prometheus.New()
	s := http.NewServer()
	s.Registry = metrics.Registry()
	s.Addr = m.Listen
	s.MetricsAddr = m.MetricsListen
	s.AdminToken = m.AdminToken
	s.Logger = log
	s.Health = db
	s.TenantService = postgres.NewTenantService(db)
	stores := postgres.NewStoreService(db)
	stores.AlertTTL = m.AlertTTL
	s.StoreService = stores
	s.GatewayService = postgres.NewGatewayService(db)
	s.OrderService = postgres.NewOrderService(db)
	s.TaskService = postgres.NewTaskService(db)
	s.CommandService = postgres.NewCommandService(db)
	s.AuditService = postgres.NewAuditService(db)
	s.DeviceService = postgres.NewDeviceService(db)
	s.LinkService = postgres.NewLinkService(db)
	dashboard := postgres.NewDashboardService(db)
	dashboard.AlertTTL = m.AlertTTL
	s.DashboardService = dashboard
	s.CloudPRNTService = postgres.NewCloudPRNTService(db)
	listener := postgres.NewListener(db, log)
	lctx, stopListener := context.WithCancel(context.Background())
	m.stopListener = stopListener
	go listener.Run(lctx)
	m.Sync = &syncserver.Server{
		Gateways: s.GatewayService, Ingester: postgres.NewIngestService(db), Commands: s.CommandService,
		Notifier: listener, Logger: log, PresenceEvery: m.PresenceEvery, Observer: metrics,
	}
	metrics.AttachLinks(m.Sync)
	fleet := postgres.NewFleetService(db)
	fleet.AlertTTL = m.AlertTTL
	metrics.AttachFleet(fleet, nil)
	s.Sync = m.Sync
	if err := s.Open(); err != nil {
		return err
	}
	m.HTTP = s
	fmt.Fprintf(m.Stdout, "storeprint-cloud listening on %s\n", s.URL())
	if u := s.MetricsURL(); u != "" {
		log.Info("metrics served without a token", "metrics_listen", u)
	}
	log.Info("cloud running", "version", version.String(), "listen", s.URL())
	close(m.ready)
	<-ctx.Done()
	log.Info("cloud stopping")
	return nil
}

// Close stops the server, waiting for requests in flight, and closes the
// database.
func (m *Main) Close() error {
	var err error
	if m.Sync != nil {
		m.Sync.Close()
	}
	if m.stopListener != nil {
		m.stopListener()
	}
	if m.HTTP != nil {
		err = m.HTTP.Close()
	}
	if m.DB != nil {
		m.DB.Close()
	}
	return err
}

func (m *Main) logLevel() slog.Level {
	if m.Getenv("STOREPRINT_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
