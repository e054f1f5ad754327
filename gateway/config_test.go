package gateway_test

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway"
)

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
		c := configWith(gateway.PrinterConfig{Driver: "epos", Address: "https://192.168.1.50/", JobLog: true})
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := c.Printers[0].DevID; got != "local_printer" {
			t.Errorf("got devid %q, want the default local_printer", got)
		}
		c = configWith(gateway.PrinterConfig{Driver: "cloudprnt", MAC: "00-11-62-1D-9A-B7"})
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if p := c.Printers[0]; p.MAC != "00:11:62:1d:9a:b7" || p.Emulation != "starprnt" {
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
		{"EPOSDevID", gateway.PrinterConfig{Driver: "epos", Address: "http://192.168.1.50", DevID: "local printer"}, ".devid"},
		{"JobLogElsewhere", gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100", JobLog: true}, ".job_log"},
		{"CloudPRNTMAC", gateway.PrinterConfig{Driver: "cloudprnt", MAC: "00:11:62"}, ".mac"},
		{"CloudPRNTNoMAC", gateway.PrinterConfig{Driver: "cloudprnt"}, ".mac"},
		{"CloudPRNTEmulation", gateway.PrinterConfig{Driver: "cloudprnt", MAC: "00:11:62:1d:9a:b7", Emulation: "zpl"}, ".emulation"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			err := configWith(tc.p).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
	t.Run("ErrDuplicateMAC", func(t *testing.T) {
		c := configWith(gateway.PrinterConfig{Driver: "cloudprnt", MAC: "00:11:62:1d:9a:b7"})
		c.Printers = append(c.Printers, gateway.PrinterConfig{ID: "p-2", Driver: "cloudprnt", MAC: "00:11:62:1D:9A:B7"})
		c.SetDefaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `printers[1] (id "p-2").mac`) {
			t.Fatalf("got %v, want the second printer's mac named", err)
		}
	})
}
