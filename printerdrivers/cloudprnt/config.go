package cloudprnt

import (
	"slices"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
)

func init() {
	gateway.RegisterDriverConfig("cloudprnt", gateway.DriverConfig{Options: Options{}, ValidateAcross: validateAcross})
}

// Emulations a CloudPRNT printer can be given tickets in.
var Emulations = []string{"starprnt", "escpos"}

// Options are a CloudPRNT printer's keys: the printer polls the gateway's
// /v1/cloudprnt and is told apart by its MAC address; with a Password it
// must also send that as HTTP Basic auth. Emulation is the command set
// the gateway hands it tickets in: starprnt (default) or escpos.
type Options struct {
	MAC       string `toml:"mac"`
	Password  string `toml:"password"`
	Emulation string `toml:"emulation"`
}

var _ gateway.DriverOptions = Options{}

// optionsOf returns the CloudPRNT options of cfg, or none set.
func optionsOf(cfg gateway.PrinterConfig) Options {
	o, _ := cfg.Options.(Options)
	return o
}

// WithDefaults implements gateway.DriverOptions: the MAC address written
// as the printer sends it (lower case, with ':').
func (o Options) WithDefaults() gateway.DriverOptions {
	o.Emulation = strings.ToLower(o.Emulation)
	if o.Emulation == "" {
		o.Emulation = "starprnt"
	}
	if m, err := protocol.ParseMAC(o.MAC); err == nil {
		o.MAC = m
	}
	return o
}

// Validate implements gateway.DriverOptions.
func (o Options) Validate(key string, _ *gateway.PrinterConfig) error {
	if _, err := protocol.ParseMAC(o.MAC); err != nil {
		return storeprint.Errorf(storeprint.EINVALID, "%s.mac: %s", key, err.Error())
	}
	if !slices.Contains(Emulations, o.Emulation) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.emulation: %q is not one of %s", key, o.Emulation, strings.Join(Emulations, ", "))
	}
	return nil
}

// validateAcross refuses two CloudPRNT printers with one MAC address: the
// MAC is how a polling printer is told apart.
func validateAcross(ps []gateway.PrinterConfig) error {
	macs := map[string]string{}
	for i, p := range ps {
		o, ok := p.Options.(Options)
		if !ok {
			continue
		}
		if other, ok := macs[o.MAC]; ok {
			return storeprint.Errorf(storeprint.EINVALID, "printers[%d] (id %q).mac: %s is printer %q's MAC address too", i, p.ID, o.MAC, other)
		}
		macs[o.MAC] = p.ID
	}
	return nil
}
