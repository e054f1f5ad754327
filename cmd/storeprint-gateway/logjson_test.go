package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// cloudToken is the gateway's sync credential in the log tests: it must
// never be logged.
const cloudToken = "gw-secret-0123456789abcdef"

// The gateway with --log-format json, or log_format = "json" in its
// config, writes one JSON object a line, every one with time, level and
// msg, the store's id and the gateway's credential id, the printer and
// the task as printer_id and task_no where a line is about them, and
// never a token. The flag wins over the config.
func TestMain_LogFormatJSON(t *testing.T) {
	t.Parallel()
	bin := gatewayBinary(t)
	for _, tc := range []struct {
		name     string
		top      string
		flag     string
		wantJSON bool
	}{
		{"Flag", "", "json", true},
		{"Config", `log_format = "json"` + "\n", "", true},
		{"FlagWins", `log_format = "json"` + "\n", "text", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hot, cold := gatewaytest.StartSim(t, printersim.FaultNone), gatewaytest.StartSim(t, printersim.FaultLostAck)
			// The link goes nowhere (it logs that it is down) and the cold
			// printer never confirms (its ticket needs a person, and the
			// log says which).
			top := tc.top + "\n[cloud]\nurl = \"ws://127.0.0.1:1/v1/sync\"\ninsecure = true\ngateway_id = \"gw-log\"\ntoken = \"" + cloudToken + "\"\n"
			cfg := writeConfig(t, gatewaytest.ConfigTop(t, t.TempDir(), top,
				[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}, {ID: "cold-1", Addr: cold.Addr}},
				[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
			args := []string{"run", "--config", cfg}
			if tc.flag != "" {
				args = append(args, "--log-format", tc.flag)
			}
			g := testbin.StartGatewayCmd(t, exec.Command(bin, args...))
			gatewaytest.Call(t, "POST", g.Base+"/v1/orders", gatewaytest.Order("log-1", "hot", "cold"), nil)
			gatewaytest.WaitStatus(t, g.Base, "order_log-1_station_hot", "done", 10*time.Second)
			gatewaytest.WaitStatus(t, g.Base, "order_log-1_station_cold", "attention_required", 20*time.Second)
			if err := g.Interrupt(t, 20*time.Second); err != nil {
				t.Fatalf("gateway stopped with %v", err)
			}
			log := g.Log()
			for _, secret := range []string{gatewaytest.Token, cloudToken} {
				if strings.Contains(log, secret) {
					t.Errorf("the log holds a token:\n%s", log)
				}
			}
			if !tc.wantJSON {
				if strings.HasPrefix(strings.TrimSpace(log), "{") {
					t.Errorf("--log-format text: got JSON lines:\n%s", log)
				}
				return
			}
			recs, err := testlog.JSONLines(log)
			if err != nil {
				t.Fatal(err)
			}
			keys := map[string]bool{}
			for _, rec := range recs {
				if rec["store_id"] != "store-test" || rec["gateway_id"] != "gw-log" {
					t.Errorf("a line lacks store_id store-test or gateway_id gw-log: %v", rec)
				}
				for k := range rec {
					keys[k] = true
				}
				if _, ok := rec["printer"]; ok {
					t.Errorf("a printer's id must be printer_id: %v", rec)
				}
			}
			for _, k := range []string{"printer_id", "task_no"} {
				if !keys[k] {
					t.Errorf("no line says %s; the log:\n%s", k, log)
				}
			}
		})
	}
}

// A gateway that stops on an error says why in the same shape as the rest
// of its log: with log_format = "json" and its address taken, its last
// line is a JSON object naming the error.
func TestMain_LogFormatJSONStopped(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := writeConfig(t, gatewaytest.ConfigTop(t, t.TempDir(), `log_format = "json"`+"\n", []gatewaytest.PrinterConf{{ID: "hot-1", Addr: "127.0.0.1:9"}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `listen = "127.0.0.1:0"`, fmt.Sprintf("listen = %q", taken.Addr().String()), 1))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	exit := testbin.Run(t, 30*time.Second, gatewayBinary(t), "run", "--config", cfg)
	if exit.Code != 1 {
		t.Fatalf("got exit status %d, want 1:\n%s", exit.Code, exit.Log)
	}
	var last map[string]any
	for line := range strings.Lines(exit.Log) {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("a line is not a JSON object: %v\n%s", err, line)
		}
	}
	if last["level"] != "ERROR" || last["msg"] != "storeprint-gateway stopped" || !strings.Contains(fmt.Sprint(last["err"]), "listen") {
		t.Fatalf("got last line %v, want the error it stopped with", last)
	}
}
