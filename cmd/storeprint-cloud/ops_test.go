package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/deploy"
	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/sync"
)

// The families the design names, on the program each applies to.
var contractFamilies = map[string][]string{
	deploy.Gateway: {"storeprint_build_info", "storeprint_sync_link_up", "storeprint_sync_pending_events", "storeprint_sync_oldest_pending_seconds"},
	deploy.Cloud: {"storeprint_build_info", "storeprint_cloud_links", "storeprint_cloud_ingested_events_total",
		"storeprint_cloud_dead_letters_total", "storeprint_cloud_alerts_open"},
}

// A real gateway linked to a real cloud on PostgreSQL, after an order
// printed and synced: both /metrics pass promtool check metrics, serve
// every family the design names with the values the link has, and every
// metric a shipped dashboard or alert rule reads.
func TestOps_Metrics(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t-ops", "s-ops")
	_, hotAddr := startSim(t)
	g := startGateway(t, st, strings.TrimPrefix(node.base, "http://"), map[string]string{"hot-1": hotAddr})
	g.dbURL = dbURL
	if code := postOrder(t, g.base, "ops-1", "hot"); code != 201 {
		t.Fatalf("order: %d", code)
	}
	waitSynced(t, g, time.Minute)

	served := map[string]string{
		deploy.Gateway: scrape(t, g.base+"/metrics", posToken),
		deploy.Cloud:   scrape(t, node.base+"/metrics", adminToken),
	}
	if bin, err := exec.LookPath("promtool"); err == nil {
		for program, text := range served {
			cmd := exec.Command(bin, "check", "metrics")
			cmd.Stdin = strings.NewReader(text)
			if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("promtool check metrics on the %s's /metrics: %v\n%s", program, err, out)
			}
		}
	} else if testenv.MaySkip() {
		t.Log("promtool is not installed (apt-get install prometheus): promtool check metrics skipped")
	} else {
		t.Error("promtool is not installed: apt-get install prometheus (.ci/run does); in CI (CI=true) a missing program fails its tests")
	}

	for program, families := range contractFamilies {
		names := sampleNames(served[program])
		for _, f := range families {
			if !names[f] {
				t.Errorf("the %s does not serve %s", program, f)
			}
		}
	}
	gw, cl := served[deploy.Gateway], served[deploy.Cloud]
	for name, want := range map[string]float64{"storeprint_sync_link_up": 1, "storeprint_sync_pending_events": 0, "storeprint_sync_oldest_pending_seconds": 0} {
		if got := sample(t, gw, name); got != want {
			t.Errorf("gateway %s: got %v, want %v once synced", name, got, want)
		}
	}
	for name, want := range map[string]float64{"storeprint_cloud_links": 1, "storeprint_cloud_dead_letters_total": 0,
		`storeprint_cloud_stores{state="online"}`: 1, `storeprint_cloud_stores{state="offline"}`: 0, `storeprint_cloud_alerts_open{kind="failed"}`: 0} {
		if got := sample(t, cl, name); got != want {
			t.Errorf("cloud %s: got %v, want %v", name, got, want)
		}
	}
	// The order's task went queued, printing, done, with its receipts:
	// events the cloud ingested.
	if got := sample(t, cl, "storeprint_cloud_ingested_events_total"); got < 3 {
		t.Errorf("cloud storeprint_cloud_ingested_events_total: got %v, want the order's events", got)
	}
	for program, text := range served {
		if !strings.Contains(text, `storeprint_build_info{goversion="go`) {
			t.Errorf("the %s's storeprint_build_info lacks its labels", program)
		}
	}

	uses, err := deploy.Uses()
	if err != nil {
		t.Fatal(err)
	}
	for program, want := range uses {
		names := sampleNames(served[program])
		for _, n := range want {
			if program == deploy.Gateway && strings.HasPrefix(n, "storeprint_cluster_") {
				continue // served on a [cluster] only: TestMain_Cluster checks them
			}
			if !names[n] {
				t.Errorf("deploy/ reads %s from the %s, which does not serve it", n, program)
			}
		}
	}
}

