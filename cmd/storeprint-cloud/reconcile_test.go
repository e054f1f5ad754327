package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/testbin"
)

// storeprint reconcile, the ops CLI's command, run as the real program
// against the real cloud, the real gateway program and a printer
// simulator, with the sync link cut by a proxy.

func storeprintBinary(t testing.TB) string {
	return testbin.Build(t, "github.com/storeprint/storeprint/cmd/storeprint")
}

// reconcileRun is one run of storeprint reconcile.
type reconcileRun struct {
	code           int
	stdout, stderr string
}

// report decodes a --json run's report.
func (r reconcileRun) report(t testing.TB) reconcileReport {
	t.Helper()
	var rep reconcileReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("the report %q is not JSON: %v", r.stdout, err)
	}
	return rep
}

// The parts of the JSON report the tests read.
type reconcileReport struct {
	InSync bool            `json:"in_sync"`
	Check  reconcileCheck  `json:"check"`
	Before *reconcileCheck `json:"before"`
	// Applied is null without --apply.
	Applied *[]struct {
		OrderID string   `json:"order_id"`
		TaskNos []string `json:"task_nos"`
		Result  string   `json:"result"`
	} `json:"applied"`
}

type reconcileCheck struct {
	Link struct {
		Configured bool   `json:"configured"`
		Connected  bool   `json:"connected"`
		Pending    uint64 `json:"pending"`
	} `json:"link"`
	LinkBehind  bool   `json:"link_behind"`
	LinkNote    string `json:"link_note"`
	Differences []struct {
		TaskNo string `json:"task_no"`
		Kind   string `json:"kind"`
		Repair string `json:"repair"`
	} `json:"differences"`
}

// kinds lists the differences as task_no:kind:repair.
func (c reconcileCheck) kinds() string {
	var out []string
	for _, d := range c.Differences {
		out = append(out, d.TaskNo+":"+d.Kind+":"+d.Repair)
	}
	return strings.Join(out, " ")
}

// reconciler runs storeprint reconcile with its tokens in the environment,
// and checks that no run shows them.
type reconciler struct {
	gateway, cloud, store string
	gatewayToken          string
	cloudToken            string
}

func (rc reconciler) run(t testing.TB, args ...string) reconcileRun {
	t.Helper()
	full := append([]string{"reconcile", "--gateway", rc.gateway, "--cloud", rc.cloud, "--store", rc.store, "--timeout", "10s"}, args...)
	return rc.exec(t, map[string]string{"STOREPRINT_GATEWAY_TOKEN": rc.gatewayToken, "STOREPRINT_CLOUD_TOKEN": rc.cloudToken}, full...)
}

