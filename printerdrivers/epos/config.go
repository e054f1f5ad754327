package epos

import (
	"net/url"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func init() {
	gateway.RegisterDriverConfig("epos", gateway.DriverConfig{Options: Options{}})
}

// DefaultDevID is a printer's device id unless devid says otherwise.
const DefaultDevID = "local_printer"

// Options are an ePOS-Print printer's keys beside address (its base URL).
type Options struct {
	// DevID is the printer's device id in its ePOS-Print service
	// (default "local_printer").
	DevID string `toml:"devid"`
	// JobLog says the printer keeps a print job log (the ePOS-Print
	// spooler function), so that each ticket goes with a print job id and
	// an uncertain one is settled by asking the printer what became of
	// it.
	JobLog bool `toml:"job_log"`
}

var _ gateway.DriverOptions = Options{}

// optionsOf returns the ePOS-Print options of cfg, or none set.
func optionsOf(cfg gateway.PrinterConfig) Options {
	o, _ := cfg.Options.(Options)
	return o
}

// WithDefaults implements gateway.DriverOptions.
func (o Options) WithDefaults() gateway.DriverOptions {
	if o.DevID == "" {
		o.DevID = DefaultDevID
	}
	return o
}

// Validate implements gateway.DriverOptions.
func (o Options) Validate(key string, p *gateway.PrinterConfig) error {
	u, err := url.Parse(p.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.address: %q is not the printer's base URL like http://192.168.1.50 or https://192.168.1.50", key, p.Address)
	}
	if !validDevID(o.DevID) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.devid: %q must be 1-64 letters, digits, '_' or '-'", key, o.DevID)
	}
	return nil
}

var _ gateway.ConfirmsNoter = Options{}

// NoteConfirms notes a printer configured with job_log = true that
// confirms by its answer alone: it keeps no job log.
func (o Options) NoteConfirms(c storeprint.Confirm) (string, storeprint.Word) {
	if c == storeprint.ConfirmEPOS && o.JobLog {
		return string(c), storeprint.WordConfirmsNoJobLog
	}
	return "", ""
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
