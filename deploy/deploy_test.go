package deploy_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/storeprint/storeprint/deploy"
	"github.com/storeprint/storeprint/internal/testenv"
)

// promtool returns promtool's path. Without it the test skips, or fails
// in CI: .ci/run installs it (Debian's prometheus package).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Missing(t, "promtool", err, "apt-get install -y prometheus")
	}
	return p
}

// The rule files pass promtool check rules, and their unit tests pass
// promtool test rules.
func TestRules_Promtool(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	files, err := deploy.RuleFiles()
	if err != nil {
		t.Fatal(err)
	}
	tests, err := fs.Glob(deploy.Files, "prometheus/*_test.yml")
	if err != nil || len(tests) == 0 {
		t.Fatalf("no rule tests (prometheus/*_test.yml): %v", err)
	}
	for name := range files {
		if out, err := exec.Command(bin, "check", "rules", name).CombinedOutput(); err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", name, err, out)
		}
	}
	for _, name := range tests {
		if out, err := exec.Command(bin, "test", "rules", name).CombinedOutput(); err != nil {
			t.Errorf("promtool test rules %s: %v\n%s", name, err, out)
		}
	}
}

// ruleTests is a promtool rule test file, as far as this test reads it.
type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name  string `yaml:"name"`
		Cases []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// Every alert says what happened (summary) and what to do (runbook, with
// its section of docs/operations.md), pages or makes a ticket, and has a
// unit test in which it fires and one in which it does not. There are
// alerts for each thing a chain pages on.
func TestRules_Alerts(t *testing.T) {
	t.Parallel()
	files, err := deploy.RuleFiles()
	if err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	tests, _ := fs.Glob(deploy.Files, "prometheus/*_test.yml")
	for _, name := range tests {
		b, err := deploy.Files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var rt ruleTests
		if err := yaml.Unmarshal(b, &rt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tc := range rt.Tests {
			for _, c := range tc.Cases {
				if len(c.ExpAlerts) > 0 {
					fires[c.Alertname] = true
				} else {
					quiet[c.Alertname] = true
				}
			}
		}
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for name, r := range files {
		for _, g := range r.Groups {
			for _, rule := range g.Rules {
				if rule.Alert == "" {
					continue
				}
				alerts = append(alerts, rule.Alert)
				anchor := "docs/operations.md#" + strings.ToLower(rule.Alert)
				switch {
				case rule.Annotations["summary"] == "":
					t.Errorf("%s: %s has no summary", name, rule.Alert)
				case !strings.Contains(rule.Annotations["runbook"], anchor):
					t.Errorf("%s: %s: the runbook annotation must say what to do and end with %s", name, rule.Alert, anchor)
				case rule.Labels["severity"] != "page" && rule.Labels["severity"] != "ticket":
					t.Errorf("%s: %s: severity %q, want page or ticket", name, rule.Alert, rule.Labels["severity"])
				}
				if !strings.Contains(string(doc), "### "+rule.Alert+"\n") {
					t.Errorf("docs/operations.md has no section ### %s", rule.Alert)
				}
				if !fires[rule.Alert] || !quiet[rule.Alert] {
					t.Errorf("%s: %s needs a unit test in which it fires (%t) and one in which it does not (%t)", name, rule.Alert, fires[rule.Alert], quiet[rule.Alert])
				}
			}
		}
	}
	for _, want := range []string{"StoreprintSyncLinkDown", "StoreprintSyncBacklogOld", "StoreprintTicketsNeedPerson", "StoreprintPrinterNotReady",
		"StoreprintDiskLow", "StoreprintCloudDeadLetters", "StoreprintCloudIngestSaturated"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s", want)
		}
	}
	for a := range fires {
		if !slices.Contains(alerts, a) {
			t.Errorf("the tests name an alert no rule raises: %s", a)
		}
	}
}

// grafanaVarRE finds the variables a dashboard string uses.
var grafanaVarRE = regexp.MustCompile(`\$\{([a-zA-Z0-9_]+)(?::[a-z]+)?\}|\$([a-zA-Z_][a-zA-Z0-9_]*)`)

// The dashboards import as they are: each has a data source variable
// (DS_PROMETHEUS) that every panel and query uses, uses no variable it
// does not define, and its panels fit Grafana's 24-column grid with
// unique ids.
func TestDashboards(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(deploy.Files, "grafana/*.json")
	if err != nil || len(names) < 2 {
		t.Fatalf("got dashboards %v (%v), want the gateway's and the cloud's", names, err)
	}
	uids := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			b, err := deploy.Files.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				UID        string `json:"uid"`
				Title      string `json:"title"`
				Templating struct {
					List []struct {
						Name       string          `json:"name"`
						Type       string          `json:"type"`
						Query      json.RawMessage `json:"query"`
						Datasource *datasource     `json:"datasource"`
					} `json:"list"`
				} `json:"templating"`
				Panels []panel `json:"panels"`
			}
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if d.UID == "" || d.Title == "" || uids[d.UID] {
				t.Errorf("uid %q, title %q: want both, the uid unique", d.UID, d.Title)
			}
			uids[d.UID] = true
			vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true, "__all": true}
			for _, v := range d.Templating.List {
				vars[v.Name] = true
				if v.Name == "DS_PROMETHEUS" && (v.Type != "datasource" || string(v.Query) != `"prometheus"`) {
					t.Errorf("DS_PROMETHEUS: type %s, query %s; want a datasource variable of Prometheus sources", v.Type, v.Query)
				}
				if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != "${DS_PROMETHEUS}") {
					t.Errorf("variable %s does not query ${DS_PROMETHEUS}", v.Name)
				}
			}
			if !vars["DS_PROMETHEUS"] {
				t.Fatal("no data source variable DS_PROMETHEUS")
			}
			for _, m := range grafanaVarRE.FindAllStringSubmatch(string(b), -1) {
				if v := m[1] + m[2]; !vars[v] {
					t.Errorf("uses $%s, which it does not define", v)
				}
			}
			ids := map[int]bool{}
			queries := 0
			for _, p := range d.Panels {
				if ids[p.ID] {
					t.Errorf("panel id %d twice", p.ID)
				}
				ids[p.ID] = true
				if p.GridPos.X < 0 || p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
					t.Errorf("panel %q: gridPos %+v does not fit 24 columns", p.Title, p.GridPos)
				}
				if p.Type == "row" {
					continue
				}
				if p.Datasource == nil || p.Datasource.UID != "${DS_PROMETHEUS}" || p.Description == "" {
					t.Errorf("panel %q: datasource %+v, description %q; want ${DS_PROMETHEUS} and a description", p.Title, p.Datasource, p.Description)
				}
				if len(p.Targets) == 0 {
					t.Errorf("panel %q has no query", p.Title)
				}
				for _, q := range p.Targets {
					queries++
					if q.Expr == "" || q.Datasource == nil || q.Datasource.UID != "${DS_PROMETHEUS}" {
						t.Errorf("panel %q: query %s %q: want an expression on ${DS_PROMETHEUS}", p.Title, q.RefID, q.Expr)
					}
				}
			}
			if queries < 10 {
				t.Errorf("got %d queries, want a dashboard", queries)
			}
		})
	}
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *datasource `json:"datasource"`
	GridPos     struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
}

func TestMetricNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`storeprint_sync_link_up == 0`, []string{"storeprint_sync_link_up"}},
		{`sum by (job, instance) (storeprint_tasks{status=~"failed|attention_required"}) > 0`, []string{"storeprint_tasks"}},
		{`max by (job, instance, printer) (storeprint_printer_status{status!="ready"}) == 1 and on (job, instance, printer) storeprint_queue_depth > 0`,
			[]string{"storeprint_printer_status", "storeprint_queue_depth"}},
		{`histogram_quantile(0.95, sum by (le) (rate(storeprint_cloud_ingest_batch_seconds_bucket{job="$job",instance=~"$instance"}[$__rate_interval])))`,
			[]string{"storeprint_cloud_ingest_batch_seconds_bucket"}},
		{`storeprint_queue_depth{job="$job"} * on (job, instance, printer) group_right storeprint_station_printer{job="${job}"}`,
			[]string{"storeprint_queue_depth", "storeprint_station_printer"}},
		{`sum(increase(storeprint_cloud_dead_letters_total[15m])) > 1e3 or vector(0)`, []string{"storeprint_cloud_dead_letters_total"}},
		{`avg_over_time(x2y[10m]) / up offset 5m`, []string{"x2y", "up"}},
	} {
		if got := deploy.MetricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// Uses lists what both programs' dashboards and rules read.
func TestUses(t *testing.T) {
	t.Parallel()
	uses, err := deploy.Uses()
	if err != nil {
		t.Fatal(err)
	}
	for program, want := range map[string]string{deploy.Gateway: "storeprint_sync_link_up", deploy.Cloud: "storeprint_cloud_links"} {
		if !slices.Contains(uses[program], want) || !slices.Contains(uses[program], "storeprint_build_info") {
			t.Errorf("%s: got %v, want %s and storeprint_build_info among them", program, uses[program], want)
		}
	}
}

// Every query of the dashboards is PromQL that promtool parses, once
// Grafana's variables are given values: each becomes a recording rule of
// a file promtool check rules reads.
func TestDashboards_PromQL(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	names, _ := fs.Glob(deploy.Files, "grafana/*.json")
	vars := strings.NewReplacer("${DS_PROMETHEUS}", "prom", "$__rate_interval", "5m", "$__interval", "1m", "$__range", "6h",
		"$job", "storeprint-gateway", "$instance", ".+")
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for _, name := range names {
		b, err := deploy.Files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []panel `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Panels {
			for _, q := range p.Targets {
				rules = append(rules, rule{Record: "dashboard:query", Expr: vars.Replace(q.Expr)})
			}
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboards", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/dashboards.yml"
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboards' queries: %v\n%s", err, out)
	}
}
