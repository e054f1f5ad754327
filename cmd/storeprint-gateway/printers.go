package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

// printerSet opens the configured printers' drivers. The CloudPRNT
// printers share one endpoint, made with the first of them.
type printerSet struct {
	storeID   string
	log       *slog.Logger
	now       func() time.Time  // the program's clock; nil: time.Now
	cloudprnt *cloudprnt.Server // nil until a CloudPRNT printer is opened
	clock     clock.Clock       // times a status-confirmed ticket's printing; nil: the system's
}

// open opens the driver a printer's configuration names. An error names
// the key at fault; the caller names the printer. A device that is
// missing now is not an error: the printer is offline until it is there.
func (s *printerSet) open(pc gateway.PrinterConfig) (gateway.Printer, error) {
	switch pc.Driver {
	case "tcp":
		p := tcp.New(pc, s.storeID)
		if s.clock != nil {
			p.SetClock(s.clock)
		}
		return p, nil
	case "epos":
		return epos.New(pc, s.storeID), nil
	case "cloudprnt":
		if s.cloudprnt == nil {
			s.cloudprnt = cloudprnt.NewServer(cloudprnt.ServerOptions{Logger: s.log, Now: s.now})
		}
		return cloudprnt.New(pc, s.storeID, s.cloudprnt)
	case "serial":
		if err := serial.CheckConfig(pc); err != nil {
			return nil, err
		}
		p := serial.New(pc, s.storeID)
		if s.clock != nil {
			p.SetClock(s.clock)
		}
		return p, nil
	case "spooler":
		p, err := winspool.New(pc, s.storeID)
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

// openPrinter opens one printer's driver on its own (a CloudPRNT printer
// gets an endpoint of its own).
func openPrinter(pc gateway.PrinterConfig, storeID string) (gateway.Printer, error) {
	return (&printerSet{storeID: storeID, log: slog.Default()}).open(pc)
}
