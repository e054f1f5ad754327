package cloudprnt

import (
	"slices"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
)

func init() { gateway.RegisterDriverConfig("cloudprnt", config{}) }

// Emulations a CloudPRNT printer can be given tickets in.
var Emulations = []string{"starprnt", "escpos"}

// config is a CloudPRNT printer's keys: mac, password and emulation.
type config struct{}

func (config) Defaults(p *gateway.PrinterConfig) {
	p.Emulation = strings.ToLower(p.Emulation)
	if p.Emulation == "" {
		p.Emulation = "starprnt"
	}
	if m, err := protocol.ParseMAC(p.MAC); err == nil {
		p.MAC = m
	}
}

func (config) Validate(key string, p *gateway.PrinterConfig) error {
	if _, err := protocol.ParseMAC(p.MAC); err != nil {
		return storeprint.Errorf(storeprint.EINVALID, "%s.mac: %s", key, err.Error())
	}
	if !slices.Contains(Emulations, p.Emulation) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.emulation: %q is not one of %s", key, p.Emulation, strings.Join(Emulations, ", "))
	}
	if err := printerdrivers.CheckOwnConfirm(key, p); err != nil {
		return err
	}
	return printerdrivers.CheckNoJobLog(key, p)
}

// ValidateAcross refuses two CloudPRNT printers with one MAC address: the
// MAC is how a polling printer is told apart.
func (config) ValidateAcross(ps []gateway.PrinterConfig) error {
	macs := map[string]string{}
	for i, p := range ps {
		if p.Driver != "cloudprnt" {
			continue
		}
		if other, ok := macs[p.MAC]; ok {
			return storeprint.Errorf(storeprint.EINVALID, "printers[%d] (id %q).mac: %s is printer %q's MAC address too", i, p.ID, p.MAC, other)
		}
		macs[p.MAC] = p.ID
	}
	return nil
}
