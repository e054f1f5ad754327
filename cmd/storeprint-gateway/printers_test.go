package main

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

func TestOpenPrinter(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			cfg  gateway.PrinterConfig
			want string
		}{
			{gateway.PrinterConfig{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9100"}, "*tcp.Printer"},
			{gateway.PrinterConfig{ID: "bar-1", Driver: "serial", Address: "/dev/ttyUSB0"}, "*serial.Printer"},
		} {
			p, err := openPrinter(tt.cfg, "store-001")
			if err != nil {
				t.Fatalf("%s: %v", tt.cfg.Driver, err)
			}
			var got string
			switch p.(type) {
			case *tcp.Printer:
				got = "*tcp.Printer"
			case *serial.Printer:
				got = "*serial.Printer"
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
		cfg := gateway.PrinterConfig{ID: "bar-1", Driver: "serial", Address: "/dev/ttyUSB0", StopBits: "3"}
		if _, err := openPrinter(cfg, "store-001"); err == nil || !strings.Contains(err.Error(), "stop_bits") {
			t.Fatalf("got %v, want an error naming stop_bits", err)
		}
	})

	t.Run("ErrUnknownDriver", func(t *testing.T) {
		t.Parallel()
		if _, err := openPrinter(gateway.PrinterConfig{ID: "x", Driver: "carrier-pigeon"}, "store-001"); err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
			t.Fatalf("got %v, want an error naming the driver", err)
		}
	})
}
