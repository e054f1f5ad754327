package serial

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() {
	gateway.RegisterDriverConfig("serial", gateway.DriverConfig{Options: Options{}})
}

// Options are a serial printer's keys beside address (the device): its
// line settings and, as every printer on a byte stream, confirm.
type Options struct {
	printerdrivers.Stream

	Baud     int      `toml:"baud"`      // default 19200
	DataBits int      `toml:"data_bits"` // 5 to 8; default 8
	Parity   string   `toml:"parity"`    // none | odd | even | mark | space
	StopBits StopBits `toml:"stop_bits"` // 1 | 1.5 | 2 (a number or a string)
	Flow     string   `toml:"flow"`      // none | rtscts | xonxoff
}

var _ gateway.DriverOptions = Options{}

// optionsOf returns the serial options of cfg: its Options, or, for a
// printer given only the keys of a byte stream (printerdrivers.Stream) or
// none, those and the defaults of the rest.
func optionsOf(cfg gateway.PrinterConfig) Options {
	switch o := cfg.Options.(type) {
	case Options:
		return o
	case printerdrivers.Stream:
		return Options{Stream: o}
	}
	return Options{}
}

// StopBits is a serial line's stop bits: "1", "1.5" or "2". The config
// may write it as a number (stop_bits = 1) or a string (stop_bits = "1.5").
type StopBits string

// UnmarshalTOML implements toml.Unmarshaler.
func (s *StopBits) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*s = StopBits(x)
	case int64:
		*s = StopBits(fmt.Sprint(x))
	case float64:
		*s = StopBits(strconv.FormatFloat(x, 'f', -1, 64))
	default:
		return fmt.Errorf("%v is not a number of stop bits (1, 1.5 or 2)", v)
	}
	return nil
}

// WithDefaults implements gateway.DriverOptions.
func (o Options) WithDefaults() gateway.DriverOptions {
	o.Parity = strings.ToLower(o.Parity)
	switch f := strings.ToLower(o.Flow); f {
	case "rts/cts", "rts_cts", "hardware":
		o.Flow = "rtscts"
	case "xon/xoff", "xon_xoff", "software":
		o.Flow = "xonxoff"
	default:
		o.Flow = f
	}
	o.Stream = printerdrivers.StreamOf(o)
	if o.Baud == 0 {
		o.Baud = DefaultBaud
	}
	if o.DataBits == 0 {
		o.DataBits = DefaultDataBits
	}
	if o.Parity == "" {
		o.Parity = "none"
	}
	if o.StopBits == "" {
		o.StopBits = "1"
	}
	if o.Flow == "" {
		o.Flow = "none"
	}
	return o
}

// Validate implements gateway.DriverOptions.
func (o Options) Validate(key string, p *gateway.PrinterConfig) error {
	if p.Address == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: a device path like /dev/ttyUSB0 or COM3 is required", key)
	}
	if err := o.check(); err != nil {
		return storeprint.Errorf(storeprint.EINVALID, "%s.%v", key, err)
	}
	return o.Stream.Validate(key, p)
}

// check reports the first line setting of o (with its defaults) that is
// none the driver knows, naming its key: "parity: ...". The config's
// checks and the driver's, as it opens a line, are this one.
func (o Options) check() error {
	switch o.Parity {
	case "none", "odd", "even", "mark", "space":
	default:
		return fmt.Errorf("parity: %q is not one of none, odd, even, mark, space", o.Parity)
	}
	switch o.StopBits {
	case "1", "1.5", "2":
	default:
		return fmt.Errorf("stop_bits: %q is not one of 1, 1.5, 2", o.StopBits)
	}
	switch o.Flow {
	case "none", "rtscts", "xonxoff":
	default:
		return fmt.Errorf("flow: %q is not one of none, rtscts, xonxoff", o.Flow)
	}
	if o.DataBits < 5 || o.DataBits > 8 {
		return fmt.Errorf("data_bits: %d is not between 5 and 8", o.DataBits)
	}
	if o.Baud <= 0 {
		return fmt.Errorf("baud: %d is not a baud rate", o.Baud)
	}
	return nil
}
