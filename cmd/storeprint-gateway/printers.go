package main

import (
	"errors"
	"fmt"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

// openPrinter opens the driver a printer's configuration names. An error
// names the key at fault; the caller names the printer. A device that is
// missing now is not an error: the printer is offline until it is there.
func openPrinter(pc gateway.PrinterConfig, storeID string) (gateway.Printer, error) {
	switch pc.Driver {
	case "tcp":
		return tcp.New(pc, storeID), nil
	case "epos":
		return epos.New(pc, storeID), nil
	case "serial":
		if err := serial.CheckConfig(pc); err != nil {
			return nil, err
		}
		return serial.New(pc, storeID), nil
	case "spooler":
		p, err := winspool.New(pc, storeID)
		if errors.Is(err, winspool.ErrUnsupported) {
			return nil, errors.New(`driver: "spooler" is only available on Windows`)
		}
		if err != nil {
			return nil, fmt.Errorf("driver: %w", err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("driver: %q is not available in this build", pc.Driver)
}
