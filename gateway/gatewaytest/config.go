package gatewaytest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// Token is the POS API token of every test configuration.
const Token = "test-token-123"

// Sim is a simulated printer on a real loopback socket.
type Sim struct {
	*printersim.Printer
	Addr string // host:port the printer listens on
}

// StartSim serves a fresh simulated printer with the fault on a loopback
// port until the test ends.
func StartSim(t testing.TB, fault printersim.Fault) *Sim {
	t.Helper()
	p, addr := printertest.StartTCP(t, printersim.Options{Fault: fault})
	return &Sim{Printer: p, Addr: addr}
}

// PrinterConf is one [[printers]] entry of a test configuration: a tcp
// printer at Addr. Extra holds more keys of the entry (TOML lines).
type PrinterConf struct {
	ID, Addr, OnUncertain, Backup, Extra string
}

// StationConf is one [[stations]] entry of a test configuration.
type StationConf struct {
	Name, Printer, StaleAfter string
}

// Config is a test configuration (TOML) with its data in dataDir, serving
// on 127.0.0.1 with Token.
func Config(t testing.TB, dataDir string, printers []PrinterConf, stations []StationConf) string {
	t.Helper()
	return ConfigTop(t, dataDir, "", printers, stations)
}

// ConfigTop is Config with more top-level keys (TOML lines).
func ConfigTop(t testing.TB, dataDir, top string, printers []PrinterConf, stations []StationConf) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = \"store-test\"\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n%s", dataDir, Token, top)
	for _, p := range printers {
		fmt.Fprintf(&b, "\n[[printers]]\nid = %q\ndriver = \"tcp\"\naddress = %q\nconnect_timeout = \"1s\"\nconfirm_timeout = \"2s\"\n", p.ID, p.Addr)
		if p.OnUncertain != "" {
			fmt.Fprintf(&b, "on_uncertain = %q\n", p.OnUncertain)
		}
		if p.Backup != "" {
			fmt.Fprintf(&b, "backup = %q\n", p.Backup)
		}
		b.WriteString(p.Extra)
	}
	for _, s := range stations {
		fmt.Fprintf(&b, "\n[[stations]]\nname = %q\nprinter = %q\n", s.Name, s.Printer)
		if s.StaleAfter != "" {
			fmt.Fprintf(&b, "stale_after = %q\n", s.StaleAfter)
		}
	}
	return b.String()
}

// ConfigOf is a test configuration (TOML) with the given [[printers]]
// bodies (every key but the timeouts: printers of any driver) and
// [[stations]] bodies, and more top-level keys in top.
func ConfigOf(t testing.TB, dataDir string, printers, stations []string, top string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store_id = \"store-test\"\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n%s", dataDir, Token, top)
	for _, p := range printers {
		fmt.Fprintf(&b, "\n[[printers]]\n%s\nconnect_timeout = \"1s\"\nconfirm_timeout = \"2s\"\n", strings.TrimSpace(p))
	}
	for _, s := range stations {
		fmt.Fprintf(&b, "\n[[stations]]\n%s\n", strings.TrimSpace(s))
	}
	return b.String()
}
