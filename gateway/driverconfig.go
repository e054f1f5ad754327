package gateway

import (
	"fmt"
	"slices"
	"sync"
)

// DriverConfig is what a printer driver knows of its own keys in a
// [[printers]] entry: the gateway's config holds the keys every printer
// has (id, encoding, width, failover, ...) and hands the rest to the
// driver its driver = "..." names. Each driver package registers its
// DriverConfig with RegisterDriverConfig from an init function, so that a
// program checks the printers of the drivers it imports.
type DriverConfig interface {
	// Defaults fills the driver's unset keys of p with their defaults.
	Defaults(p *PrinterConfig)
	// Validate checks the driver's keys of p, after Defaults. An error
	// names the key under key, the printer's place in the config
	// (`printers[0] (id "hot-1")`), as "key.address: ...".
	Validate(key string, p *PrinterConfig) error
}

// AcrossPrinters is a DriverConfig that also checks its printers
// together, after each was checked alone (two CloudPRNT printers cannot
// share a MAC address). ps is every printer of the config, in order, to
// be named as printers[i]; the driver looks at those of its own driver.
type AcrossPrinters interface {
	ValidateAcross(ps []PrinterConfig) error
}

var (
	driverConfigsMu sync.RWMutex
	driverConfigs   = map[string]DriverConfig{}
)

// RegisterDriverConfig makes the keys of the driver named name known to
// the config. Registering a name twice panics.
func RegisterDriverConfig(name string, dc DriverConfig) {
	driverConfigsMu.Lock()
	defer driverConfigsMu.Unlock()
	if _, dup := driverConfigs[name]; dup || name == "" || dc == nil {
		panic(fmt.Sprintf("gateway: RegisterDriverConfig of driver %q twice, without a name or without a DriverConfig", name))
	}
	driverConfigs[name] = dc
}

// DriverNames returns the names of the drivers whose config is
// registered, sorted.
func DriverNames() []string {
	driverConfigsMu.RLock()
	defer driverConfigsMu.RUnlock()
	names := make([]string, 0, len(driverConfigs))
	for n := range driverConfigs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// driverConfig returns the registered DriverConfig of the driver named
// name, or nil.
func driverConfig(name string) DriverConfig {
	driverConfigsMu.RLock()
	defer driverConfigsMu.RUnlock()
	return driverConfigs[name]
}

// validateAcross runs the registered drivers' checks of their printers
// together, in the order of the drivers' names.
func validateAcross(ps []PrinterConfig) error {
	for _, name := range DriverNames() {
		if a, ok := driverConfig(name).(AcrossPrinters); ok {
			if err := a.ValidateAcross(ps); err != nil {
				return err
			}
		}
	}
	return nil
}
