package printerdrivers_test

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	_ "github.com/storeprint/storeprint/printerdrivers/winspool"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		env := &printerdrivers.Env{StoreID: "store-001"}
		for _, tt := range []struct {
			cfg  gateway.PrinterConfig
			want string
		}{
			{gateway.PrinterConfig{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9100"}, "*tcp.Printer"},
			{gateway.PrinterConfig{ID: "bar-1", Driver: "serial", Address: "/dev/ttyUSB0"}, "*serial.Printer"},
			{gateway.PrinterConfig{ID: "cold-1", Driver: "epos", Address: "http://192.168.1.50"}, "*epos.Printer"},
			{gateway.PrinterConfig{ID: "star-1", Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1d:9a:b7"}}, "*cloudprnt.Printer"},
		} {
			p, err := printerdrivers.Open(tt.cfg, env)
			if err != nil {
				t.Fatalf("%s: %v", tt.cfg.Driver, err)
			}
			var got string
			switch p.(type) {
			case *tcp.Printer:
				got = "*tcp.Printer"
			case *serial.Printer:
				got = "*serial.Printer"
			case *epos.Printer:
				got = "*epos.Printer"
			case *cloudprnt.Printer:
				got = "*cloudprnt.Printer"
			}
			if got != tt.want {
				t.Errorf("%s: got %T, want %s", tt.cfg.Driver, p, tt.want)
			}
			if err := p.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("ErrSerialSetting", func(t *testing.T) {
		t.Parallel()
		cfg := gateway.PrinterConfig{ID: "bar-1", Driver: "serial", Address: "/dev/ttyUSB0", Options: serial.Options{StopBits: "3"}}
		if _, err := printerdrivers.Open(cfg, &printerdrivers.Env{}); err == nil || !strings.Contains(err.Error(), "stop_bits") {
			t.Fatalf("got %v, want an error naming stop_bits", err)
		}
	})
	t.Run("ErrUnknownDriver", func(t *testing.T) {
		t.Parallel()
		_, err := printerdrivers.Open(gateway.PrinterConfig{ID: "x", Driver: "carrier-pigeon"}, &printerdrivers.Env{})
		if err == nil || !strings.HasPrefix(err.Error(), "driver: ") || !strings.Contains(err.Error(), "carrier-pigeon") {
			t.Fatalf("got %v, want an error naming the driver key and its value", err)
		}
	})
}

// TestOpen_CloudPRNT: the CloudPRNT printers opened together are polled at
// one endpoint, which tells them apart by MAC address.
func TestOpen_CloudPRNT(t *testing.T) {
	t.Parallel()
	env := &printerdrivers.Env{StoreID: "store-001"}
	s := cloudprnt.ServerOf(env)
	if _, err := printerdrivers.Open(gateway.PrinterConfig{ID: "star-1", Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1d:9a:b7"}}, env); err != nil {
		t.Fatal(err)
	}
	if got := cloudprnt.ServerOf(env); got != s {
		t.Errorf("got another endpoint after opening a printer, want the one of the environment")
	}
	_, err := printerdrivers.Open(gateway.PrinterConfig{ID: "star-2", Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1D:9A:B7"}}, env)
	if err == nil || !strings.Contains(err.Error(), "mac") {
		t.Fatalf("got %v, want the second printer with the same MAC refused, naming mac", err)
	}
	if _, err := printerdrivers.Open(gateway.PrinterConfig{ID: "star-2", Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1d:9a:b7"}}, &printerdrivers.Env{}); err != nil {
		t.Errorf("got %v, want a printer of another environment to have its own endpoint", err)
	}
}

func TestDrivers(t *testing.T) {
	t.Parallel()
	got := strings.Join(printerdrivers.Drivers(), ", ")
	if want := "cloudprnt, epos, serial, spooler, tcp"; got != want {
		t.Errorf("got drivers %s, want %s", got, want)
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("registering tcp a second time did not panic")
		}
	}()
	printerdrivers.Register("tcp", func(gateway.PrinterConfig, *printerdrivers.Env) (gateway.Printer, error) { return nil, nil })
}
