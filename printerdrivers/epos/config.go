package epos

import (
	"net/url"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

func init() { gateway.RegisterDriverConfig("epos", config{}) }

// config is an ePOS-Print printer's keys: address (its base URL), devid
// and job_log.
type config struct{}

func (config) Defaults(p *gateway.PrinterConfig) {
	if p.DevID == "" {
		p.DevID = gateway.DefaultDevID
	}
}

func (config) Validate(key string, p *gateway.PrinterConfig) error {
	u, err := url.Parse(p.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: %q is not the printer's base URL like http://192.168.1.50 or https://192.168.1.50", key, p.Address)
	}
	if !validDevID(p.DevID) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.devid: %q must be 1-64 letters, digits, '_' or '-'", key, p.DevID)
	}
	return printerdrivers.CheckOwnConfirm(key, p)
}

func validDevID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