// scrape reads a /metrics, with a token unless it is "".
func scrape(t testing.TB, url, token string) string {
	t.Helper()
	req, err := nethttp.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// sampleNames returns the names of the samples in a text exposition (a
// histogram's as _bucket, _sum and _count).
func sampleNames(text string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}

// sample returns the value of the sample written exactly as series (name
// and labels, in the exposition's order).
func sample(t testing.TB, text, series string) float64 {
	t.Helper()
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return f
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range sampleNames(text) {
			if !yield(n) {
				return
			}
		}
	})
	t.Fatalf("no sample %s among %v", series, names)
	return 0
}

// The cloud with --log-format json writes one JSON object a line with
// time, level and msg, the ids from a request's route and a link's
// gateway and store under the keys the gateway's log uses, and never a
// token.
func TestMain_LogFormatJSON(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	node := startCloud(t, pgtest.NewDatabase(t), "127.0.0.1:0", func(m *Main) { m.LogFormat, m.Stderr = "json", logs })
	st := createStore(t, node.base, "t-log", "s-log")
	_, hotAddr := startSim(t)
	g := startGateway(t, st, strings.TrimPrefix(node.base, "http://"), map[string]string{"hot-1": hotAddr})
	if code := postOrder(t, g.base, "log-1", "hot"); code != 201 {
		t.Fatalf("order: %d", code)
	}
	waitSynced(t, g, time.Minute)
	var task struct{}
	if code := do(t, adminToken, "GET", node.base+"/v1/stores/s-log/tasks/order_nope_station_hot", nil, &task); code != 404 {
		t.Fatalf("unknown task: got %d, want 404", code)
	}
	if code := do(t, "not-a-token-at-all", "GET", node.base+"/v1/stores", nil, nil); code != 401 {
		t.Fatalf("bad token: got %d, want 401", code)
	}
	g.Stop(t, 20*time.Second) // the link's end is logged too
	node.close()

	text := logs.String()
	for _, secret := range []string{adminToken, st.token, "not-a-token-at-all"} {
		if strings.Contains(text, secret) {
			t.Errorf("the log holds a token:\n%s", text)
		}
	}
	recs, err := testlog.JSONLines(text)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		switch {
		case rec["msg"] == "sync link up" && rec["gateway_id"] == st.gatewayID && rec["store_id"] == st.id:
			seen["link"] = true
		case rec["msg"] == "request" && rec["store_id"] == st.id && rec["task_no"] == "order_nope_station_hot":
			seen["request"] = true
		case rec["msg"] == "bad token":
			seen["bad token"] = true
		}
	}
	for _, want := range []string{"link", "request", "bad token"} {
		if !seen[want] {
			t.Errorf("no %s line with its ids among %d:\n%s", want, len(recs), text)
		}
	}
}

