package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kardianos/service"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/gateway/prometheus"
	"github.com/storeprint/storeprint/gateway/toml"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// Version is the gateway's software version, reported to the cloud; set at
// build time with -ldflags "-X main.Version=...".
var Version = "dev"

const usage = `storeprint-gateway: the store's print gateway.

Usage:
  storeprint-gateway run --config FILE     run in the foreground (or under a service manager)
  storeprint-gateway install --config FILE install as a system service running "run --config FILE"
  storeprint-gateway uninstall             remove the system service
  storeprint-gateway start|stop|status     control the installed service
  storeprint-gateway check --config FILE [--repair]
                                           verify the data dir (gateway stopped): exit 0 sound,
                                           1 damaged (saying what and where); --repair keeps what
                                           is readable and sets the damaged dir aside
  storeprint-gateway backup --config FILE --out BACKUP [--gateway URL]
                                           a consistent backup, taken through the running
                                           gateway (or from the data dir when it is stopped)
  storeprint-gateway restore --config FILE --in BACKUP
                                           replace the data dir with a backup (gateway stopped);
                                           tasks waiting in it are held for a person at start

Flags:
  --config FILE   the gateway's TOML configuration (see docs/config.md)
  --log-format F  text (default) or json
  --out, --in     the backup file
  --gateway URL   the running gateway for backup (default: the config's listen address)
  --repair        with check: repair a damaged data dir

Environment:
  STOREPRINT_CONFIG      default for --config
  STOREPRINT_LOG_FORMAT  default for --log-format
`

var errHelp = errors.New("help requested")

// Main is the gateway program.
type Main struct {
	Command    string
	ConfigPath string
	LogFormat  string
	Out, In    string // backup, restore
	GatewayURL string // backup: the running gateway
	Repair     bool   // check
	Stdout     io.Writer
	Stderr     io.Writer

	// Failpoint stops the process at a named point of an attempt; set only
	// by builds with the failpoints tag (tests).
	Failpoint func(name string)

	Config  *gateway.Config
	Store   *badger.DB
	Gateway *gateway.Gateway
	HTTP    *gwhttp.Server
	Sync    *synclink.Client // nil when the config has no [cloud]

	printers map[string]gateway.Printer
	ready    chan struct{}
}

