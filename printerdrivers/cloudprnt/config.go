package cloudprnt

import (
	"slices"
	"strings"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() { gateway.RegisterDriverConfig("cloudprnt", config{}) }

// config is a CloudPRNT printer's keys: mac, password and emulation.
type config struct{}

func (config) Defaults(p *gateway.PrinterConfig) {
	p.Emulation = strings.ToLower(p.Emulation)
	if p.Emulation == "" {
		p.Emulation = "starprnt"
	}
	if m, err := gateway.ParseMAC(p.MAC); err == nil {
		p.MAC = m
	}
}

func (config) Validate(key string, p *gateway.PrinterConfig) error {
	if _, err := gateway.ParseMAC(p.MAC); err != nil {
		return gateway.Errorf(gateway.EINVALID, "%s.mac: %s", key, err.Error())
	}
	if !slices.Contains(gateway.Emulations, p.Emulation) {
		return gateway.Errorf(gateway.EINVALID, "%s.emulation: %q is not one of %s", key, p.Emulation, strings.Join(gateway.Emulations, ", "))
	}
	if err := printerdrivers.CheckOwnConfirm(key, p); err != nil {
		return err
	}
	return printerdrivers.CheckNoJobLog(key, p)
}
