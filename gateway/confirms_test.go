package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/epos"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

// confirmsPrinter is a printer that says how it confirms and is never
// asked to print.
type confirmsPrinter struct{ c storeprint.Confirm }

func (p confirmsPrinter) Status(context.Context) (storeprint.PrinterStatus, error) {
	return storeprint.PrinterStatus{State: storeprint.PrinterReady}, nil
}
func (p confirmsPrinter) Print(context.Context, *gateway.PrintJob) error { return nil }
func (p confirmsPrinter) Close() error                                   { return nil }
func (p confirmsPrinter) Confirms() storeprint.Confirm                   { return p.c }

// GET /v1/printers says how each printer confirms: the printer's own
// word, what its driver's options add to it (confirm = "auto" before the
// printer was reached; an ePOS printer configured with a job log that
// keeps none), and the note people read where it is weaker.
func TestGateway_PrintersConfirms(t *testing.T) {
	t.Parallel()
	yes := true
	for _, tc := range []struct {
		name     string
		pc       gateway.PrinterConfig
		c        storeprint.Confirm
		want     string
		wantNote storeprint.Word
	}{
		{"AutoBeforeReached", gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100"}, "", "auto", ""},
		{"StreamMethod", gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100"}, storeprint.ConfirmProcessID, "process_id", ""},
		{"StatusBeforeReached", gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100",
			Options: tcp.Options{Stream: printerdrivers.Stream{Confirm: "status"}}}, "", "status", ""},
		{"Status", gateway.PrinterConfig{Driver: "tcp", Address: "127.0.0.1:9100"}, storeprint.ConfirmStatus, "status", storeprint.WordConfirmsStatus},
		{"EPOSNoJobLog", gateway.PrinterConfig{Driver: "epos", Address: "http://192.168.1.50", Options: epos.Options{JobLog: true}}, storeprint.ConfirmEPOS, "epos", storeprint.WordConfirmsNoJobLog},
		{"EPOSJobLog", gateway.PrinterConfig{Driver: "epos", Address: "http://192.168.1.50", Options: epos.Options{JobLog: true}}, storeprint.ConfirmJobLog, "job_log", ""},
		{"EPOS", gateway.PrinterConfig{Driver: "epos", Address: "http://192.168.1.50"}, storeprint.ConfirmEPOS, "epos", ""},
		{"Spooler", gateway.PrinterConfig{Driver: "spooler", Address: "Kitchen", Options: winspool.Options{TrustSpooler: &yes}}, storeprint.ConfirmSpooler, "spooler", storeprint.WordConfirmsByWindows},
		{"CloudPRNT", gateway.PrinterConfig{Driver: "cloudprnt", Options: cloudprnt.Options{MAC: "00:11:62:1d:9a:b7"}}, storeprint.ConfirmCloudPRNT, "cloudprnt", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.pc.ID = "p-1"
			cfg := &gateway.Config{StoreID: "s1", Listen: "127.0.0.1:0", APITokens: []string{"token-123"},
				Printers: []gateway.PrinterConfig{tc.pc},
				Stations: []gateway.StationConfig{{Name: "hot", Printer: "p-1"}}}
			cfg.SetDefaults()
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			store, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			g, err := gateway.New(cfg, store, map[string]gateway.Printer{"p-1": confirmsPrinter{tc.c}}, gateway.Options{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			ps, err := g.Printers(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 || ps[0].Confirms != tc.want || ps[0].ConfirmsNote != tc.wantNote {
				t.Fatalf("got %+v, want confirms %q note %q", ps, tc.want, tc.wantNote)
			}
		})
	}
}
