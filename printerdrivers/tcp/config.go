package tcp

import (
	"net"
	"strconv"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() {
	gateway.RegisterDriverConfig("tcp", gateway.DriverConfig{Options: Options{}})
}

// Options are a tcp printer's keys beside address (host:port): confirm,
// as every printer on a byte stream.
type Options struct {
	printerdrivers.Stream
}

var _ gateway.DriverOptions = Options{}

// optionsOf returns the tcp options of cfg: its Options, or those of a
// printer given the keys of a byte stream (printerdrivers.Stream) or none.
func optionsOf(cfg gateway.PrinterConfig) Options {
	switch o := cfg.Options.(type) {
	case Options:
		return o
	case printerdrivers.Stream:
		return Options{Stream: o}
	}
	return Options{}
}

// WithDefaults implements gateway.DriverOptions.
func (o Options) WithDefaults() gateway.DriverOptions {
	o.Stream = printerdrivers.StreamOf(o)
	return o
}

// Validate implements gateway.DriverOptions.
func (o Options) Validate(key string, p *gateway.PrinterConfig) error {
	host, port, err := net.SplitHostPort(p.Address)
	if err != nil || host == "" || port == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: %q is not a host:port address", key, p.Address)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: port %q of %q is not a number from 1 to 65535", key, port, p.Address)
	}
	return o.Stream.Validate(key, p)
}