// The cloud's shipped alerts fire on what a real node serves: with two
// of three stores not linked and an event dead-lettered between two
// scrapes, promtool evaluates deploy/prometheus on the node's samples
// (the first scrape's, then the second's for 30 minutes): many stores
// offline and dead letters fire, with the node's own labels, and the
// ingest, alert-waiting and database alerts do not.
func TestOps_CloudAlertsFire(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Missing(t, "promtool", err, "apt-get install -y prometheus")
	}
	// Scraped as a Prometheus server would, on --metrics-listen without a
	// token.
	node := startCloud(t, pgtest.NewDatabase(t), "127.0.0.1:0", func(m *Main) { m.MetricsListen = "127.0.0.1:0" })
	metricsURL := node.m.HTTP.MetricsURL() + "/metrics"
	a := createStore(t, node.base, "t-al", "s-al-1")
	createStore(t, node.base, "t-al", "s-al-2")
	createStore(t, node.base, "t-al", "s-al-3")
	l := dialLink(t, node.base, a)
	l.hello(a, "0123456789abcdef")
	first := scrape(t, metricsURL, "")
	nul := sync.Event{Seq: 1, Kind: sync.KindTask, TaskNo: "order_n_station_hot", At: time.Now().UTC(),
		Data: json.RawMessage(`{"task_no":"order_n_station_hot","version":1,"status":"queued","last_error":"a\u0000b"}`)}
	if ack := l.events(nul); len(ack.DeadLetters) != 1 {
		t.Fatalf("got %+v, want the event dead-lettered", ack)
	}
	second := scrape(t, metricsURL, "")

	const instance = "n1:9090"
	before := map[string]string{}
	for sel, v := range storeprintSamples(first) {
		before[sel] = v
	}
	var series []map[string]string
	for sel, v := range storeprintSamples(second) {
		was, ok := before[sel]
		if !ok {
			was = v
		}
		name, labels, _ := strings.Cut(strings.TrimSuffix(sel, "}"), "{")
		s := fmt.Sprintf(`%s{job="storeprint-cloud",instance=%q`, name, instance)
		if labels != "" {
			s += "," + labels
		}
		series = append(series, map[string]string{"series": s + "}", "values": was + " " + v + "x30"})
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "prometheus", "storeprint.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string           `yaml:"name"`
			Rules []map[string]any `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			delete(r, "annotations") // the unit tests check what they say; this, when they fire
		}
	}
	ruleFile := filepath.Join(dir, "rules.yml")
	if b, err = yaml.Marshal(rules); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ruleFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fires := func(alert, severity string, labels map[string]string) map[string]any {
		l := map[string]string{"severity": severity, "job": "storeprint-cloud"}
		for k, v := range labels {
			l[k] = v
		}
		return map[string]any{"eval_time": "12m", "alertname": alert, "exp_alerts": []any{map[string]any{"exp_labels": l}}}
	}
	quiet := func(alert string) map[string]any {
		return map[string]any{"eval_time": "12m", "alertname": alert, "exp_alerts": []any{}}
	}
	b, err = yaml.Marshal(map[string]any{
		"rule_files":          []string{ruleFile},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":     "1m",
			"input_series": series,
			"alert_rule_test": []any{
				fires("StoreprintCloudStoresOffline", "page", nil),
				fires("StoreprintCloudDeadLetters", "ticket", nil),
				quiet("StoreprintCloudIngestSaturated"),
				quiet("StoreprintCloudIngestSlow"),
				quiet("StoreprintCloudAlertWaiting"),
				quiet("StoreprintCloudCountsFailing"),
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	testFile := filepath.Join(dir, "cloud_test.yml")
	if err := os.WriteFile(testFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "test", "rules", testFile).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules on the cloud's samples: %v\n%s", err, out)
	}
}

// storeprintSamples returns the storeprint_ samples of a text exposition:
// series (name and labels as written) to value.
func storeprintSamples(text string) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "storeprint_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		out[line[:i]] = line[i+1:]
	}
	return out
}

// The error the cloud stops with is a JSON log line with --log-format
// json, a line of its own without.
func TestMain_Stopped(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "text"} {
		m, _ := newMain(nil)
		logs := &testlog.Buffer{}
		m.LogFormat, m.Stderr = format, logs
		m.Stopped(fmt.Errorf("connect to the database: refused"))
		var rec map[string]any
		err := json.Unmarshal([]byte(logs.String()), &rec)
		switch {
		case format == "json" && (err != nil || rec["level"] != "ERROR" || rec["msg"] != "storeprint-cloud stopped" || rec["err"] != "connect to the database: refused"):
			t.Errorf("json: got %q (%v), want a JSON error line", logs, err)
		case format == "text" && logs.String() != "storeprint-cloud: connect to the database: refused\n":
			t.Errorf("text: got %q", logs)
		}
	}
}
