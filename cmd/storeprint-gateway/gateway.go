package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kardianos/service"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/gateway/prometheus"
	"github.com/storeprint/storeprint/gateway/raft"
	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/internal/cli"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/internal/version"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// commands are the subcommands with their help, in the order the overall
// help lists them.
var commands = []struct{ name, summary, help string }{
	{"run", "run the gateway in the foreground (also what a service manager runs)", `Usage: storeprint-gateway run --config FILE [--log-format text|json]

Runs the gateway until it is interrupted (Ctrl-C, SIGTERM) or stopped by its
service manager. Logs go to standard error (under systemd: the journal; as a
Windows service: the Windows Event Log, source storeprint-gateway).

Flags:
  --config FILE   the gateway's TOML configuration [$STOREPRINT_CONFIG];
                  every key is in its reference, config.md: installed
                  from the .deb, /usr/share/doc/storeprint-gateway/;
                  in the Windows zip, beside the program; in the source,
                  docs/
  --log-format F  text (default) or json: one JSON object a line [$STOREPRINT_LOG_FORMAT];
                  wins over the config's log_format
  --name NAME     the service's name, when a service manager runs it (set
                  by install --name; default storeprint-gateway)

It warns when FILE is readable by every user of the machine: it holds tokens.

Exit status: 0 stopped, 1 failed, 2 usage error, 78 the configuration is
not usable (the packaged systemd unit does not restart on 78).
`},
	{"install", "install the gateway as a system service", `Usage: storeprint-gateway install --config FILE [--user NAME] [--name NAME]

Installs a system service that runs this program's file (where it is now)
with "run --config FILE", starting at boot and started again when it exits
unexpectedly: a systemd unit, a SysV init script with its /etc/rc?.d links,
a launchd daemon or a Windows service, whichever the machine uses. It says
what it wrote, which user the service runs as and where its logs go. It does
not start the service: "storeprint-gateway start" does.

The .deb package installs the gateway as the service storeprint-gateway
already (systemd, user storeprint); this command is for other machines.

Flags:
  --config FILE  the configuration the service runs with (checked first;
                 made absolute) [$STOREPRINT_CONFIG]
  --user NAME    the account the service runs as (default: root, or
                 LocalSystem on Windows); it must be able to read FILE and
                 write the config's data_dir
  --name NAME    the service's name (default storeprint-gateway)

It warns when FILE is readable by every user of the machine: it holds tokens.
`},
	{"uninstall", "stop and remove the system service", `Usage: storeprint-gateway uninstall [--name NAME]

Stops the service if it runs, then removes everything install wrote (the
unit or init script and its links, or the Windows service) and says what it
removed. The configuration, the data_dir and the logs stay.

Flags:
  --name NAME  the service's name (default storeprint-gateway)
`},
	{"start", "start the installed service", `Usage: storeprint-gateway start [--name NAME]

Starts the installed service.

Flags:
  --name NAME  the service's name (default storeprint-gateway)
`},
	{"stop", "stop the installed service", `Usage: storeprint-gateway stop [--name NAME]

Stops the installed service; the gateway finishes the requests in flight.

Flags:
  --name NAME  the service's name (default storeprint-gateway)
`},
	{"status", "say whether the installed service runs", `Usage: storeprint-gateway status [--name NAME]

Prints running, stopped, or not installed.

Flags:
  --name NAME  the service's name (default storeprint-gateway)
`},
	{"check", "verify the data dir (the gateway stopped); --repair keeps what is readable", `Usage: storeprint-gateway check --config FILE [--repair]

Verifies the config's data_dir as the gateway would at start, on a scratch
copy, so the data dir itself is not changed: every table read and its
checksums verified, the write-ahead logs replayed, everything stored added
up and compared with the witness of the last commit. It says what it found
and where. The gateway must be stopped (a backup can be taken while it runs).

With --repair: a sound data dir is left alone; one that lost its last writes
is marked recovered; a damaged one is moved aside (DATA_DIR.damaged-<time>,
kept as it was) and a new store is built from every table block and log
entry that can be read. Either way the gateway holds every ticket that was
waiting for a person at its next start: it may have printed.

Flags:
  --config FILE  the gateway's configuration [$STOREPRINT_CONFIG]
  --repair       repair instead of only checking

Exit status: 0 sound (or repaired), 1 damaged (saying what and where), 2 it
cannot check (a usage error, or the gateway is running).
`},
	{"backup", "write a consistent backup, while the gateway runs", `Usage: storeprint-gateway backup --config FILE --out BACKUP [--gateway URL]

Writes a consistent backup of the store to BACKUP: Badger's backup stream,
every key as it was at one moment, framed with the store's id, the time and
a SHA-256. It asks the running gateway for it (GET /v1/backup with the
config's first API token), so printing goes on; when no gateway answers it
reads the data dir itself. BACKUP is written as BACKUP.partial and renamed
only once complete and verified.

Flags:
  --config FILE  the gateway's configuration [$STOREPRINT_CONFIG]
  --out BACKUP   the backup file to write
  --gateway URL  the running gateway (default: http:// and the config's
                 listen address)
`},
	{"restore", "replace the data dir with a backup (the gateway stopped)", `Usage: storeprint-gateway restore --config FILE --in BACKUP

Replaces the config's data_dir with the store in BACKUP (it must be this
store's: the store ids must match). The data dir that was there is kept as
DATA_DIR.before-restore-<time>. The gateway holds every ticket that was
waiting in the backup for a person at its next start: it may have printed
after the backup was taken.

Flags:
  --config FILE  the gateway's configuration [$STOREPRINT_CONFIG]
  --in BACKUP    the backup file to restore

Exit status: 0 restored, 1 the backup is not complete or not this store's,
2 a usage error or the gateway is running.
`},
	{"version", "print the version", `Usage: storeprint-gateway version

Prints the program's version, the Go version it was built with and its
platform. Also: storeprint-gateway --version.
`},
}

