package toml_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/printerdrivers/serial"
)

const base = `
store_id = "s1"
api_tokens = ["pos-dev-token"]
[[printers]]
id = "hot-1"
driver = "tcp"
address = "127.0.0.1:9100"
backup = "pass-1"
[[printers]]
id = "pass-1"
driver = "tcp"
address = "127.0.0.1:9101"
[[stations]]
name = "hot"
printer = "hot-1"
`

func TestParse(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		cfg, err := toml.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		p := cfg.Printers[0]
		if p.Encoding != "gb18030" || p.OnUncertain != "hold" || p.FailoverAttempts != 3 || p.FailoverAfter.Seconds() != 10 {
			t.Fatalf("got %+v, want the defaults", p)
		}
		if got := cfg.Stations[0].StaleAfter.Minutes(); got != 30 {
			t.Fatalf("got stale_after %vm, want 30m", got)
		}
		if *cfg.MaxRetries != 5 || cfg.Listen != "127.0.0.1:8080" {
			t.Fatalf("got max_retries %d listen %s", *cfg.MaxRetries, cfg.Listen)
		}
		if cfg.Retention.Duration != 30*gateway.Day || cfg.OrderIDsRetention.Duration != 400*gateway.Day {
			t.Fatalf("got retention %s, order_ids_retention %s; want 30d and 400d", cfg.Retention, cfg.OrderIDsRetention)
		}
		if st := cfg.Storage; st.MemtableSize != 4<<20 || st.BlockCacheSize != 2<<20 || st.IndexCacheSize != 0 || st.Reserve != 96<<20 {
			t.Fatalf("got storage %+v, want the defaults", st)
		}
	})
	t.Run("Storage", func(t *testing.T) {
		cfg, err := toml.Parse(strings.Replace(base, `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]
retention = "2s"
order_ids_retention = "1d12h"
[storage]
memtable_size = "16MiB"
block_cache_size = 4194304
index_cache_size = "2MiB"
reserve = "1GiB"`, 1))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Retention.Duration != 2*time.Second || cfg.OrderIDsRetention.Duration != 36*time.Hour {
			t.Fatalf("got retention %s, order_ids_retention %s", cfg.Retention, cfg.OrderIDsRetention)
		}
		if st := cfg.Storage; st.MemtableSize != 16<<20 || st.BlockCacheSize != 4<<20 || st.IndexCacheSize != 2<<20 || st.Reserve != 1<<30 {
			t.Fatalf("got storage %+v", st)
		}
	})
	for _, tc := range []struct {
		name     string
		old, new string
		want     []string
	}{
		{"UnknownDriver", `id = "pass-1"` + "\n" + `driver = "tcp"`, `id = "pass-1"` + "\n" + `driver = "usb"`, []string{`printers[1] (id "pass-1").driver`, `unknown driver "usb"`}},
		{"MissingPrinter", `printer = "hot-1"`, `printer = "hot-9"`, []string{`stations[0] (name "hot").printer`, `no printer with id "hot-9"`}},
		{"DuplicateID", `id = "pass-1"`, `id = "hot-1"`, []string{`printers[1] (id "hot-1").id`, "duplicate"}},
		{"BackupCycle", `address = "127.0.0.1:9101"`, `address = "127.0.0.1:9101"` + "\nbackup = \"hot-1\"", []string{"backup", "cycle hot-1 -> pass-1 -> hot-1"}},
		{"BadAddress", `address = "127.0.0.1:9100"`, `address = "printer.local"`, []string{`printers[0] (id "hot-1").address`, "host:port"}},
		{"UnknownBackup", `backup = "pass-1"`, `backup = "nope"`, []string{".backup", `no printer with id "nope"`}},
		{"BadEncoding", `address = "127.0.0.1:9100"`, `address = "127.0.0.1:9100"` + "\nencoding = \"latin9\"", []string{".encoding", "latin9"}},
		{"BadPolicy", `address = "127.0.0.1:9100"`, `address = "127.0.0.1:9100"` + "\non_uncertain = \"guess\"", []string{".on_uncertain", "guess"}},
		{"BadDuration", `printer = "hot-1"`, `printer = "hot-1"` + "\nstale_after = \"soon\"", []string{"stale_after", "soon"}},
		{"UnknownKey", `store_id = "s1"`, `store_id = "s1"` + "\nlisten_addr = \"x\"", []string{"unknown key listen_addr"}},
		{"NoTokens", `api_tokens = ["pos-dev-token"]`, `api_tokens = []`, []string{"api_tokens"}},
		{"DuplicateStation", `printer = "hot-1"`, `printer = "hot-1"` + "\n[[stations]]\nname = \"hot\"\nprinter = \"pass-1\"", []string{`stations[1].name`, `duplicate station "hot"`}},
		{"Syntax", `store_id = "s1"`, `store_id = `, []string{"line"}},
		{"BadRetention", `store_id = "s1"`, `store_id = "s1"` + "\nretention = \"a month\"", []string{"retention", `"a month"`}},
		{"NegativeRetention", `store_id = "s1"`, `store_id = "s1"` + "\nretention = \"-1d\"", []string{"retention"}},
		{"OrderIDsShorter", `store_id = "s1"`, `store_id = "s1"` + "\nretention = \"60d\"\norder_ids_retention = \"30d\"", []string{"order_ids_retention", "shorter than retention"}},
		{"SmallMemtable", `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]` + "\n[storage]\nmemtable_size = \"1MiB\"", []string{"storage.memtable_size", "1MiB"}},
		{"SmallReserve", `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]` + "\n[storage]\nreserve = \"10MiB\"", []string{"storage.reserve", "10MiB"}},
		{"BadSize", `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]` + "\n[storage]\nblock_cache_size = \"lots\"", []string{"block_cache_size", "lots"}},
		{"UnknownStorageKey", `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]` + "\n[storage]\ncache = 1", []string{"unknown key storage.cache"}},
		{"PortZero", `address = "127.0.0.1:9100"`, `address = "127.0.0.1:0"`, []string{`printers[0] (id "hot-1").address`, `port "0"`, "1 to 65535"}},
		{"PortTooHigh", `address = "127.0.0.1:9101"`, `address = "127.0.0.1:65536"`, []string{`printers[1] (id "pass-1").address`, "1 to 65535"}},
		{"PortName", `address = "127.0.0.1:9100"`, `address = "printer.local:raw"`, []string{".address", `port "raw"`}},
		{"CloudInsecure", `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]` + "\n[cloud]\nurl = \"ws://cloud/v1/sync\"\ngateway_id = \"g\"\ntoken = \"t\"", []string{"cloud.url", "wss://", "insecure = true"}},
		{"CloudScheme", `api_tokens = ["pos-dev-token"]`, `api_tokens = ["pos-dev-token"]` + "\n[cloud]\nurl = \"https://cloud/v1/sync\"\ngateway_id = \"g\"\ntoken = \"t\"", []string{"cloud.url", "wss://"}},
		{"OriginPath", `store_id = "s1"`, `store_id = "s1"` + "\nallowed_origins = [\"https://pos.example.com/app\"]", []string{"allowed_origins[0]", "without a path"}},
		{"OriginScheme", `store_id = "s1"`, `store_id = "s1"` + "\nallowed_origins = [\"pos.example.com\"]", []string{"allowed_origins[0]", "https://"}},
		{"Hostname", `store_id = "s1"`, `store_id = "s1"` + "\nhostnames = [\"http://gateway.local\"]", []string{"hostnames[0]", "without scheme or port"}},
		{"TLSHalf", `store_id = "s1"`, `store_id = "s1"` + "\ntls_cert = \"c.pem\"", []string{"tls_cert and tls_key"}},
		{"TLSWord", `store_id = "s1"`, `store_id = "s1"` + "\ntls = \"yes\"", []string{"tls:", "self-signed"}},
		{"LogFormat", `store_id = "s1"`, `store_id = "s1"` + "\nlog_format = \"xml\"", []string{"log_format", `"xml"`, "text or json"}},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.old) {
				t.Fatalf("test edit %q not in the base config", tc.old)
			}
			_, err := toml.Parse(strings.Replace(base, tc.old, tc.new, 1))
			if err == nil {
				t.Fatal("got no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestParse_LAN(t *testing.T) {
	t.Parallel()
	cfg, err := toml.Parse(strings.Replace(base, `store_id = "s1"`, `store_id = "s1"
allowed_origins = ["https://pos.example.com", "http://127.0.0.1:3000"]
hostnames = ["gateway.local"]
tls = "self-signed"`, 1) + "[cloud]\nurl = \"ws://127.0.0.1:9090/v1/sync\"\ninsecure = true\ngateway_id = \"g\"\ntoken = \"t\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.AllowedOrigins) != 2 || cfg.Hostnames[0] != "gateway.local" || !cfg.HTTPS() || !cfg.Cloud.Insecure {
		t.Fatalf("got %+v", cfg)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(base)
	f.Add(`store_id = "s"` + "\n[[printers]]\nid=\"a\"\nbackup=\"a\"")
	f.Add(withPrinter("driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nstop_bits = 1.5\nflow = \"RTS/CTS\"\nconfirm = \"status\""))
	f.Add(withPrinter("driver = \"cloudprnt\"\nmac = \"00-11-62-1D-9A-B7\"\njob_log = true"))
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := toml.Parse(s)
		if err == nil && (cfg.StoreID == "" || len(cfg.Printers) == 0 || len(cfg.Stations) == 0) {
			t.Fatalf("accepted an incomplete config: %+v", cfg)
		}
	})
}

