package toml_test

import (
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/serial"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

// withPrinter returns the base config with a third printer, bar-1, of
// the given keys.
func withPrinter(keys string) string {
	return strings.Replace(base, `address = "127.0.0.1:9101"`, "address = \"127.0.0.1:9101\"\n[[printers]]\nid = \"bar-1\"\n"+keys, 1)
}

// Each driver's keys are decoded into its own options, with its own
// defaults.
func TestParse_DriverOptions(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, tc := range []struct {
		name string
		keys string
		want gateway.DriverOptions
	}{
		{"TCPDefaults", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"", tcp.Options{Stream: printerdrivers.Stream{Confirm: "auto"}}},
		{"TCPConfirm", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\nconfirm = \"transmit_status\"", tcp.Options{Stream: printerdrivers.Stream{Confirm: "transmit_status"}}},
		{"SerialDefaults", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"",
			serial.Options{Stream: printerdrivers.Stream{Confirm: "auto"}, Baud: 19200, DataBits: 8, Parity: "none", StopBits: "1", Flow: "none"}},
		{"Serial", "driver = \"serial\"\naddress = \"COM3\"\nbaud = 9600\ndata_bits = 7\nparity = \"EVEN\"\nstop_bits = 2\nflow = \"xon/xoff\"\nconfirm = \"status\"",
			serial.Options{Stream: printerdrivers.Stream{Confirm: "status"}, Baud: 9600, DataBits: 7, Parity: "even", StopBits: "2", Flow: "xonxoff"}},
		{"KeyCase", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nBaud = 9600",
			serial.Options{Stream: printerdrivers.Stream{Confirm: "auto"}, Baud: 9600, DataBits: 8, Parity: "none", StopBits: "1", Flow: "none"}},
		{"SpoolerTrusted", "driver = \"spooler\"\naddress = 'Kitchen'\ntrust_spooler = true", winspool.Options{TrustSpooler: &yes}},
		{"SpoolerUntrusted", "driver = \"spooler\"\naddress = 'Kitchen'\ntrust_spooler = false", winspool.Options{TrustSpooler: &no}},
		{"EPOSDefaults", "driver = \"epos\"\naddress = \"http://192.168.1.50\"", epos.Options{DevID: "local_printer"}},
		{"EPOS", "driver = \"epos\"\naddress = \"https://192.168.1.50/\"\ndevid = \"kitchen_2\"\njob_log = true", epos.Options{DevID: "kitchen_2", JobLog: true}},
		{"CloudPRNTDefaults", "driver = \"cloudprnt\"\nmac = \"00-11-62-1D-9A-B7\"", cloudprnt.Options{MAC: "00:11:62:1d:9a:b7", Emulation: "starprnt"}},
		{"CloudPRNT", "driver = \"cloudprnt\"\nmac = \"00:11:62:1d:9a:b7\"\npassword = \"pw\"\nemulation = \"ESCPOS\"", cloudprnt.Options{MAC: "00:11:62:1d:9a:b7", Password: "pw", Emulation: "escpos"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := toml.Parse(withPrinter(tc.keys))
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Printers[2].Options
			if w, ok := tc.want.(winspool.Options); ok {
				g, ok := got.(winspool.Options)
				if !ok || g.TrustSpooler == nil || *g.TrustSpooler != *w.TrustSpooler {
					t.Fatalf("got options %#v, want trust_spooler = %v", got, *w.TrustSpooler)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("got options %#v, want %#v", got, tc.want)
			}
		})
	}
	t.Run("CommonKeysStay", func(t *testing.T) {
		cfg, err := toml.Parse(withPrinter("driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nbaud = 9600\nwidth = 32\nconfirm_timeout = \"20s\"\nbackup = \"hot-1\""))
		if err != nil {
			t.Fatal(err)
		}
		p := cfg.Printers[2]
		if p.Width != 32 || p.ConfirmTimeout.Seconds() != 20 || p.Backup != "hot-1" || p.Options.(serial.Options).Baud != 9600 {
			t.Fatalf("got %+v", p)
		}
	})
}

// A driver's keys fail as before: its own checks name the key under the
// printer; a key of another driver names the drivers that have it; a key
// no driver has is unknown.
func TestParse_DriverOptionsErr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, keys string
		want       []string
	}{
		{"UnknownKey", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\nbaudrate = 9600", []string{"unknown key printers.baudrate"}},
		{"UnknownKeyUnknownDriver", "driver = \"usb\"\nbaud = 9600\ncolour = 1", []string{"unknown key printers.colour"}},
		{"UnknownDriver", "driver = \"usb\"\nbaud = 9600", []string{`printers[2] (id "bar-1").driver: unknown driver "usb"`}},
		{"JobLogElsewhere", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\njob_log = true", []string{`printers[2] (id "bar-1").job_log: only for driver = "epos"`}},
		{"ConfirmElsewhere", "driver = \"epos\"\naddress = \"http://192.168.1.50\"\nconfirm = \"status\"", []string{`printers[2] (id "bar-1").confirm: only for driver = "serial" or "tcp"`}},
		{"BaudElsewhere", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\nbaud = 9600", []string{`printers[2] (id "bar-1").baud: only for driver = "serial"`}},
		{"MACElsewhere", "driver = \"epos\"\naddress = \"http://192.168.1.50\"\nmac = \"00:11:62:1d:9a:b7\"", []string{`printers[2] (id "bar-1").mac: only for driver = "cloudprnt"`}},
		{"TrustElsewhere", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\ntrust_spooler = true", []string{`printers[2] (id "bar-1").trust_spooler: only for driver = "spooler"`}},
		{"Confirm", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\nconfirm = \"paper\"", []string{`printers[2] (id "bar-1").confirm: "paper" is not one of auto, process_id, transmit_status, status`}},
		{"Parity", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nparity = \"sideways\"", []string{`printers[2] (id "bar-1").parity: "sideways" is not one of none, odd, even, mark, space`}},
		{"StopBits", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nstop_bits = 3", []string{`printers[2] (id "bar-1").stop_bits: "3" is not one of 1, 1.5, 2`}},
		{"StopBitsType", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nstop_bits = true", []string{`printers[2] (id "bar-1").stop_bits: true is not a number of stop bits`}},
		{"BaudType", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nbaud = \"fast\"", []string{"line 17", `printers[2] (id "bar-1").baud: incompatible types`}},
		{"DataBits", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\ndata_bits = 9", []string{`printers[2] (id "bar-1").data_bits: 9 is not between 5 and 8`}},
		{"Flow", "driver = \"serial\"\naddress = \"/dev/ttyUSB0\"\nflow = \"dtrdsr\"", []string{`printers[2] (id "bar-1").flow: "dtrdsr" is not one of none, rtscts, xonxoff`}},
		{"SerialAddress", "driver = \"serial\"", []string{`printers[2] (id "bar-1").address: a device path like /dev/ttyUSB0 or COM3 is required`}},
		{"TrustSpooler", "driver = \"spooler\"\naddress = \"Kitchen\"", []string{`printers[2] (id "bar-1").trust_spooler: required for driver = "spooler": true (`, ") or false ("}},
		{"DevID", "driver = \"epos\"\naddress = \"http://192.168.1.50\"\ndevid = \"local printer\"", []string{`printers[2] (id "bar-1").devid: "local printer" must be 1-64 letters`}},
		{"EPOSAddress", "driver = \"epos\"\naddress = \"192.168.1.50:80\"", []string{`printers[2] (id "bar-1").address: "192.168.1.50:80" is not the printer's base URL`}},
		{"MAC", "driver = \"cloudprnt\"\nmac = \"00:11:62\"", []string{`printers[2] (id "bar-1").mac: `}},
		{"Emulation", "driver = \"cloudprnt\"\nmac = \"00:11:62:1d:9a:b7\"\nemulation = \"zpl\"", []string{`printers[2] (id "bar-1").emulation: "zpl" is not one of starprnt, escpos`}},
		{"DuplicateMAC", "driver = \"cloudprnt\"\nmac = \"00:11:62:1d:9a:b7\"\n[[printers]]\nid = \"bar-2\"\ndriver = \"cloudprnt\"\nmac = \"00-11-62-1D-9A-B7\"",
			[]string{`printers[3] (id "bar-2").mac: 00:11:62:1d:9a:b7 is printer "bar-1"'s MAC address too`}},
		{"NoID", "driver = \"tcp\"\naddress = \"10.0.0.9:9100\"\njob_log = true\n[[printers]]\ndriver = \"tcp\"\naddress = \"10.0.0.9:9100\"\nbaud = 1", []string{`printers[2] (id "bar-1").job_log`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toml.Parse(withPrinter(tc.keys))
			if err == nil {
				t.Fatal("got no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to mention %q", err, w)
				}
			}
		})
	}
}
