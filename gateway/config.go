package gateway

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// Config is the gateway's configuration (TOML, see docs/config.md).
type Config struct {
	StoreID    string   `toml:"store_id"`
	DataDir    string   `toml:"data_dir"`
	Listen     string   `toml:"listen"`
	APITokens  []string `toml:"api_tokens"`
	MaxRetries *int     `toml:"max_retries"` // failed attempts before `failed`; default 5

	// Retention: done and cancelled tasks, their receipts and audit
	// entries are deleted this long after their last change, once the
	// cloud has them. Default 30 days.
	Retention Duration `toml:"retention"`
	// OrderIDsRetention: a replayed order id is still answered (200,
	// never printed again) this long after it was accepted. Default 400
	// days; at least Retention.
	OrderIDsRetention Duration `toml:"order_ids_retention"`

	Storage  StorageConfig   `toml:"storage"`
	Cloud    *CloudConfig    `toml:"cloud"`
	Cluster  *ClusterConfig  `toml:"cluster"` // several nodes, one store (cluster.go)
	Printers []PrinterConfig `toml:"printers"`
	Stations []StationConfig `toml:"stations"`
	Displays []DisplayConfig `toml:"displays"` // kitchen screens (display.go)

	// Browsers and the LAN (see docs/config.md).
	AllowedOrigins []string `toml:"allowed_origins"` // origins whose pages may call the API (CORS)
	Hostnames      []string `toml:"hostnames"`       // Host names accepted besides localhost and the machine's addresses
	TLSCert        string   `toml:"tls_cert"`        // PEM certificate: serve HTTPS on listen
	TLSKey         string   `toml:"tls_key"`         // its PEM private key
	TLS            string   `toml:"tls"`             // "self-signed": make a certificate once, keep it in data_dir

	// LogFormat is "text" (the default) or "json": one JSON object a line
	// with time, level and msg. --log-format wins over it.
	LogFormat string `toml:"log_format"`
}

// StorageConfig sizes the store's memory and its reserve of free disk
// space. The defaults suit a 1 GiB machine.
type StorageConfig struct {
	// MemtableSize is the write buffer: once it holds this much it is
	// written out as a table; up to two are in memory at once.
	MemtableSize ByteSize `toml:"memtable_size"`
	// BlockCacheSize caches decompressed table blocks.
	BlockCacheSize ByteSize `toml:"block_cache_size"`
	// IndexCacheSize caches table indexes and bloom filters; 0 reads them
	// from the mapped files.
	IndexCacheSize ByteSize `toml:"index_cache_size"`
	// Reserve is the free disk space below which new orders are refused
	// (503) and the gateway does not start.
	Reserve ByteSize `toml:"reserve"`
}

// TLSSelfSigned is the value of tls that makes the gateway its own
// certificate.
const TLSSelfSigned = "self-signed"

// HTTPS reports whether the gateway serves HTTPS.
func (c *Config) HTTPS() bool { return c.TLSCert != "" || c.TLS == TLSSelfSigned }

// CloudConfig is the optional sync link to the cloud.
type CloudConfig struct {
	URL       string `toml:"url"`
	GatewayID string `toml:"gateway_id"`
	Token     string `toml:"token"`
	// Insecure allows a ws:// URL: the token and every ticket then cross
	// the network in clear text.
	Insecure bool `toml:"insecure"`
}

// PrinterConfig describes one printer.
type PrinterConfig struct {
	ID          string `toml:"id"`
	Driver      string `toml:"driver"`  // a registered driver's name (DriverNames)
	Address     string `toml:"address"` // where the printer is, in its driver's terms (host:port, a device, a URL)
	Encoding    string `toml:"encoding"`
	OnUncertain string `toml:"on_uncertain"` // hold | reprint
	Backup      string `toml:"backup"`
	Width       int    `toml:"width"` // characters per line in normal type

	// Options are the printer's keys of its own driver, the ones only
	// its kind of printer has, of the type its driver registered (see
	// DriverOptions). The config's reader fills them from the printer's
	// other keys; SetDefaults gives a printer without them its driver's
	// defaults.
	Options DriverOptions `toml:"-"`

	ConnectTimeout Duration `toml:"connect_timeout"` // default 3s
	ConfirmTimeout Duration `toml:"confirm_timeout"` // default 10s

	// Failover to the first ready printer along the chain of backups
	// after FailoverAttempts failed attempts in a row or FailoverAfter of
	// continuous trouble (unreachable counts), whichever comes first; a
	// printer in trouble (cuts off, does not confirm) fails over at once.
	FailoverAttempts int      `toml:"failover_attempts"` // default 3
	FailoverAfter    Duration `toml:"failover_after"`    // default 10s
	// FailbackAfter moves stations back after the printer has been healthy
	// this long; zero means only a person moves them back.
	FailbackAfter Duration `toml:"failback_after"`
	// SuspectAfter is how many uncertain outcomes in a row put the printer
	// in trouble (see trouble.go); default 2.
	SuspectAfter int `toml:"suspect_after"`
}

