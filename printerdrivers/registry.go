package printerdrivers

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/clock"
)

// OpenFunc opens the printer a configuration describes. An error names the
// key at fault ("driver: ...", "stop_bits: ..."); the caller names the
// printer. A device that is missing now is not an error: the printer is
// offline until it is there.
type OpenFunc func(pc gateway.PrinterConfig, env *Env) (gateway.Printer, error)

// Env is what the printers opened together share: the store, the log, the
// clock, and what a driver keeps once for all its printers (Shared).
type Env struct {
	StoreID string           // heads the tickets that do not name their store
	Logger  *slog.Logger     // nil: slog.Default()
	Now     func() time.Time // the program's clock; nil: time.Now
	Clock   clock.Clock      // times a status-confirmed ticket's printing; nil: the system's

	mu     sync.Mutex
	shared map[string]any
}

// Log returns the environment's logger.
func (e *Env) Log() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}

// Shared returns what the driver keeps under key for every printer
// opened with e, made by mk the first time it is asked for (the one
// CloudPRNT endpoint all CloudPRNT printers are polled at).
func (e *Env) Shared(key string, mk func() any) any {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.shared[key]; ok {
		return v
	}
	if e.shared == nil {
		e.shared = map[string]any{}
	}
	v := mk()
	e.shared[key] = v
	return v
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]OpenFunc{}
)

// Register makes a driver known under the name a configuration gives as
// driver = "...". Each driver package calls it from an init function, as
// database/sql drivers do, so that a program has the drivers it imports.
// Registering a name twice panics.
func Register(name string, open OpenFunc) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[name]; dup || name == "" || open == nil {
		panic(fmt.Sprintf("printerdrivers: Register of driver %q twice, without a name or without a function", name))
	}
	drivers[name] = open
}

// Drivers returns the names of the registered drivers, sorted.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Open opens a printer with the driver its configuration names.
func Open(pc gateway.PrinterConfig, env *Env) (gateway.Printer, error) {
	driversMu.RLock()
	open := drivers[pc.Driver]
	driversMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("driver: %q is not available in this build", pc.Driver)
	}
	return open(pc, env)
}
