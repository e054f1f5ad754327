package gatewaytest_test

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/gateway/toml"
	_ "github.com/storeprint/storeprint/printerdrivers/epos" // the drivers these configurations name
	_ "github.com/storeprint/storeprint/printerdrivers/tcp"
)

// What Config writes is a configuration the gateway takes, holding every
// key it was given.
func TestConfigTop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := gatewaytest.ConfigTop(t, dir, "retention = \"2s\"\n",
		[]gatewaytest.PrinterConf{
			{ID: "hot-1", Addr: "127.0.0.1:9100", OnUncertain: "reprint", Backup: "pass-1", Extra: "failover_after = \"3s\"\n"},
			{ID: "pass-1", Addr: "127.0.0.1:9101"},
		},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1", StaleAfter: "1m"}, {Name: "pass", Printer: "pass-1"}})
	c, err := toml.Parse(text)
	if err != nil {
		t.Fatalf("parse:\n%s\n%v", text, err)
	}
	if c.DataDir != dir || c.Listen != "127.0.0.1:0" || len(c.APITokens) != 1 || c.APITokens[0] != gatewaytest.Token || c.Retention.Duration != 2*time.Second {
		t.Errorf("got data_dir %q, listen %q, tokens %q, retention %v; want %q, 127.0.0.1:0, [%s], 2s", c.DataDir, c.Listen, c.APITokens, c.Retention.Duration, dir, gatewaytest.Token)
	}
	if len(c.Printers) != 2 {
		t.Fatalf("got %d printers, want 2", len(c.Printers))
	}
	hot := c.Printers[0]
	if hot.ID != "hot-1" || hot.Driver != "tcp" || hot.Address != "127.0.0.1:9100" || hot.OnUncertain != "reprint" || hot.Backup != "pass-1" || hot.FailoverAfter.Duration != 3*time.Second {
		t.Errorf("got printer %+v, want hot-1 on tcp 127.0.0.1:9100, reprint, backup pass-1, failover after 3s", hot)
	}
	if len(c.Stations) != 2 || c.Stations[0].Name != "hot" || c.Stations[0].Printer != "hot-1" || c.Stations[0].StaleAfter.Duration != time.Minute {
		t.Errorf("got stations %+v, want hot on hot-1, stale after 1m, then pass", c.Stations)
	}
}

// ConfigOf takes the printers' and stations' bodies as they are.
func TestConfigOf(t *testing.T) {
	t.Parallel()
	text := gatewaytest.ConfigOf(t, t.TempDir(),
		[]string{"id = \"ep-1\"\ndriver = \"epos\"\naddress = \"http://127.0.0.1:8008\"\n"},
		[]string{"name = \"hot\"\nprinter = \"ep-1\""}, "")
	c, err := toml.Parse(text)
	if err != nil {
		t.Fatalf("parse:\n%s\n%v", text, err)
	}
	if len(c.Printers) != 1 || c.Printers[0].Driver != "epos" || c.Printers[0].ConfirmTimeout.Duration != 2*time.Second {
		t.Errorf("got printers %+v, want one epos printer confirming within 2s", c.Printers)
	}
	if len(c.Stations) != 1 || c.Stations[0].Printer != "ep-1" {
		t.Errorf("got stations %+v, want hot on ep-1", c.Stations)
	}
}
