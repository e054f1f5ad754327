package gateway_test

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// labelOptions are the keys of a printer kind the gateway's config does
// not know: they are defaulted and checked by what it registers.
type labelOptions struct {
	Media string `toml:"media"`
}

func (o labelOptions) WithDefaults() gateway.DriverOptions {
	if o.Media == "" {
		o.Media = "62mm"
	}
	return o
}

func (o labelOptions) Validate(key string, p *gateway.PrinterConfig) error {
	if !strings.HasPrefix(p.Address, "label://") {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: %q is not a label:// address", key, p.Address)
	}
	if o.Media != "62mm" && o.Media != "29mm" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.media: %q is not 62mm or 29mm", key, o.Media)
	}
	return nil
}

func init() {
	gateway.RegisterDriverConfig("test-label", gateway.DriverConfig{Options: labelOptions{}})
}

// A new printer kind plugs its keys into the config by registering them:
// its defaults fill its options, its checks name the key, and the keys
// every printer has are still checked by the gateway.
func TestRegisterDriverConfig(t *testing.T) {
	t.Parallel()
	c := configWith(gateway.PrinterConfig{Driver: "test-label", Address: "label://bar"})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Printers[0].Options; got != (labelOptions{Media: "62mm"}) {
		t.Errorf("options after the driver's defaults: got %#v, want media 62mm", got)
	}
	c = configWith(gateway.PrinterConfig{Driver: "test-label", Address: "tcp://x"})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `printers[0] (id "p-1").address: "tcp://x" is not a label:// address`) {
		t.Errorf("got %v, want the driver's error naming the printer's address", err)
	}
	c = configWith(gateway.PrinterConfig{Driver: "test-label", Address: "label://bar", Options: labelOptions{Media: "4in"}})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `printers[0] (id "p-1").media: "4in" is not 62mm or 29mm`) {
		t.Errorf("got %v, want the driver's error naming its key", err)
	}
	c = configWith(gateway.PrinterConfig{Driver: "test-label", Address: "label://bar", Width: 90})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), ".width: 90 is not between 16 and 80") {
		t.Errorf("got %v, want the common width check", err)
	}
	if !strings.Contains(strings.Join(gateway.DriverNames(), ","), "test-label") {
		t.Errorf("DriverNames() = %v, want test-label among them", gateway.DriverNames())
	}
	if got := gateway.NewDriverOptions("test-label"); got != (labelOptions{}) {
		t.Errorf("NewDriverOptions: got %#v, want the registered options", got)
	}
	if got := gateway.NewDriverOptions("usb"); got != nil {
		t.Errorf("NewDriverOptions of an unknown driver: got %#v, want nil", got)
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
	gateway.RegisterDriverConfig("tcp", gateway.DriverConfig{Options: labelOptions{}})
}
