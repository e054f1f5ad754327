package printerdrivers

import (
	"slices"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// StreamDefaults fills the keys a printer on a byte stream (tcp, serial)
// has beside its driver's: confirm = "auto" unless set.
func StreamDefaults(p *gateway.PrinterConfig) {
	if p.Confirm == "" {
		p.Confirm = gateway.ConfirmAuto
	}
}

// CheckStream checks the keys a printer on a byte stream (tcp, serial)
// has beside its driver's: confirm, and no job_log.
func CheckStream(key string, p *gateway.PrinterConfig) error {
	if !slices.Contains(gateway.ConfirmMethods, p.Confirm) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.confirm: %q is not one of %s", key, p.Confirm, strings.Join(gateway.ConfirmMethods, ", "))
	}
	return CheckNoJobLog(key, p)
}

// CheckOwnConfirm refuses confirm for a printer that confirms in its own
// way (spooler, epos, cloudprnt).
func CheckOwnConfirm(key string, p *gateway.PrinterConfig) error {
	if p.Confirm != "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s.confirm: only for driver = \"tcp\" or \"serial\" (a %s printer confirms in its own way)", key, p.Driver)
	}
	return nil
}

// CheckNoJobLog refuses job_log for a driver that has no job log (all
// but epos).
func CheckNoJobLog(key string, p *gateway.PrinterConfig) error {
	if p.JobLog {
		return storeprint.Errorf(storeprint.EINVALID, "%s.job_log: only for driver = \"epos\"", key)
	}
	return nil
}
