package gateway

import (
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/storeprint/storeprint"
)

// DriverOptions are a printer's keys of its own driver, beside the keys
// every printer has (id, encoding, width, failover, ...): the driver's
// own type, a struct whose toml tags name its keys, registered with
// RegisterDriverConfig. The config's reader decodes them from the
// printer's other keys; the driver checks them and opens the printer with
// them. The gateway knows none of them: what it needs of one goes through
// a small interface (ConfirmsNoter).
type DriverOptions interface {
	// WithDefaults returns the options with their unset keys set to their
	// defaults.
	WithDefaults() DriverOptions
	// Validate checks the options of printer p, after WithDefaults. key
	// is the printer's place in the config (`printers[0] (id "hot-1")`);
	// an error names the key under it: key+".baud: ...". p gives the
	// printer's common keys (its address is the driver's to check).
	Validate(key string, p *PrinterConfig) error
}

// ConfirmsNoter is implemented by driver options that change what
// GET /v1/printers shows of how the printer confirms its prints: given
// the printer's own word c (ConfirmsReporter; "" before the printer was
// first reached), what to show and the note people read beside it. An
// empty show leaves both to the word alone.
type ConfirmsNoter interface {
	NoteConfirms(c storeprint.Confirm) (show string, note storeprint.Word)
}

// DriverConfig is what the config knows of a driver's keys in a
// [[printers]] entry. Each driver package registers its DriverConfig with
// RegisterDriverConfig from an init function, so that a program reads and
// checks the printers of the drivers it imports.
type DriverConfig struct {
	// Options are the driver's options with no key set.
	Options DriverOptions
	// ValidateAcross, if set, checks the driver's printers together,
	// after each was checked alone (two CloudPRNT printers cannot share a
	// MAC address). ps is every printer of the config, in order, to be
	// named as printers[i]; the driver looks at those of its own driver.
	ValidateAcross func(ps []PrinterConfig) error
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
	if _, dup := driverConfigs[name]; dup || name == "" || dc.Options == nil {
		panic(fmt.Sprintf("gateway: RegisterDriverConfig of driver %q twice, without a name or without options", name))
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

// NewDriverOptions returns the options of the driver named name with no
// key set, or nil when no such driver is registered.
func NewDriverOptions(name string) DriverOptions {
	dc, _ := driverConfig(name)
	return dc.Options
}

// driverConfig returns the registered DriverConfig of the driver named
// name.
func driverConfig(name string) (DriverConfig, bool) {
	driverConfigsMu.RLock()
	defer driverConfigsMu.RUnlock()
	dc, ok := driverConfigs[name]
	return dc, ok
}

// ownOptions reports whether o is of the type the driver registered.
func ownOptions(dc DriverConfig, o DriverOptions) bool {
	return reflect.TypeOf(o) == reflect.TypeOf(dc.Options)
}

// validateAcross runs the registered drivers' checks of their printers
// together, in the order of the drivers' names.
func validateAcross(ps []PrinterConfig) error {
	for _, name := range DriverNames() {
		if dc, _ := driverConfig(name); dc.ValidateAcross != nil {
			if err := dc.ValidateAcross(ps); err != nil {
				return err
			}
		}
	}
	return nil
}
