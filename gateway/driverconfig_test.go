package gateway_test

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// labelConfig is the config of a printer kind the gateway's config does
// not know: its keys are checked and defaulted by what it registers.
type labelConfig struct{}

func (labelConfig) Defaults(p *gateway.PrinterConfig) {
	if p.Address == "" {
		p.Address = "label://default"
	}
}

func (labelConfig) Validate(key string, p *gateway.PrinterConfig) error {
	if !strings.HasPrefix(p.Address, "label://") {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: %q is not a label:// address", key, p.Address)
	}
	return nil
}

func init() { gateway.RegisterDriverConfig("test-label", labelConfig{}) }

// A new printer kind plugs its keys into the config by registering them:
// its defaults fill the printer, its checks name the key, and the keys
// every printer has are still checked by the gateway.
func TestRegisterDriverConfig(t *testing.T) {
	t.Parallel()
	c := configWith(gateway.PrinterConfig{Driver: "test-label"})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Printers[0].Address; got != "label://default" {
		t.Errorf("address after the driver's defaults: got %q, want %q", got, "label://default")
	}
	c = configWith(gateway.PrinterConfig{Driver: "test-label", Address: "tcp://x"})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `printers[0] (id "p-1").address: "tcp://x" is not a label:// address`) {
		t.Errorf("got %v, want the driver's error naming the printer's address", err)
	}
	c = configWith(gateway.PrinterConfig{Driver: "test-label", Width: 90})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), ".width: 90 is not between 16 and 80") {
		t.Errorf("got %v, want the common width check", err)
	}
	if !strings.Contains(strings.Join(gateway.DriverNames(), ","), "test-label") {
		t.Errorf("DriverNames() = %v, want test-label among them", gateway.DriverNames())
	}
}

// A driver no package registered is refused, naming those there are.
func TestConfig_UnknownDriver(t *testing.T) {
	t.Parallel()
	names := strings.Join(gateway.DriverNames(), ", ")
	for _, tc := range []struct{ driver, want string }{
		{"usb", `printers[0] (id "p-1").driver: unknown driver "usb" (one of ` + names + ")"},
		{"", `printers[0] (id "p-1").driver: required (one of ` + names + ")"},
	} {
		err := configWith(gateway.PrinterConfig{Driver: tc.driver, Address: "127.0.0.1:9100"}).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("driver %q: got %v, want %q", tc.driver, err, tc.want)
		}
	}
	for _, want := range []string{"tcp", "serial", "spooler", "epos", "cloudprnt"} {
		if !strings.Contains(names, want) {
			t.Errorf("registered drivers %q: %s missing", names, want)
		}
	}
}

func TestRegisterDriverConfig_Twice(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("registering tcp twice did not panic")
		}
	}()
	gateway.RegisterDriverConfig("tcp", labelConfig{})
}
