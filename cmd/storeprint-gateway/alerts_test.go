package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The shipped alert rules fire on what a real gateway serves, not only on
// the series their unit tests make up: a gateway whose link is down, with
// a printer out of paper holding a ticket and a ticket that needs a
// person, is scraped, its samples held for 15 minutes, and promtool
// evaluates deploy/prometheus on them. The labels the rules match on
// (printer, status) are the ones the gateway writes.
func TestMain_AlertsFire(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Missing(t, "promtool", err, "apt-get install -y prometheus")
	}
	paper, lost := gatewaytest.StartSim(t, printersim.FaultPaperEnd), gatewaytest.StartSim(t, printersim.FaultLostAck)
	top := "[cloud]\nurl = \"ws://127.0.0.1:1/v1/sync\"\ninsecure = true\ngateway_id = \"gw-alerts\"\ntoken = \"" + cloudToken + "\"\n"
	cfg := writeConfig(t, gatewaytest.ConfigTop(t, t.TempDir(), top,
		[]gatewaytest.PrinterConf{{ID: "hot-1", Addr: paper.Addr}, {ID: "cold-1", Addr: lost.Addr}},
		[]gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}, {Name: "cold", Printer: "cold-1"}}))
	_, base := runGateway(t, cfg)
	gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("al-1", "hot", "cold"), nil)
	gatewaytest.WaitStatus(t, base, "order_al-1_station_cold", "attention_required", 20*time.Second)
	var text string
	gatewaytest.WaitUntil(t, base, 20*time.Second, func() (bool, string) {
		text = metricsText(t, base)
		return strings.Contains(text, `storeprint_printer_status{printer="hot-1",status="paper_end"} 1`) &&
			strings.Contains(text, `storeprint_queue_depth{printer="hot-1"} 1`), "hot-1 not yet out of paper with its ticket"
	})

	dir := t.TempDir()
	rules := rulesWithoutAnnotations(t, filepath.Join("..", "..", "deploy", "prometheus", "storeprint.yml"), filepath.Join(dir, "rules.yml"))
	const instance = "store-test:8080"
	var series []map[string]string
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "storeprint_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		name, labels, _ := strings.Cut(line[:i], "{")
		labels = strings.TrimSuffix(labels, "}")
		sel := fmt.Sprintf(`%s{job="storeprint-gateway",instance=%q`, name, instance)
		if labels != "" {
			sel += "," + labels
		}
		series = append(series, map[string]string{"series": sel + "}", "values": line[i+1:] + "x30"})
	}
	labels := map[string]string{"job": "storeprint-gateway", "instance": instance}
	expect := func(alert string, extra map[string]string, severity string) map[string]any {
		l := map[string]string{"severity": severity}
		for k, v := range labels {
			l[k] = v
		}
		for k, v := range extra {
			l[k] = v
		}
		return map[string]any{"eval_time": "15m", "alertname": alert, "exp_alerts": []any{map[string]any{"exp_labels": l}}}
	}
	quiet := func(alert string) map[string]any {
		return map[string]any{"eval_time": "15m", "alertname": alert, "exp_alerts": []any{}}
	}
	tests := map[string]any{
		"rule_files":          []string{rules},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":     "1m",
			"input_series": series,
			"alert_rule_test": []any{
				expect("StoreprintSyncLinkDown", nil, "ticket"),
				expect("StoreprintTicketsNeedPerson", nil, "page"),
				expect("StoreprintPrinterNotReady", map[string]string{"printer": "hot-1"}, "page"),
				quiet("StoreprintSyncBacklogOld"), // its link is down: that alert, not this one
				quiet("StoreprintStorageFailing"),
			},
		}},
	}
	b, err := yaml.Marshal(tests)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gateway_test.yml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "test", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules on the gateway's samples: %v\n%s", err, out)
	}
}

// rulesWithoutAnnotations writes the rule file from to to without its
// annotations (what the alerts say is the unit tests' business; this
// test checks when they fire) and returns to.
func rulesWithoutAnnotations(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string           `yaml:"name"`
			Rules []map[string]any `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			delete(r, "annotations")
		}
	}
	if b, err = yaml.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}
