package tcp

import (
	"net"
	"strconv"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() { gateway.RegisterDriverConfig("tcp", config{}) }

// config is a tcp printer's keys: address (host:port) and confirm.
type config struct{}

func (config) Defaults(p *gateway.PrinterConfig) { printerdrivers.StreamDefaults(p) }

func (config) Validate(key string, p *gateway.PrinterConfig) error {
	host, port, err := net.SplitHostPort(p.Address)
	if err != nil || host == "" || port == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: %q is not a host:port address", key, p.Address)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: port %q of %q is not a number from 1 to 65535", key, port, p.Address)
	}
	return printerdrivers.CheckStream(key, p)
}
