package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for in, want := range map[string]time.Duration{
			"30d": 30 * gateway.Day, "400d": 400 * gateway.Day, "1d12h": 36 * time.Hour,
			"2s": 2 * time.Second, "90m": 90 * time.Minute, "0d": 0, "1d30m": gateway.Day + 30*time.Minute,
		} {
			got, err := gateway.ParseDuration(in)
			if err != nil || got != want {
				t.Errorf("ParseDuration(%q): got %v %v, want %v", in, got, err, want)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{"", "d", "1.5d", "-1d", "+1d", "1d-1h", "30 days", "soon", "1dd", "1d+1h", "99999999999999d"} {
			if got, err := gateway.ParseDuration(in); err == nil {
				t.Errorf("ParseDuration(%q): got %v, want an error", in, got)
			}
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "2s", "-1d", "1d-1h", "400d", "9223372036854775807ns", "106751d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := gateway.ParseDuration(s)
		if err != nil {
			if !strings.Contains(err.Error(), "duration") && !strings.Contains(err.Error(), "too long") {
				t.Fatalf("error %q does not say what is wrong", err)
			}
			return
		}
		// What is written reads back the same.
		back, err := gateway.ParseDuration(gateway.FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("%q: %v formats as %q, which reads back as %v %v", s, d, gateway.FormatDuration(d), back, err)
		}
	})
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	var s gateway.StorageConfig
	s.SetDefaults()
	if got, want := gateway.MemoryLimit(s), gateway.ByteSize(34<<20); got != want {
		t.Errorf("MemoryLimit(defaults): got %v, want %v", got, want)
	}
	s.MemtableSize, s.BlockCacheSize, s.IndexCacheSize = 64<<20, 32<<20, 16<<20
	if got, want := gateway.MemoryLimit(s), gateway.ByteSize(2*64<<20+32<<20+16<<20+24<<20); got != want {
		t.Errorf("MemoryLimit(64MiB memtables): got %v, want %v", got, want)
	}
}

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for in, want := range map[string]gateway.ByteSize{
			"8MiB": 8 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "100MB": 100e6, "4096": 4096, "16 mib": 16 << 20, "2g": 2 << 30,
		} {
			got, err := gateway.ParseByteSize(in)
			if err != nil || got != want {
				t.Errorf("ParseByteSize(%q): got %v %v, want %v", in, got, err, want)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{"", "MiB", "-1MiB", "1.5MiB", "8 furlongs", "99999999999GiB"} {
			if got, err := gateway.ParseByteSize(in); err == nil {
				t.Errorf("ParseByteSize(%q): got %v, want an error", in, got)
			}
		}
	})
}

func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"8MiB", "512KiB", "1GiB", "100MB", "4096", "9223372036854775807", "8589934591GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := gateway.ParseByteSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("%q: got negative size %d", s, n)
		}
		back, err := gateway.ParseByteSize(n.String())
		if err != nil || back != n {
			t.Fatalf("%q: %d writes as %q, which reads back as %d %v", s, n, n.String(), back, err)
		}
	})
}

// configWith returns a valid configuration whose only printer is p.
func configWith(p gateway.PrinterConfig) *gateway.Config {
	p.ID = "p-1"
	c := &gateway.Config{StoreID: "s1", APITokens: []string{"pos-dev-token"},
		Printers: []gateway.PrinterConfig{p},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "p-1"}}}
	c.SetDefaults()
	return c
}