// StationConfig maps a kitchen station to its printer, or to its kitchen
// screen (display): one of the two.
type StationConfig struct {
	Name       string   `toml:"name"`
	Printer    string   `toml:"printer"`
	Display    string   `toml:"display"`
	StaleAfter Duration `toml:"stale_after"` // default 30m
}

// Defaults.
const (
	DefaultMaxRetries       = 5
	DefaultConnectTimeout   = 3 * time.Second
	DefaultConfirmTimeout   = 10 * time.Second
	DefaultFailoverAttempts = 3
	DefaultFailoverAfter    = 10 * time.Second
	DefaultSuspectAfter     = 2
	DefaultStaleAfter       = 30 * time.Minute
	DefaultEncoding         = "gb18030"
	DefaultRetention        = 30 * Day
	DefaultOrderIDRetention = 400 * Day

	DefaultMemtableSize   ByteSize = 4 << 20
	DefaultBlockCacheSize ByteSize = 2 << 20
	DefaultIndexCacheSize ByteSize = 0
	DefaultReserve        ByteSize = 96 << 20
	MinMemtableSize       ByteSize = 2 << 20

	// TxnMemtableSize is the write buffer the largest transaction is
	// reckoned from: 15 % of it, 1.2 MiB, which the largest order (a
	// request of 1 MiB) fits in. A smaller memtable_size only sets when
	// the buffer is written out; the buffer keeps room for one such
	// transaction beyond it, and its write-ahead log file is sized from
	// this.
	TxnMemtableSize ByteSize = 8 << 20
)

// Day is 24 hours, the unit "d" of durations in the config.
const Day = 24 * time.Hour

// Encodings the ESC/POS encoder knows.
var Encodings = []string{"gb18030", "cp437", "utf-8"}