func TestParse_SerialForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{"stop_bits = 1", "1"}, {"stop_bits = 1.5", "1.5"}, {`stop_bits = "2"`, "2"}, {"", "1"},
	} {
		cfg, err := toml.Parse(strings.Replace(base, `address = "127.0.0.1:9101"`,
			"address = \"127.0.0.1:9101\"\n[[printers]]\nid = \"bar-1\"\ndriver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nencoding = \"UTF8\"\nflow = \"RTS/CTS\"\n"+tc.line, 1))
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		p := cfg.Printers[2]
		o := p.Options.(serial.Options)
		if string(o.StopBits) != tc.want || p.Encoding != "utf-8" || o.Flow != "rtscts" || o.Baud != 19200 {
			t.Errorf("%q: got stop_bits %q encoding %q flow %q baud %d", tc.line, o.StopBits, p.Encoding, o.Flow, o.Baud)
		}
	}
	if _, err := toml.Parse(strings.Replace(base, `address = "127.0.0.1:9101"`,
		"address = \"127.0.0.1:9101\"\n[[printers]]\nid = \"bar-1\"\ndriver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nstop_bits = 3", 1)); err == nil || !strings.Contains(err.Error(), "stop_bits") {
		t.Fatalf("stop_bits = 3: got %v, want an error naming stop_bits", err)
	}
}