// NewMain returns a program with default settings.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, ready: make(chan struct{}), Failpoint: failpointFromEnv()}
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, usage)
		return errors.New("a command is required: run, install, uninstall, start, stop or status")
	}
	m.Command = args[0]
	switch m.Command {
	case "-h", "--help", "help":
		fmt.Fprint(m.Stdout, usage)
		return errHelp
	case "run", "install", "uninstall", "start", "stop", "status", "check", "backup", "restore":
	default:
		return fmt.Errorf("unknown command %q (run, install, uninstall, start, stop, status, check, backup, restore)", m.Command)
	}
	fs := flag.NewFlagSet(m.Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&m.ConfigPath, "config", os.Getenv("STOREPRINT_CONFIG"), "")
	fs.StringVar(&m.LogFormat, "log-format", envOr("STOREPRINT_LOG_FORMAT", "text"), "")
	switch m.Command {
	case "check":
		fs.BoolVar(&m.Repair, "repair", false, "")
	case "backup":
		fs.StringVar(&m.Out, "out", "", "")
		fs.StringVar(&m.GatewayURL, "gateway", "", "")
	case "restore":
		fs.StringVar(&m.In, "in", "", "")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(m.Stdout, usage)
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
	switch m.Command {
	case "run", "install", "check", "backup", "restore":
		if m.ConfigPath == "" {
			return fmt.Errorf("%s: --config FILE is required", m.Command)
		}
	}
	if m.Command == "backup" && m.Out == "" {
		return errors.New("backup: --out FILE is required")
	}
	if m.Command == "restore" && m.In == "" {
		return errors.New("restore: --in FILE is required")
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func (m *Main) logger() *slog.Logger {
	if m.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(m.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(m.Stderr, nil))
}

// Run runs the command.
func (m *Main) Run(ctx context.Context) error {
	switch m.Command {
	case "check":
		return m.check()
	case "backup":
		return m.backup(ctx)
	case "restore":
		return m.restore()
	case "run":
	default:
		return m.control()
	}
	if !service.Interactive() {
		return m.runService()
	}
	return m.run(ctx)
}

// Ready is closed once the gateway serves requests.
func (m *Main) Ready() <-chan struct{} { return m.ready }

func (m *Main) run(ctx context.Context) error {
	log := m.logger()
	cfg, err := toml.Load(m.ConfigPath)
	if err != nil {
		return err
	}
	m.Config = cfg
	for i, t := range cfg.APITokens {
		if len(t) < 12 {
			log.Warn("an API token is short and easy to guess; use 16 or more random characters", "key", fmt.Sprintf("api_tokens[%d]", i), "length", len(t))
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	m.Store, err = badger.Open(cfg.DataDir, storeOptions(cfg, log))
	if err != nil {
		return m.storeError(err)
	}
	m.printers = map[string]gateway.Printer{}
	for i, pc := range cfg.Printers {
		p, err := openPrinter(pc, cfg.StoreID)
		if err != nil {
			return fmt.Errorf("config %s: printers[%d] (id %q).%w", m.ConfigPath, i, pc.ID, err)
		}
		m.printers[pc.ID] = p
	}
	metrics := prometheus.New()
	m.Gateway, err = gateway.New(cfg, m.Store, m.printers, gateway.Options{
		Logger: log, Observer: metrics, Failpoint: m.Failpoint,
	})
	if err != nil {
		return err
	}
	metrics.Attach(m.Gateway)
	if err := m.holdRecovered(ctx, log); err != nil {
		return err
	}
	m.HTTP = gwhttp.NewServer(m.Gateway, cfg.APITokens, metrics.Handler(), log)
	m.HTTP.SetStorage(m.storageState)
	m.HTTP.SetBackup(func(w io.Writer) error {
		_, err := m.Store.Backup(w, cfg.StoreID)
		return err
	})
	if err := m.HTTP.Listen(cfg.Listen); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gdone := make(chan error, 1)
	go func() { gdone <- m.Gateway.Run(gctx) }()
	go m.Gateway.NewSweeper(gateway.SweeperOptions{Reclaim: m.Store.ReclaimSpace}).Run(gctx)
	sdone := make(chan struct{})
	if cfg.Cloud != nil {
		// The link runs beside the print path and never blocks it.
		m.Sync = &synclink.Client{
			URL: cfg.Cloud.URL, GatewayID: cfg.Cloud.GatewayID, Token: cfg.Cloud.Token,
			StoreID: cfg.StoreID, Version: Version, Gateway: m.Gateway, Logger: log,
		}
		m.HTTP.SetLink(func() any { return m.linkState(gctx) })
		go func() {
			defer close(sdone)
			m.Sync.Run(gctx)
		}()
	} else {
		close(sdone)
	}
	hdone := make(chan error, 1)
	go func() { hdone <- m.HTTP.Serve() }()
	log.Info("gateway running", "store_id", cfg.StoreID, "listen", m.HTTP.Addr(), "data_dir", cfg.DataDir, "printers", len(cfg.Printers))
	close(m.ready)

	select {
	case <-ctx.Done():
	case err = <-gdone:
		if err != nil {
			err = fmt.Errorf("dispatcher: %w", err)
		}
	case err = <-hdone:
		if err != nil {
			err = fmt.Errorf("http: %w", err)
		}
	}
	log.Info("gateway stopping")
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if serr := m.HTTP.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	cancel()
	select {
	case gerr := <-gdone:
		if gerr != nil && err == nil {
			err = gerr
		}
	case <-sctx.Done():
	}
	<-sdone
	return err
}

// linkState is the sync link as the LAN page and /healthz show it.
func (m *Main) linkState(ctx context.Context) any {
	st := m.Sync.State()
	out := map[string]any{"connected": st.Connected, "since": st.Since, "cursor": st.Cursor, "last_error": st.LastError}
	if ss, err := m.Gateway.SyncState(ctx); err == nil {
		out["last_seq"], out["pending"] = ss.Last, ss.Pending(st.Cursor)
	}
	return out
}

// Close releases the store and the printers.
func (m *Main) Close() error {
	var errs []error
	for id, p := range m.printers {
		if err := p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close printer %s: %w", id, err))
		}
	}
	if m.Store != nil {
		if err := m.Store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Service integration (systemd, Windows services, launchd).

func (m *Main) serviceConfig() (*service.Config, error) {
	c := &service.Config{
		Name:        "storeprint-gateway",
		DisplayName: "storeprint gateway",
		Description: "Prints the store's kitchen tickets, confirmed by the printers.",
	}
	if m.ConfigPath != "" {
		abs, err := filepath.Abs(m.ConfigPath)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		c.Arguments = []string{"run", "--config", abs}
		c.WorkingDirectory = filepath.Dir(abs)
	}
	return c, nil
}

type program struct {
	m      *Main
	cancel context.CancelFunc
	done   chan error
}

func (p *program) Start(service.Service) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan error, 1)
	go func() { p.done <- p.m.run(ctx) }()
	return nil
}

func (p *program) Stop(service.Service) error {
	p.cancel()
	return <-p.done
}

func (m *Main) runService() error {
	cfg, err := m.serviceConfig()
	if err != nil {
		return err
	}
	s, err := service.New(&program{m: m}, cfg)
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	return s.Run()
}

func (m *Main) control() error {
	cfg, err := m.serviceConfig()
	if err != nil {
		return err
	}
	if m.Command == "install" {
		if _, err := toml.Load(m.ConfigPath); err != nil {
			return err
		}
	}
	s, err := service.New(&program{m: m}, cfg)
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if m.Command == "status" {
		st, err := s.Status()
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		fmt.Fprintln(m.Stdout, map[service.Status]string{
			service.StatusRunning: "running", service.StatusStopped: "stopped", service.StatusUnknown: "unknown",
		}[st])
		return nil
	}
	if err := service.Control(s, m.Command); err != nil {
		return fmt.Errorf("%s: %w", m.Command, err)
	}
	fmt.Fprintf(m.Stdout, "storeprint-gateway: %s: done\n", strings.TrimSpace(m.Command))
	return nil
}