// SetDefaults fills unset fields with their defaults.
func (c *Config) SetDefaults() {
	if c.DataDir == "" {
		c.DataDir = "./data/gateway"
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.MaxRetries == nil {
		n := DefaultMaxRetries
		c.MaxRetries = &n
	}
	if c.Retention.Duration == 0 {
		c.Retention.Duration = DefaultRetention
	}
	if c.OrderIDsRetention.Duration == 0 {
		c.OrderIDsRetention.Duration = max(DefaultOrderIDRetention, c.Retention.Duration)
	}
	c.Storage.SetDefaults()
	for i := range c.Displays {
		c.Displays[i].SetDefaults()
	}
	for i := range c.Printers {
		c.Printers[i].SetDefaults()
	}
	for i := range c.Stations {
		if c.Stations[i].StaleAfter.Duration == 0 {
			c.Stations[i].StaleAfter.Duration = DefaultStaleAfter
		}
	}
}

// SetDefaults fills unset sizes with their defaults.
func (s *StorageConfig) SetDefaults() {
	if s.MemtableSize == 0 {
		s.MemtableSize = DefaultMemtableSize
	}
	if s.BlockCacheSize == 0 {
		s.BlockCacheSize = DefaultBlockCacheSize
	}
	if s.Reserve == 0 {
		s.Reserve = DefaultReserve
	}
}

// MinReserve is the least free space the store needs to start and stop
// with a memtable of the given size: two memtables' logs and tables
// (each log sized from TxnMemtableSize at least), and room for the
// manifest and a compaction's first tables.
func MinReserve(memtable ByteSize) ByteSize { return 4*max(memtable, TxnMemtableSize) + 16<<20 }

// GCPercent is the garbage collector's target the gateway runs with
// (unless GOGC sets another): the heap grows by half its live size between
// collections, not by all of it, so that a burst's garbage costs a third
// less memory for a little more collecting.
const GCPercent = 50

// MemoryLimit is the soft limit on the gateway's memory that Go's garbage
// collector is given (unless GOMEMLIMIT sets another): a budget for a
// small box, what the store holds (the memtable taking writes and one
// being written out, and the caches) and 24 MiB for the rest of the
// gateway: 2 memtables, the caches and 24 MiB, 34 MiB with the defaults,
// which with the program's own mapped files (about 16 MiB) leaves 14 MiB
// of the 64 MiB a burst aims at. In a burst the store's table builders
// hold more than that for moments; near the limit the collector runs
// more often, which slows a burst down but not a store at its usual
// load, and it never refuses memory.
func MemoryLimit(s StorageConfig) ByteSize {
	return 2*s.MemtableSize + s.BlockCacheSize + s.IndexCacheSize + 24<<20
}

func (s *StorageConfig) validate() error {
	if s.MemtableSize < MinMemtableSize || s.MemtableSize > 1<<30 {
		return storeprint.Errorf(storeprint.EINVALID, "storage.memtable_size: %s is out of range 2MiB-1GiB", s.MemtableSize)
	}
	if s.BlockCacheSize < 1<<20 {
		return storeprint.Errorf(storeprint.EINVALID, "storage.block_cache_size: %s is below 1MiB (compressed tables need a block cache)", s.BlockCacheSize)
	}
	if s.IndexCacheSize < 0 {
		return storeprint.Errorf(storeprint.EINVALID, "storage.index_cache_size: must not be negative")
	}
	if min := MinReserve(s.MemtableSize); s.Reserve < min {
		return storeprint.Errorf(storeprint.EINVALID, "storage.reserve: %s is below %s, what the store needs to start and stop with memtable_size = %q", s.Reserve, min, s.MemtableSize)
	}
	return nil
}

// SetDefaults fills the printer's unset fields with their defaults. The
// drivers call it too, so a driver made from a partial configuration
// behaves like the gateway's.
func (p *PrinterConfig) SetDefaults() {
	p.Encoding = strings.ToLower(p.Encoding)
	switch p.Encoding {
	case "":
		p.Encoding = DefaultEncoding
	case "utf8":
		p.Encoding = "utf-8"
	case "gbk", "gb2312":
		p.Encoding = "gb18030" // a superset of both
	}
	if p.OnUncertain == "" {
		p.OnUncertain = "hold"
	}
	if p.Width == 0 {
		p.Width = storeprint.DefaultWidth
	}
	if p.ConnectTimeout.Duration == 0 {
		p.ConnectTimeout.Duration = DefaultConnectTimeout
	}
	if p.ConfirmTimeout.Duration == 0 {
		p.ConfirmTimeout.Duration = DefaultConfirmTimeout
	}
	if p.FailoverAttempts == 0 {
		p.FailoverAttempts = DefaultFailoverAttempts
	}
	if p.FailoverAfter.Duration == 0 {
		p.FailoverAfter.Duration = DefaultFailoverAfter
	}
	if p.SuspectAfter == 0 {
		p.SuspectAfter = DefaultSuspectAfter
	}
	if dc, ok := driverConfig(p.Driver); ok {
		if p.Options == nil {
			p.Options = dc.Options
		}
		if ownOptions(dc, p.Options) {
			p.Options = p.Options.WithDefaults()
		}
	}
}

// Validate checks the configuration; an error names the key and the problem.
// Call SetDefaults first.
func (c *Config) Validate() error {
	if err := c.validateBasics(); err != nil {
		return err
	}
	if err := c.Storage.validate(); err != nil {
		return err
	}
	if err := c.Cloud.validate(); err != nil {
		return err
	}
	if err := c.validateLAN(); err != nil {
		return err
	}
	if c.Cluster != nil {
		if err := c.Cluster.validate(); err != nil {
			return err
		}
	}
	printers, err := c.validatePrinters()
	if err != nil {
		return err
	}
	if err := c.validateDisplays(printers); err != nil {
		return err
	}
	return c.validateStations(printers)
}

// validateBasics checks the top-level keys: the store, the API and how
// long things are kept.
func (c *Config) validateBasics() error {
	if c.StoreID == "" {
		return storeprint.Errorf(storeprint.EINVALID, "store_id: required")
	}
	if !storeprint.ValidID(c.StoreID) {
		return storeprint.Errorf(storeprint.EINVALID, "store_id: %q must be 1-64 characters of letters, digits, '-', '_' or '.'", c.StoreID)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return storeprint.Errorf(storeprint.EINVALID, "listen: %q is not a host:port address", c.Listen)
	}
	if len(c.APITokens) == 0 {
		return storeprint.Errorf(storeprint.EINVALID, "api_tokens: at least one token is required")
	}
	for i, t := range c.APITokens {
		if strings.TrimSpace(t) == "" {
			return storeprint.Errorf(storeprint.EINVALID, "api_tokens[%d]: a token must not be empty", i)
		}
	}
	if c.LogFormat != "" && c.LogFormat != "text" && c.LogFormat != "json" {
		return storeprint.Errorf(storeprint.EINVALID, "log_format: %q is not text or json", c.LogFormat)
	}
	if c.MaxRetries != nil && (*c.MaxRetries < 0 || *c.MaxRetries > 100) {
		return storeprint.Errorf(storeprint.EINVALID, "max_retries: %d is out of range 0-100", *c.MaxRetries)
	}
	if c.Retention.Duration <= 0 {
		return storeprint.Errorf(storeprint.EINVALID, "retention: %s is not a positive duration", FormatDuration(c.Retention.Duration))
	}
	if c.OrderIDsRetention.Duration < c.Retention.Duration {
		return storeprint.Errorf(storeprint.EINVALID, "order_ids_retention: %s is shorter than retention (%s); order ids must be remembered at least as long as their tasks",
			FormatDuration(c.OrderIDsRetention.Duration), FormatDuration(c.Retention.Duration))
	}
	return nil
}

// validate checks the [cloud] section; a nil one (no sync link) is valid.
func (cl *CloudConfig) validate() error {
	if cl == nil {
		return nil
	}
	switch {
	case strings.HasPrefix(cl.URL, "wss://"):
	case strings.HasPrefix(cl.URL, "ws://"):
		if !cl.Insecure {
			return storeprint.Errorf(storeprint.EINVALID, "cloud.url: %q is not encrypted; use wss://, or set cloud.insecure = true to send the token and tickets in clear text", cl.URL)
		}
	default:
		return storeprint.Errorf(storeprint.EINVALID, "cloud.url: %q must start with wss:// (or ws:// with cloud.insecure = true)", cl.URL)
	}
	if cl.GatewayID == "" {
		return storeprint.Errorf(storeprint.EINVALID, "cloud.gateway_id: required")
	}
	if cl.Token == "" {
		return storeprint.Errorf(storeprint.EINVALID, "cloud.token: required")
	}
	return nil
}

// validatePrinters checks each [[printers]] entry, then what they share:
// what their drivers check across printers, and the chains of backups. It returns the
// printers by id.
func (c *Config) validatePrinters() (map[string]*PrinterConfig, error) {
	if len(c.Printers) == 0 && !c.Cluster.IsWitness() {
		return nil, storeprint.Errorf(storeprint.EINVALID, "printers: at least one [[printers]] entry is required")
	}
	printers := map[string]*PrinterConfig{}
	for i := range c.Printers {
		p := &c.Printers[i]
		key := fmt.Sprintf("printers[%d]", i)
		if p.ID == "" {
			return nil, storeprint.Errorf(storeprint.EINVALID, "%s.id: required", key)
		}
		if !storeprint.ValidID(p.ID) {
			return nil, storeprint.Errorf(storeprint.EINVALID, "%s.id: %q must be 1-64 characters of letters, digits, '-', '_' or '.'", key, p.ID)
		}
		key = fmt.Sprintf("printers[%d] (id %q)", i, p.ID)
		if printers[p.ID] != nil {
			return nil, storeprint.Errorf(storeprint.EINVALID, "%s.id: duplicate printer id %q", key, p.ID)
		}
		printers[p.ID] = p
		if err := p.validate(key); err != nil {
			return nil, err
		}
	}
	if err := validateAcross(c.Printers); err != nil {
		return nil, err
	}
	for i := range c.Printers {
		if err := validateBackups(i, &c.Printers[i], printers); err != nil {
			return nil, err
		}
	}
	return printers, nil
}

// validateBackups follows printer i's chain of backups: each must exist,
// and coming back to a printer is a cycle.
func validateBackups(i int, p *PrinterConfig, printers map[string]*PrinterConfig) error {
	if p.Backup == "" {
		return nil
	}
	if printers[p.Backup] == nil {
		return storeprint.Errorf(storeprint.EINVALID, "printers[%d] (id %q).backup: no printer with id %q", i, p.ID, p.Backup)
	}
	seen := map[string]bool{p.ID: true}
	path := []string{p.ID}
	for b := p.Backup; b != ""; b = printers[b].Backup {
		path = append(path, b)
		if seen[b] {
			return storeprint.Errorf(storeprint.EINVALID, "printers[%d] (id %q).backup: backup cycle %s", i, p.ID, strings.Join(path, " -> "))
		}
		seen[b] = true
	}
	return nil
}

// validateStations checks the [[stations]] entries against the printers
// and displays they name.
func (c *Config) validateStations(printers map[string]*PrinterConfig) error {
	if len(c.Stations) == 0 && !c.Cluster.IsWitness() {
		return storeprint.Errorf(storeprint.EINVALID, "stations: at least one [[stations]] entry is required")
	}
	stations := map[string]bool{}
	for i, s := range c.Stations {
		key := fmt.Sprintf("stations[%d]", i)
		if !storeprint.ValidID(s.Name) {
			return storeprint.Errorf(storeprint.EINVALID, "%s.name: %q must be 1-64 characters of letters, digits, '-', '_' or '.'", key, s.Name)
		}
		if stations[s.Name] {
			return storeprint.Errorf(storeprint.EINVALID, "%s.name: duplicate station %q", key, s.Name)
		}
		stations[s.Name] = true
		if err := c.validateTarget(key, s, printers); err != nil {
			return err
		}
		if s.StaleAfter.Duration < 0 {
			return storeprint.Errorf(storeprint.EINVALID, "%s (name %q).stale_after: must not be negative", key, s.Name)
		}
	}
	return nil
}

func (p *PrinterConfig) validate(key string) error {
	if p.Driver == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.driver: required (one of %s)", key, strings.Join(DriverNames(), ", "))
	}
	dc, ok := driverConfig(p.Driver)
	if !ok {
		return storeprint.Errorf(storeprint.EINVALID, "%s.driver: unknown driver %q (one of %s)", key, p.Driver, strings.Join(DriverNames(), ", "))
	}
	if p.Options == nil {
		p.Options = dc.Options.WithDefaults()
	}
	if !ownOptions(dc, p.Options) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.driver: the printer's options (%T) are not driver %q's (%T)", key, p.Options, p.Driver, dc.Options)
	}
	if err := p.Options.Validate(key, p); err != nil {
		return err
	}
	if !contains(Encodings, p.Encoding) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.encoding: unknown encoding %q (one of %s)", key, p.Encoding, strings.Join(Encodings, ", "))
	}
	if p.OnUncertain != "hold" && p.OnUncertain != "reprint" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.on_uncertain: %q is not hold or reprint", key, p.OnUncertain)
	}
	if p.Backup == p.ID {
		return storeprint.Errorf(storeprint.EINVALID, "%s.backup: a printer cannot be its own backup", key)
	}
	if p.Width < 16 || p.Width > 80 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.width: %d is not between 16 and 80", key, p.Width)
	}
	if p.FailoverAttempts < 1 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.failover_attempts: must be at least 1", key)
	}
	if p.SuspectAfter < 1 || p.SuspectAfter > 100 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.suspect_after: %d is not between 1 and 100", key, p.SuspectAfter)
	}
	if p.ConnectTimeout.Duration < 0 || p.ConfirmTimeout.Duration < 0 || p.FailbackAfter.Duration < 0 || p.FailoverAfter.Duration < 0 {
		return storeprint.Errorf(storeprint.EINVALID, "%s: durations must not be negative", key)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// validateLAN checks the keys that face browsers and the LAN.
func (c *Config) validateLAN() error {
	for i, o := range c.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "allowed_origins[%d]: %q %s", i, o, err.Error())
		}
	}
	for i, h := range c.Hostnames {
		if h == "" || strings.ContainsAny(h, ":/ ") || h != strings.TrimSpace(h) {
			return storeprint.Errorf(storeprint.EINVALID, "hostnames[%d]: %q must be a host name like gateway.local, without scheme or port", i, h)
		}
	}
	switch c.TLS {
	case "", TLSSelfSigned:
	default:
		return storeprint.Errorf(storeprint.EINVALID, "tls: %q is not %q (or leave it out and set tls_cert and tls_key)", c.TLS, TLSSelfSigned)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return storeprint.Errorf(storeprint.EINVALID, "tls_cert and tls_key: set both or neither")
	}
	if c.TLSCert != "" && c.TLS != "" {
		return storeprint.Errorf(storeprint.EINVALID, "tls: %q does not combine with tls_cert and tls_key; use one or the other", c.TLS)
	}
	return nil
}

// checkOrigin accepts a browser origin: scheme://host[:port], nothing else.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must start with https:// or http://")
	case u.Host == "" || u.User != nil:
		return fmt.Errorf("must name a host")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("must be an origin (scheme://host[:port]), without a path")
	case o != strings.ToLower(o):
		return fmt.Errorf("must be written in lower case, as browsers send it")
	case strings.HasSuffix(o, "/"):
		return fmt.Errorf("must not end with /, as browsers send it without")
	}
	return nil
}
