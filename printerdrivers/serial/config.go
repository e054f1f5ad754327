package serial

import (
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() { gateway.RegisterDriverConfig("serial", config{}) }

// config is a serial printer's keys: address (the device), the line
// settings (baud, data_bits, parity, stop_bits, flow) and confirm.
type config struct{}

func (config) Defaults(p *gateway.PrinterConfig) {
	p.Parity = strings.ToLower(p.Parity)
	switch f := strings.ToLower(p.Flow); f {
	case "rts/cts", "rts_cts", "hardware":
		p.Flow = "rtscts"
	case "xon/xoff", "xon_xoff", "software":
		p.Flow = "xonxoff"
	default:
		p.Flow = f
	}
	printerdrivers.StreamDefaults(p)
	if p.Baud == 0 {
		p.Baud = DefaultBaud
	}
	if p.DataBits == 0 {
		p.DataBits = DefaultDataBits
	}
	if p.Parity == "" {
		p.Parity = "none"
	}
	if p.StopBits == "" {
		p.StopBits = "1"
	}
	if p.Flow == "" {
		p.Flow = "none"
	}
}

func (config) Validate(key string, p *gateway.PrinterConfig) error {
	if p.Address == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: a device path like /dev/ttyUSB0 or COM3 is required", key)
	}
	switch p.Parity {
	case "none", "odd", "even", "mark", "space":
	default:
		return storeprint.Errorf(storeprint.EINVALID, "%s.parity: %q is not one of none, odd, even, mark, space", key, p.Parity)
	}
	switch p.StopBits {
	case "1", "1.5", "2":
	default:
		return storeprint.Errorf(storeprint.EINVALID, "%s.stop_bits: %q is not one of 1, 1.5, 2", key, p.StopBits)
	}
	switch p.Flow {
	case "none", "rtscts", "xonxoff":
	default:
		return storeprint.Errorf(storeprint.EINVALID, "%s.flow: %q is not one of none, rtscts, xonxoff", key, p.Flow)
	}
	if p.DataBits < 5 || p.DataBits > 8 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.data_bits: %d is not between 5 and 8", key, p.DataBits)
	}
	if p.Baud <= 0 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.baud: %d is not a baud rate", key, p.Baud)
	}
	return printerdrivers.CheckStream(key, p)
}