func (rc reconciler) exec(t testing.TB, env map[string]string, args ...string) reconcileRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, storeprintBinary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STOREPRINT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := reconcileRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("storeprint %s: %v", strings.Join(args, " "), err)
	}
	for _, tok := range []string{rc.gatewayToken, rc.cloudToken, posToken, adminToken} {
		if strings.Contains(r.stdout+r.stderr, tok) {
			t.Fatalf("storeprint %s shows a token:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
	return r
}

// waitLink waits until the gateway's sync link is up or down.
func waitLink(t testing.TB, g *gatewayProc, connected bool) {
	t.Helper()
	waitGateway(t, g, 10*time.Second, func() (bool, string) {
		var h linkState
		do(t, posToken, "GET", g.base+"/healthz", nil, &h)
		return h.Cloud.Connected == connected, fmt.Sprintf("the link is still connected=%v", h.Cloud.Connected)
	})
}

// waitAudit waits until the gateway's audit log has action on taskNo.
func waitAudit(t testing.TB, g *gatewayProc, action, taskNo string) {
	t.Helper()
	waitGateway(t, g, 30*time.Second, func() (bool, string) {
		var entries []struct {
			Action string `json:"action"`
			TaskNo string `json:"task_no"`
		}
		do(t, posToken, "GET", g.base+"/v1/audit?after=0", nil, &entries)
		for _, e := range entries {
			if e.Action == action && strings.Contains(e.TaskNo, taskNo) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %s of %s in the gateway's audit log: %+v", action, taskNo, entries)
	})
}

// After an outage: a cloud order posted while the store is cut off, and a
// POS order the cloud has not heard of. Reconcile reports both and that
// the link is behind; --apply delivers the cloud order through the POS
// API; it prints once, also after the link comes back and delivers it
// again; reconcile then finds the two sides in sync.
func TestReconcile_Outage(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-reconcile")
	var tenant struct {
		Token string `json:"token"`
	}
	if code := do(t, adminToken, "POST", node.base+"/v1/admin/tenants/t1/tokens", nil, &tenant); code != 201 {
		t.Fatalf("tenant token: %d", code)
	}
	px := startProxy(t, strings.TrimPrefix(node.base, "http://"))
	hot, hotAddr := startSim(t)
	g := startGateway(t, st, px.addr(), map[string]string{"hot-1": hotAddr})
	g.dbURL = dbURL
	rc := reconciler{gateway: g.base, cloud: node.base, store: st.id, gatewayToken: posToken, cloudToken: tenant.Token}
	waitPaper := func(n int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := hot.WaitPrinted(ctx, n); err != nil {
			t.Fatalf("%d tickets: got %d", n, len(hot.Printed()))
		}
	}

	if code := postOrder(t, g.base, "pos-1", "hot"); code != 201 {
		t.Fatalf("POS order: %d", code)
	}
	waitPaper(1)
	waitSynced(t, g, 30*time.Second)
	t.Run("InSync", func(t *testing.T) {
		r := rc.run(t)
		if r.code != 0 || !strings.Contains(r.stdout, "in sync: 1 task,") || !strings.Contains(r.stdout, "sync link: connected") {
			t.Fatalf("got exit %d:\n%s%s\nwant 0 and in sync", r.code, r.stdout, r.stderr)
		}
	})

	// The outage: the store is cut off from the cloud.
	px.SetDown(true)
	waitLink(t, g, false)
	web := map[string]any{"order_id": "web-1", "table": "外卖", "items": []map[string]any{{"name": "外卖套餐", "qty": 1, "station": "hot"}}}
	if code := do(t, adminToken, "POST", node.base+"/v1/stores/"+st.id+"/orders", web, nil); code != 201 {
		t.Fatalf("cloud order: %d", code)
	}
	if code := postOrder(t, g.base, "pos-2", "hot"); code != 201 {
		t.Fatalf("POS order: %d", code)
	}
	waitPaper(2)

	t.Run("Report", func(t *testing.T) {
		r := rc.run(t, "--json")
		rep := r.report(t)
		want := "order_pos-2_station_hot:missing_in_cloud:link order_web-1_station_hot:missing_at_store:deliver"
		if r.code != 1 || rep.InSync || rep.Check.kinds() != want || rep.Applied != nil {
			t.Fatalf("got exit %d, differences %q, applied %v; want 1 and %q", r.code, rep.Check.kinds(), rep.Applied, want)
		}
		if l := rep.Check.Link; !l.Configured || l.Connected || l.Pending == 0 || !rep.Check.LinkBehind ||
			!strings.HasSuffix(rep.Check.LinkNote, " behind; differences may clear by themselves") {
			t.Fatalf("got link %+v, note %q; want down and behind", l, rep.Check.LinkNote)
		}

		r = rc.run(t)
		for _, w := range []string{"sync link: down", "order_web-1_station_hot  missing_at_store  -", "--apply delivers order web-1",
			"2 differences (1 missing at the store, 1 missing in the cloud)", " behind; differences may clear by themselves"} {
			if r.code != 1 || !strings.Contains(r.stdout, w) {
				t.Errorf("got exit %d:\n%s\nwant 1 and %q", r.code, r.stdout, w)
			}
		}
	})

	t.Run("Errors", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nowhere := "http://" + ln.Addr().String()
		ln.Close()
		var other struct {
			Token string `json:"token"`
		}
		do(t, adminToken, "POST", node.base+"/v1/admin/tenants", map[string]string{"tenant_id": "t2", "name": "t2"}, nil)
		do(t, adminToken, "POST", node.base+"/v1/admin/tenants/t2/tokens", nil, &other)
		tests := []struct {
			name string
			rc   reconciler
			code int
			want string
		}{
			{"OtherStore", reconciler{g.base, node.base, "s-other", posToken, adminToken}, 2, `--store: the gateway at ` + g.base + ` serves store "s-reconcile", not "s-other"`},
			{"GatewayToken", reconciler{g.base, node.base, st.id, "not-a-pos-token", adminToken}, 2, "--gateway-token: the gateway refused the token (401"},
			{"CloudToken", reconciler{g.base, node.base, st.id, posToken, "not-a-cloud-token"}, 2, "--cloud-token: the cloud refused the token (401"},
			{"OtherTenant", reconciler{g.base, node.base, st.id, posToken, other.Token}, 2, `--store: the cloud at ` + node.base + ` has no store "s-reconcile"`},
			{"CloudUnreachable", reconciler{g.base, nowhere, st.id, posToken, adminToken}, 3, "cannot read the cloud at " + nowhere + " (--cloud)"},
			{"GatewayUnreachable", reconciler{nowhere, node.base, st.id, posToken, adminToken}, 3, "cannot read the gateway at " + nowhere + " (--gateway)"},
		}
		for _, tt := range tests {
			r := tt.rc.run(t)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("%s: got exit %d, stderr %q; want %d and %q", tt.name, r.code, r.stderr, tt.code, tt.want)
			}
		}
		r := rc.exec(t, nil, "reconcile", "--gateway", g.base, "--cloud", node.base, "--store", st.id)
		if r.code != 2 || !strings.Contains(r.stderr, "--gateway-token (or STOREPRINT_GATEWAY_TOKEN) is required") {
			t.Errorf("no token: got exit %d, stderr %q; want 2 naming --gateway-token", r.code, r.stderr)
		}
	})

	t.Run("Apply", func(t *testing.T) {
		r := rc.run(t, "--apply", "--json")
		rep := r.report(t)
		if r.code != 1 || rep.Applied == nil || len(*rep.Applied) != 1 || (*rep.Applied)[0].OrderID != "web-1" ||
			(*rep.Applied)[0].Result != "delivered" || rep.Before == nil || len(rep.Before.Differences) != 2 {
			t.Fatalf("got exit %d, report:\n%s\nwant web-1 delivered and differences left to the link", r.code, r.stdout)
		}
		// What remains is for the link: the cloud has not heard yet.
		if got, want := rep.Check.kinds(), "order_pos-2_station_hot:missing_in_cloud:link order_web-1_station_hot:status:link"; got != want {
			t.Fatalf("got differences %q after --apply, want %q", got, want)
		}
		waitPaper(3)
		if tk := hot.Printed()[2]; tk.TaskNo != "order_web-1_station_hot" {
			t.Fatalf("got ticket %s, want the cloud order", tk.TaskNo)
		}

		// Again: nothing left to deliver, nothing posted twice.
		r = rc.run(t, "--apply")
		if r.code != 1 || !strings.Contains(r.stdout, "apply: no cloud order to deliver") || strings.Contains(r.stdout, "after --apply") {
			t.Fatalf("got exit %d:\n%s\nwant nothing applied", r.code, r.stdout)
		}
	})

	// The link comes back: the cloud delivers web-1 as well, which the
	// gateway answers as a replay, and replays the store's events.
	px.SetDown(false)
	waitAudit(t, g, "duplicate_prevented", "order_web-1_station_hot")
	waitSynced(t, g, 30*time.Second)
	t.Run("Recovered", func(t *testing.T) {
		r := rc.run(t, "--apply")
		if r.code != 0 || !strings.Contains(r.stdout, "in sync: 3 tasks,") || !strings.Contains(r.stdout, "apply: no cloud order to deliver") {
			t.Fatalf("got exit %d:\n%s%s\nwant 0 and in sync", r.code, r.stdout, r.stderr)
		}
		var printed []string
		for _, tk := range hot.Printed() {
			printed = append(printed, tk.TaskNo)
		}
		if want := []string{"order_pos-1_station_hot", "order_pos-2_station_hot", "order_web-1_station_hot"}; strings.Join(printed, " ") != strings.Join(want, " ") {
			t.Fatalf("got paper %v, want each ticket once: %v", printed, want)
		}
	})
}
