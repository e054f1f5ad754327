package winspool

import (
	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func init() {
	gateway.RegisterDriverConfig("spooler", gateway.DriverConfig{Options: Options{}})
}

// Options are a spooler printer's keys beside address (the queue name).
type Options struct {
	// TrustSpooler (required): true counts the spooler's "job complete"
	// as the printer's confirmation (confirmed by Windows, not by the
	// printer); false leaves every ticket uncertain, since the spooler
	// only knows the data reached the device.
	TrustSpooler *bool `toml:"trust_spooler"`
}

var _ gateway.DriverOptions = Options{}

// optionsOf returns the spooler options of cfg, or none set.
func optionsOf(cfg gateway.PrinterConfig) Options {
	o, _ := cfg.Options.(Options)
	return o
}

// Trusts reports whether the printer counts the spooler's "job complete"
// as printed (trust_spooler = true).
func (o Options) Trusts() bool { return o.TrustSpooler != nil && *o.TrustSpooler }

// WithDefaults implements gateway.DriverOptions: trust_spooler has no
// default.
func (o Options) WithDefaults() gateway.DriverOptions { return o }

// Validate implements gateway.DriverOptions.
func (o Options) Validate(key string, p *gateway.PrinterConfig) error {
	if p.Address == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: the spooler queue name is required", key)
	}
	if o.TrustSpooler == nil {
		return storeprint.Errorf(storeprint.EINVALID, "%s.trust_spooler: required for driver = \"spooler\": true (count Windows' \"job complete\" as printed: confirmed by Windows, not by the printer) or false (every ticket stays uncertain until a person checks the paper)", key)
	}
	return nil
}
