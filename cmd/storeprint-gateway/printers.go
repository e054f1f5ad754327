package main

import (
	"fmt"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// openPrinter opens the driver a printer's configuration names.
func openPrinter(pc gateway.PrinterConfig, storeID string) (gateway.Printer, error) {
	switch pc.Driver {
	case "tcp":
		return tcp.New(pc, storeID), nil
	}
	return nil, fmt.Errorf("driver %q is not available in this build", pc.Driver)
}