func TestConfig_HTTPPrinters(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		c := configWith(gateway.PrinterConfig{Driver: "epos", Address: "https://192.168.1.50/", Options: epos.Options{JobLog: true}})
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := c.Printers[0].Options.(epos.Options).DevID; got != "local_printer" {
			t.Errorf("got devid %q, want the default local_printer", got)
		}
		c = configWith(gateway.PrinterConfig{Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00-11-62-1D-9A-B7"}})
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if p := c.Printers[0].Options.(cloudprnt.Options); p.MAC != "00:11:62:1d:9a:b7" || p.Emulation != "starprnt" {
			t.Errorf("got mac %q emulation %q, want 00:11:62:1d:9a:b7 and the default starprnt", p.MAC, p.Emulation)
		}
	})
	for _, tc := range []struct {
		name string
		p    gateway.PrinterConfig
		want string
	}{
		{"EPOSAddress", gateway.PrinterConfig{Driver: "epos", Address: "192.168.1.50:80"}, ".address"},
		{"EPOSQuery", gateway.PrinterConfig{Driver: "epos", Address: "http://192.168.1.50/?x=1"}, ".address"},
		{"EPOSDevID", gateway.PrinterConfig{Driver: "epos", Address: "http://192.168.1.50", Options: epos.Options{DevID: "local printer"}}, ".devid"},
		{"OptionsElsewhere", gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100", Options: epos.Options{JobLog: true}}, ".driver"},
		{"CloudPRNTMAC", gateway.PrinterConfig{Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62"}}, ".mac"},
		{"CloudPRNTNoMAC", gateway.PrinterConfig{Driver: "cloudprnt"}, ".mac"},
		{"CloudPRNTEmulation", gateway.PrinterConfig{Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1d:9a:b7", Emulation: "zpl"}}, ".emulation"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			err := configWith(tc.p).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
	t.Run("ErrDuplicateMAC", func(t *testing.T) {
		c := configWith(gateway.PrinterConfig{Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1d:9a:b7"}})
		c.Printers = append(c.Printers, gateway.PrinterConfig{ID: "p-2", Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1D:9A:B7"}})
		c.SetDefaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `printers[1] (id "p-2").mac`) {
			t.Fatalf("got %v, want the second printer's mac named", err)
		}
	})
}

func TestConfig_Confirm(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct{ driver, address, confirm, want string }{
			{"tcp", "127.0.0.1:9100", "", "auto"},
			{"serial", "/dev/ttyUSB0", "", "auto"},
			{"tcp", "127.0.0.1:9100", "transmit_status", "transmit_status"},
			{"serial", "/dev/ttyUSB0", "status", "status"},
			{"tcp", "127.0.0.1:9100", "process_id", "process_id"},
		} {
			c := configWith(gateway.PrinterConfig{Driver: tc.driver, Address: tc.address, Options: streamOptions(tc.driver, tc.confirm)})
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := printerdrivers.StreamOf(c.Printers[0].Options).Confirm; got != tc.want {
				t.Errorf("%s confirm %q: got %q, want %q", tc.driver, tc.confirm, got, tc.want)
			}
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		err := configWith(gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100", Options: streamOptions("tcp", "paper")}).Validate()
		if err == nil || !strings.Contains(err.Error(), ".confirm") || !strings.Contains(err.Error(), "transmit_status") {
			t.Fatalf("got %v, want an error naming confirm and its values", err)
		}
	})
}

// streamOptions returns the options of a printer of driver (tcp or serial)
// with confirm set.
func streamOptions(driver, confirm string) gateway.DriverOptions {
	st := printerdrivers.Stream{Confirm: confirm}
	if driver == "serial" {
		return serial.Options{Stream: st}
	}
	return tcp.Options{Stream: st}
}

func TestConfig_TrustSpooler(t *testing.T) {
	t.Parallel()
	t.Run("ErrMissing", func(t *testing.T) {
		err := configWith(gateway.PrinterConfig{Driver: "spooler", Address: "Kitchen"}).Validate()
		if err == nil {
			t.Fatal("got nil, want an error: a spooler printer without trust_spooler")
		}
		msg := err.Error()
		for _, want := range []string{".trust_spooler", "true", "false"} {
			if !strings.Contains(msg, want) {
				t.Errorf("got %q, want %q in it", msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("got %q, want one line", msg)
		}
	})
	for _, v := range []bool{true, false} {
		err := configWith(gateway.PrinterConfig{Driver: "spooler", Address: "Kitchen", Options: winspool.Options{TrustSpooler: &v}}).Validate()
		if err != nil {
			t.Errorf("trust_spooler = %v: %v", v, err)
		}
	}
}
