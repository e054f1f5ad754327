package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

// displayConfig is a valid configuration with one printer and a station on
// a kitchen screen whose backup is that printer.
func displayConfig() *gateway.Config {
	c := &gateway.Config{StoreID: "s1", APITokens: []string{"pos-dev-token"},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9100"}},
		Displays: []gateway.DisplayConfig{{ID: "kds-hot", Backup: "hot-1"}},
		Stations: []gateway.StationConfig{{Name: "hot", Display: "kds-hot"}, {Name: "bar", Printer: "hot-1"}}}
	return c
}

func TestConfig_Displays(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		c := displayConfig()
		c.SetDefaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		d := c.Displays[0]
		if d.OfflineAfter.Duration != 10*time.Second || d.AmberAfter.Duration != 5*time.Minute || d.RedAfter.Duration != 10*time.Minute {
			t.Errorf("got offline_after %s amber_after %s red_after %s, want the defaults 10s, 5m, 10m", d.OfflineAfter, d.AmberAfter, d.RedAfter)
		}
	})
	for _, tc := range []struct {
		name   string
		change func(c *gateway.Config)
		want   string
	}{
		{"Both", func(c *gateway.Config) { c.Stations[0].Printer = "hot-1" }, `stations[0] (name "hot"): printer = "hot-1" and display = "kds-hot"`},
		{"Neither", func(c *gateway.Config) { c.Stations[0].Display = "" }, `stations[0] (name "hot").printer: required`},
		{"UnknownDisplay", func(c *gateway.Config) { c.Stations[0].Display = "kds-cold" }, `stations[0] (name "hot").display: no display with id "kds-cold"`},
		{"NoID", func(c *gateway.Config) { c.Displays[0].ID = "" }, "displays[0].id: required"},
		{"BadID", func(c *gateway.Config) { c.Displays[0].ID = "kds hot" }, "displays[0].id"},
		{"Duplicate", func(c *gateway.Config) { c.Displays = append(c.Displays, c.Displays[0]) }, `displays[1] (id "kds-hot").id: duplicate`},
		{"PrinterID", func(c *gateway.Config) { c.Displays[0].ID = "hot-1"; c.Stations[0].Display = "hot-1" }, `displays[0] (id "hot-1").id`},
		{"UnknownBackup", func(c *gateway.Config) { c.Displays[0].Backup = "pass-9" }, `displays[0] (id "kds-hot").backup: no printer with id "pass-9"`},
		{"NegativeOffline", func(c *gateway.Config) { c.Displays[0].OfflineAfter.Duration = -time.Second }, ".offline_after"},
		{"ShortOffline", func(c *gateway.Config) { c.Displays[0].OfflineAfter.Duration = time.Millisecond }, ".offline_after"},
		{"RedBeforeAmber", func(c *gateway.Config) {
			c.Displays[0].AmberAfter.Duration, c.Displays[0].RedAfter.Duration = 10*time.Minute, 5*time.Minute
		}, ".red_after"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			c := displayConfig()
			tc.change(c)
			c.SetDefaults()
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