func usage() string {
	var b strings.Builder
	b.WriteString("storeprint-gateway: the store's print gateway.\n\nUsage:\n  storeprint-gateway <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'storeprint-gateway <command> --help' for a command's flags.\n")
	return b.String()
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// errHelp is returned by ParseFlags when help was asked for and printed:
// the program exits 0.
var errHelp = cli.ErrHelp

// ServiceName is the system service's name unless --name says otherwise;
// the packaged unit is ServiceName + ".service".
const ServiceName = "storeprint-gateway"

// Main is the gateway program.
type Main struct {
	Command     string
	ConfigPath  string
	LogFormat   string // --log-format, else $STOREPRINT_LOG_FORMAT, else log_format, else text
	ServiceName string // install and the service commands: --name
	User        string // install: --user
	Out, In     string // backup, restore: the backup file
	GatewayURL  string // backup: the running gateway
	Repair      bool   // check
	Stdout      io.Writer
	Stderr      io.Writer

	// Failpoint stops the process at a named point of an attempt; set only
	// by builds with the failpoints tag (tests).
	Failpoint func(name string)
	// Clock tells the time and makes the timers of the dispatcher and the
	// sync link (the system's when nil); tests move its wall clock to see
	// pairing codes expire.
	Clock clock.Clock

	Config  *gateway.Config
	Store   *badger.DB
	Gateway *gateway.Gateway
	HTTP    *gwhttp.Server
	Sync    *synclink.Client // nil when the config has no [cloud]
	Node    *raft.Node       // nil when the config has no [cluster]

	leaderLink atomic.Pointer[synclink.Client] // on a cluster: the link while this node leads

	// logHandler, when set, takes the log instead of Stderr (a Windows
	// service has no standard error).
	logHandler slog.Handler
	printers   map[string]gateway.Printer
	ready      chan struct{}
}

// NewMain returns a program with default settings.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, ready: make(chan struct{}), Failpoint: failpointFromEnv()}
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, usage())
		return errors.New("a command is required: " + commandNames())
	}
	m.Command = args[0]
	help := ""
	switch m.Command {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(m.Stdout, usage())
		return errHelp
	case "--version", "-version":
		m.Command = "version"
	}
	for _, c := range commands {
		if c.name == m.Command {
			help = c.help
		}
	}
	if help == "" {
		return fmt.Errorf("unknown command %q (one of %s; see storeprint-gateway --help)", m.Command, commandNames())
	}
	fs := flag.NewFlagSet(m.Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch m.Command {
	case "run":
		fs.StringVar(&m.ConfigPath, "config", os.Getenv("STOREPRINT_CONFIG"), "")
		fs.StringVar(&m.LogFormat, "log-format", os.Getenv("STOREPRINT_LOG_FORMAT"), "")
		fs.StringVar(&m.ServiceName, "name", ServiceName, "")
	case "install":
		fs.StringVar(&m.ConfigPath, "config", os.Getenv("STOREPRINT_CONFIG"), "")
		fs.StringVar(&m.User, "user", "", "")
		fallthrough
	case "uninstall", "start", "stop", "status":
		fs.StringVar(&m.ServiceName, "name", ServiceName, "")
	case "check", "backup", "restore":
		fs.StringVar(&m.ConfigPath, "config", os.Getenv("STOREPRINT_CONFIG"), "")
		fs.BoolVar(&m.Repair, "repair", false, "")
		fs.StringVar(&m.Out, "out", "", "")
		fs.StringVar(&m.In, "in", "", "")
		fs.StringVar(&m.GatewayURL, "gateway", "", "")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(m.Stdout, help)
			return errHelp
		}
		return fmt.Errorf("%s: %w (see storeprint-gateway %s --help)", m.Command, err, m.Command)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", m.Command, fs.Arg(0))
	}
	if m.LogFormat != "" && m.LogFormat != "text" && m.LogFormat != "json" {
		return fmt.Errorf("--log-format: %q is not text or json", m.LogFormat)
	}
	switch m.Command {
	case "run", "install", "check", "backup", "restore":
		if m.ConfigPath == "" {
			return fmt.Errorf("%s: --config FILE is required", m.Command)
		}
	}
	for _, f := range []struct {
		set  bool
		name string
		cmd  string
	}{{m.Repair, "--repair", "check"}, {m.Out != "", "--out", "backup"}, {m.GatewayURL != "", "--gateway", "backup"}, {m.In != "", "--in", "restore"}} {
		if f.set && m.Command != f.cmd {
			return fmt.Errorf("%s: %s is a flag of %s", m.Command, f.name, f.cmd)
		}
	}
	if m.Command == "backup" && m.Out == "" {
		return errors.New("backup: --out FILE is required")
	}
	if m.Command == "restore" && m.In == "" {
		return errors.New("restore: --in FILE is required")
	}
	if m.ServiceName != "" && !serviceNameRE.MatchString(m.ServiceName) {
		return fmt.Errorf("--name: %q must be 1-64 letters, digits, '-', '_' or '.', starting with a letter", m.ServiceName)
	}
	if m.User != "" && runtime.GOOS != "windows" && !userNameRE.MatchString(m.User) {
		return fmt.Errorf("--user: %q is not an account name", m.User)
	}
	return nil
}

