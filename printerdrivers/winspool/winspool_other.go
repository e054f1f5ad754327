//go:build !windows

package winspool

import "github.com/storeprint/storeprint/gateway"

// New returns a driver for the Windows print queue cfg.Address. There is
// no print spooler on this system: it returns ErrUnsupported.
func New(cfg gateway.PrinterConfig, storeID string) (*Printer, error) {
	return nil, ErrUnsupported
}
