package winspool

import (
	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() { gateway.RegisterDriverConfig("spooler", config{}) }

// config is a spooler printer's keys: address (the queue name) and
// trust_spooler.
type config struct{}

func (config) Defaults(*gateway.PrinterConfig) {}

func (config) Validate(key string, p *gateway.PrinterConfig) error {
	if p.Address == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: the spooler queue name is required", key)
	}
	if p.TrustSpooler == nil {
		return storeprint.Errorf(storeprint.EINVALID, "%s.trust_spooler: required for driver = \"spooler\": true (count Windows' \"job complete\" as printed: confirmed by Windows, not by the printer) or false (every ticket stays uncertain until a person checks the paper)", key)
	}
	if err := printerdrivers.CheckOwnConfirm(key, p); err != nil {
		return err
	}
	return printerdrivers.CheckNoJobLog(key, p)
}
