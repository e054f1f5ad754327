package gateway

import (
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// DisplayConfig is one kitchen screen ([[displays]]): a station target
// whose "printed" is a cook's bump.
type DisplayConfig struct {
	ID string `toml:"id"`
	// Backup is the printer the screen's tickets go to when it falls
	// silent; without one they wait for it, shown red on the LAN page.
	Backup string `toml:"backup"`
	// OfflineAfter: no word from the screen this long and it is gone.
	OfflineAfter Duration `toml:"offline_after"` // default 10s
	// AmberAfter and RedAfter colour a ticket on the screen by its age.
	AmberAfter Duration `toml:"amber_after"` // default 5m
	RedAfter   Duration `toml:"red_after"`   // default 10m
}

// Display defaults.
const (
	DefaultOfflineAfter = 10 * time.Second
	DefaultAmberAfter   = 5 * time.Minute
	DefaultRedAfter     = 10 * time.Minute
)

// SetDefaults fills the display's unset durations.
func (d *DisplayConfig) SetDefaults() {
	if d.OfflineAfter.Duration == 0 {
		d.OfflineAfter.Duration = DefaultOfflineAfter
	}
	if d.AmberAfter.Duration == 0 {
		d.AmberAfter.Duration = DefaultAmberAfter
	}
	if d.RedAfter.Duration == 0 {
		d.RedAfter.Duration = DefaultRedAfter
	}
}

// validateDisplays checks [[displays]]: ids unique among printers and
// displays (a task's printer_id names either), a backup that is a printer,
// positive times with amber before red.
func (c *Config) validateDisplays(printers map[string]*PrinterConfig) error {
	seen := map[string]bool{}
	for i := range c.Displays {
		d := &c.Displays[i]
		key := fmt.Sprintf("displays[%d]", i)
		if d.ID == "" {
			return storeprint.Errorf(storeprint.EINVALID, "%s.id: required", key)
		}
		if !storeprint.ValidID(d.ID) {
			return storeprint.Errorf(storeprint.EINVALID, "%s.id: %q must be 1-64 characters of letters, digits, '-', '_' or '.'", key, d.ID)
		}
		key = fmt.Sprintf("displays[%d] (id %q)", i, d.ID)
		if seen[d.ID] {
			return storeprint.Errorf(storeprint.EINVALID, "%s.id: duplicate display id %q", key, d.ID)
		}
		if printers[d.ID] != nil {
			return storeprint.Errorf(storeprint.EINVALID, "%s.id: %q is a printer's id too; a display needs an id of its own", key, d.ID)
		}
		seen[d.ID] = true
		if d.Backup != "" && printers[d.Backup] == nil {
			return storeprint.Errorf(storeprint.EINVALID, "%s.backup: no printer with id %q", key, d.Backup)
		}
		for _, v := range []struct {
			name string
			d    time.Duration
		}{{"offline_after", d.OfflineAfter.Duration}, {"amber_after", d.AmberAfter.Duration}, {"red_after", d.RedAfter.Duration}} {
			if v.d <= 0 {
				return storeprint.Errorf(storeprint.EINVALID, "%s.%s: %s is not a positive duration", key, v.name, FormatDuration(v.d))
			}
		}
		if d.OfflineAfter.Duration < time.Second {
			return storeprint.Errorf(storeprint.EINVALID, "%s.offline_after: %s is under 1s; a screen reports every second at most", key, FormatDuration(d.OfflineAfter.Duration))
		}
		if d.RedAfter.Duration <= d.AmberAfter.Duration {
			return storeprint.Errorf(storeprint.EINVALID, "%s.red_after: %s must be longer than amber_after (%s)", key, FormatDuration(d.RedAfter.Duration), FormatDuration(d.AmberAfter.Duration))
		}
	}
	return nil
}

// validateTarget checks that a station has a printer or a display, one
// of the two, and that it exists.
func (c *Config) validateTarget(key string, s StationConfig, printers map[string]*PrinterConfig) error {
	key = fmt.Sprintf("%s (name %q)", key, s.Name)
	switch {
	case s.Printer != "" && s.Display != "":
		return storeprint.Errorf(storeprint.EINVALID, "%s: printer = %q and display = %q; a station has a printer or a display, not both", key, s.Printer, s.Display)
	case s.Display != "":
		if c.display(s.Display) == nil {
			return storeprint.Errorf(storeprint.EINVALID, "%s.display: no display with id %q", key, s.Display)
		}
	case s.Printer == "":
		return storeprint.Errorf(storeprint.EINVALID, "%s.printer: required (or display = the id of a [[displays]] entry)", key)
	case printers[s.Printer] == nil:
		return storeprint.Errorf(storeprint.EINVALID, "%s.printer: no printer with id %q", key, s.Printer)
	}
	return nil
}

func (c *Config) display(id string) *DisplayConfig {
	for i := range c.Displays {
		if c.Displays[i].ID == id {
			return &c.Displays[i]
		}
	}
	return nil
}