var (
	serviceNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)
	userNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,31}[$]?$`)
)

// logger is the program's log: text, or JSON (one object a line with
// time, level and msg) when --log-format, $STOREPRINT_LOG_FORMAT or the
// config's log_format says json.
func (m *Main) logger() *slog.Logger {
	if sh, ok := m.logHandler.(*serviceLogHandler); ok && sh.json != (m.LogFormat == "json") {
		m.logHandler = newServiceLogHandler(sh.log, m.LogFormat == "json")
	}
	if m.logHandler != nil {
		return slog.New(m.logHandler)
	}
	if m.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(m.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(m.Stderr, nil))
}

// Run runs the command.
func (m *Main) Run(ctx context.Context) error {
	switch m.Command {
	case "version":
		fmt.Fprintln(m.Stdout, version.Line("storeprint-gateway"))
		return nil
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

// Stopped reports the error the program stops with on Stderr: on a line
// of its own, or, with --log-format json, as a JSON log line like every
// other, so that a log collector reads the last line too.
func (m *Main) Stopped(err error) {
	cli.Stopped(m.Stderr, m.logger, m.LogFormat, "storeprint-gateway", err)
}

// Ready is closed once the gateway serves requests.
func (m *Main) Ready() <-chan struct{} { return m.ready }

func (m *Main) run(ctx context.Context) error {
	cfg, err := toml.Load(m.ConfigPath)
	if err != nil {
		return &ConfigError{err}
	}
	m.Config = cfg
	if m.LogFormat == "" {
		m.LogFormat = cmp.Or(cfg.LogFormat, "text")
	}
	log := m.storeLogger(cfg)
	m.warnConfig(cfg, log)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	tuneCollector(cfg.Storage)
	tuneScheduler()
	metrics := prometheus.New()
	so := storeOptions(cfg, log)
	so.Observer = metrics
	m.Store, err = badger.Open(cfg.DataDir, so)
	if err != nil {
		return m.storeError(err)
	}
	env, err := m.openPrinters(cfg, log)
	if err != nil {
		return err
	}
	var store gateway.Store = m.Store
	if cfg.Cluster != nil {
		if m.Node, err = openNode(cfg, m.Store, log); err != nil {
			return err
		}
		store = m.Node
	}
	m.Gateway, err = gateway.New(cfg, store, m.printers, gateway.Options{
		Logger: log, Observer: metrics, Failpoint: m.Failpoint, Clock: m.Clock,
	})
	if err != nil {
		return err
	}
	m.Store.OnHealthChange(m.Gateway.Notify)
	m.Store.OnQuietSync(m.Gateway.Notify)
	m.attachMetrics(metrics)
	if m.Node == nil {
		if err := m.holdRecovered(ctx, log); err != nil {
			return err
		}
	} else if m.Store.Recovery() != nil {
		log.Warn("this node's data dir was recovered; the cluster's log brings it up to date")
	}
	g := m.Gateway
	m.HTTP = &gwhttp.Server{
		Config: cfg, Tokens: cfg.APITokens, Logger: log, Now: g.Now, Metrics: metrics.Handler(),
		Health: g, Changes: g, OrderService: g, TaskService: g, PrinterService: g, AuditService: g,
		DeviceService: g, BoardService: g, DisplayService: g,
		Storage: m.Store, Backup: m.Store,
		// With no CloudPRNT printer configured the endpoint answers
		// every poll as it answers wrong credentials (401).
		CloudPRNT: cloudprnt.ServerOf(env),
	}
	if m.Node != nil {
		m.HTTP.Cluster = m.Node
		metrics.AttachCluster(m.Node.State)
	}
	if err := m.HTTP.Listen(cfg.Listen); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gdone, sdone := m.start(gctx, cfg, log, metrics)
	hdone := make(chan error, 1)
	go func() { hdone <- m.HTTP.Serve() }()
	m.logRunning(cfg, log)
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
	return m.stop(err, cancel, gdone, sdone)
}

// start runs what prints and links to the cloud: alone, the dispatcher,
// the sweeper and the sync link; on a cluster, the leader's part while
// this node leads. gdone receives the dispatcher's end (never, on a
// cluster); sdone is closed once the link has stopped (at once without
// one).
func (m *Main) start(gctx context.Context, cfg *gateway.Config, log *slog.Logger, metrics *prometheus.Metrics) (gdone chan error, sdone chan struct{}) {
	gdone = make(chan error, 1)
	sdone = make(chan struct{})
	if m.Node != nil {
		// Only the leader prints, sweeps and links to the cloud; a new
		// leader first settles what the one before it left in flight.
		m.Node.WhileLeader(func(lctx context.Context) { m.lead(lctx, log) })
		if cfg.Cloud != nil {
			// The leader's link; a follower passes the LAN page's
			// requests to the leader, which shows it.
			m.HTTP.Link = link{m.leaderLink.Load, m.Gateway}
			metrics.AttachLink(func() prometheus.LinkState {
				if link := m.leaderLink.Load(); link != nil {
					st := link.State()
					return prometheus.LinkState{Up: st.Connected, Cursor: st.Cursor}
				}
				return prometheus.LinkState{}
			})
		}
	} else {
		go func() { gdone <- m.Gateway.Run(gctx) }()
		go m.Gateway.NewSweeper(gateway.SweeperOptions{Reclaim: m.Store.ReclaimSpace}).Run(gctx)
	}
	if cfg.Cloud != nil && m.Node == nil {
		// The link runs beside the print path and never blocks it.
		m.Sync = &synclink.Client{
			URL: cfg.Cloud.URL, GatewayID: cfg.Cloud.GatewayID, Token: cfg.Cloud.Token,
			StoreID: cfg.StoreID, Version: version.String(), Gateway: m.Gateway, Logger: log, Clock: m.Clock,
			OnChange: m.Gateway.Notify,
		}
		m.HTTP.Link = link{func() *synclink.Client { return m.Sync }, m.Gateway}
		metrics.AttachLink(func() prometheus.LinkState {
			st := m.Sync.State()
			return prometheus.LinkState{Up: st.Connected, Cursor: st.Cursor}
		})
		go func() {
			defer close(sdone)
			m.Sync.Run(gctx)
		}()
	} else {
		close(sdone)
	}
	return gdone, sdone
}

// attachMetrics has the metrics read the gateway and the store's disk.
func (m *Main) attachMetrics(metrics *prometheus.Metrics) {
	metrics.Attach(m.Gateway)
	metrics.AttachDisk(func() (free, reserve uint64, ok bool) {
		d := m.Store.Disk()
		if d == nil {
			return 0, 0, false
		}
		return d.FreeBytes, d.ReserveBytes, true
	})
}

// logRunning says the gateway runs, where, and the certificate's
// fingerprint when it serves HTTPS.
func (m *Main) logRunning(cfg *gateway.Config, log *slog.Logger) {
	attrs := []any{"version", version.String(), "listen", m.HTTP.Addr(), "url", m.HTTP.URL(), "data_dir", cfg.DataDir, "printers", len(cfg.Printers)}
	if fp := m.HTTP.TLSFingerprint(); fp != "" {
		attrs = append(attrs, "tls_fingerprint", fp)
	}
	log.Info("gateway running", attrs...)
}

// storeLogger is the logger of a running gateway. Every line carries the
// store, and the gateway's credential id when it links to a cloud (never
// its token): a chain's logs, gathered in one place, are searched by
// store.
func (m *Main) storeLogger(cfg *gateway.Config) *slog.Logger {
	log := m.logger().With("store_id", cfg.StoreID)
	if cfg.Cloud != nil {
		log = log.With("gateway_id", cfg.Cloud.GatewayID)
	}
	return log
}

// warnConfig logs what in a valid configuration is still unsafe: a file
// others can read, a link in clear text, short API tokens.
func (m *Main) warnConfig(cfg *gateway.Config, log *slog.Logger) {
	if w := configExposure(m.ConfigPath); w != "" {
		log.Warn(w, "config", m.ConfigPath)
	}
	if cfg.Cloud != nil && cfg.Cloud.Insecure && strings.HasPrefix(cfg.Cloud.URL, "ws://") {
		log.Warn("the sync link is not encrypted: the gateway's token and every ticket cross the network in clear text; use wss://", "key", "cloud.url", "url", cfg.Cloud.URL)
	}
	for i, t := range cfg.APITokens {
		if len(t) < 12 {
			log.Warn("an API token is short and easy to guess; use 16 or more random characters", "key", fmt.Sprintf("api_tokens[%d]", i), "length", len(t))
		}
	}
}

// openPrinters opens every configured printer with its driver
// (printerdrivers.Open) into m.printers, and returns what they share.
// An error names the config file, the printer and the key at fault.
func (m *Main) openPrinters(cfg *gateway.Config, log *slog.Logger) (*printerdrivers.Env, error) {
	m.printers = map[string]gateway.Printer{}
	env := &printerdrivers.Env{StoreID: cfg.StoreID, Logger: log, Clock: m.Clock}
	if m.Clock != nil {
		env.Now = m.Clock.Now
	}
	for i, pc := range cfg.Printers {
		p, err := printerdrivers.Open(pc, env)
		if err != nil {
			return nil, fmt.Errorf("config %s: printers[%d] (id %q).%w", m.ConfigPath, i, pc.ID, err)
		}
		m.printers[pc.ID] = p
	}
	return env, nil
}

// stop shuts a running gateway down after err (nil: asked to stop): the
// HTTP server within 10 seconds, then the dispatcher (cancel stops it and
// the sync link), then waits for the link. It returns the first error.
func (m *Main) stop(err error, cancel context.CancelFunc, gdone <-chan error, sdone <-chan struct{}) error {
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if serr := m.HTTP.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	cancel()
	if m.Node != nil {
		if nerr := m.Node.Close(); nerr != nil && err == nil {
			err = nerr
		}
		return err
	}
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

// link is the sync link as the LAN page and /healthz show it.
type link struct {
	client func() *synclink.Client // nil: no link now (a follower of a cluster)
	g      *gateway.Gateway
}

// LinkState is the link's state with the outbox's newest event and how
// many the cloud has not acknowledged; nil without a link.
func (l link) LinkState(ctx context.Context) *gwhttp.LinkState {
	c := l.client()
	if c == nil {
		return nil
	}
	st := c.State()
	out := &gwhttp.LinkState{
		Connected: st.Connected, Since: st.Since, Cursor: st.Cursor, LastError: st.LastError,
		Incarnation: st.Incarnation, CredentialShared: st.CredentialShared,
	}
	if st.Resync != nil {
		out.Resync = (*gwhttp.LinkResync)(st.Resync)
	}
	if ss, err := l.g.SyncState(ctx); err == nil {
		last, pending := ss.Last, ss.Pending(st.Cursor)
		out.LastSeq, out.Pending = &last, &pending
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
