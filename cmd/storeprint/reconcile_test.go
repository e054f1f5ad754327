package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/internal/testlog"
)

func st(status storeprint.Status, attempt int) *taskState {
	return &taskState{OrderID: "o", Status: status, Attempt: attempt}
}

var (
	linkUp       = linkState{Configured: true, Connected: true}
	linkDown     = linkState{Configured: true, LastSeq: 9, Cursor: 5, Pending: 4, LastError: "dial tcp: connection refused"}
	linkBehind   = linkState{Configured: true, Connected: true, LastSeq: 9, Cursor: 7, Pending: 2}
	linkDownIdle = linkState{Configured: true, LastSeq: 9, Cursor: 9}
	linkNone     = linkState{}
)

func TestCompare(t *testing.T) {
	t.Parallel()
	type want struct {
		kind   kind
		repair repair
		note   string // in the note
	}
	tests := []struct {
		name string
		gw   map[string]*taskState
		cl   map[string]*taskState
		link linkState
		want []want // by task_no
	}{
		{
			name: "InSync",
			gw:   map[string]*taskState{"a": st("done", 1), "b": st("failed", 5)},
			cl:   map[string]*taskState{"a": st("done", 1), "b": st("failed", 5)},
			link: linkUp,
		},
		{name: "Empty", link: linkNone},
		{
			name: "MissingInCloudLinkDown",
			gw:   map[string]*taskState{"a": st("done", 1)},
			link: linkDown,
			want: []want{{kindMissingInCloud, repairLink, "once connected"}},
		},
		{
			name: "MissingInCloudLinkReplaying",
			gw:   map[string]*taskState{"a": st("queued", 0)},
			link: linkBehind,
			want: []want{{kindMissingInCloud, repairLink, "is replaying"}},
		},
		{
			name: "MissingInCloudNothingPending",
			gw:   map[string]*taskState{"a": st("done", 1)},
			link: linkUp,
			want: []want{{kindMissingInCloud, repairPerson, "run again"}},
		},
		{
			name: "MissingInCloudNoLink",
			gw:   map[string]*taskState{"a": st("done", 1)},
			link: linkNone,
			want: []want{{kindMissingInCloud, repairPerson, "no cloud link"}},
		},
		{
			name: "CloudOrderNeverDelivered",
			cl:   map[string]*taskState{"a": st(cloud.StatusPendingDelivery, 0)},
			link: linkDown,
			want: []want{{kindMissingAtStore, repairDeliver, "--apply delivers order o"}},
		},
		{
			name: "CloudOrderLinkUp",
			cl:   map[string]*taskState{"a": st(cloud.StatusPendingDelivery, 0)},
			link: linkUp,
			want: []want{{kindMissingAtStore, repairDeliver, "unless the link does first"}},
		},
		{
			name: "CloudOrderNoLink",
			cl:   map[string]*taskState{"a": st(cloud.StatusPendingDelivery, 0)},
			link: linkNone,
			want: []want{{kindMissingAtStore, repairDeliver, "through the gateway"}},
		},
		{
			name: "StoreLostATask",
			cl:   map[string]*taskState{"a": st("done", 1)},
			link: linkUp,
			want: []want{{kindMissingAtStore, repairPerson, "the cloud saw it done"}},
		},
		{
			name: "DeliveredNotReported",
			gw:   map[string]*taskState{"a": st("done", 1)},
			cl:   map[string]*taskState{"a": st(cloud.StatusPendingDelivery, 0)},
			link: linkDown,
			want: []want{{kindStatus, repairLink, "once connected"}},
		},
		{
			name: "Status",
			gw:   map[string]*taskState{"a": st("done", 2)},
			cl:   map[string]*taskState{"a": st("attention_required", 1)},
			link: linkBehind,
			want: []want{{kindStatus, repairLink, "replaying"}},
		},
		{
			name: "Attempt",
			gw:   map[string]*taskState{"a": st("retry_wait", 3)},
			cl:   map[string]*taskState{"a": st("retry_wait", 2)},
			link: linkDown,
			want: []want{{kindAttempt, repairLink, "once connected"}},
		},
		{
			name: "AttemptDownNothingPending",
			gw:   map[string]*taskState{"a": st("retry_wait", 3)},
			cl:   map[string]*taskState{"a": st("retry_wait", 2)},
			link: linkDownIdle,
			want: []want{{kindAttempt, repairPerson, "nothing pending"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := compare(tt.gw, tt.cl, tt.link)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d differences %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				d := got[i]
				if d.Kind != w.kind || d.Repair != w.repair || !strings.Contains(d.Note, w.note) {
					t.Errorf("got %s %s %q, want %s %s with %q", d.Kind, d.Repair, d.Note, w.kind, w.repair, w.note)
				}
				if d.Gateway != tt.gw[d.TaskNo] || d.Cloud != tt.cl[d.TaskNo] || d.OrderID != "o" {
					t.Errorf("got %+v, want both sides' states and the order", d)
				}
			}
		})
	}

	t.Run("Sorted", func(t *testing.T) {
		t.Parallel()
		gw := map[string]*taskState{"c": st("done", 1), "a": st("done", 1), "d": st("done", 1)}
		cl := map[string]*taskState{"b": st(cloud.StatusPendingDelivery, 0), "d": st("queued", 0)}
		var got []string
		for _, d := range compare(gw, cl, linkDown) {
			got = append(got, d.TaskNo+":"+string(d.Kind))
		}
		want := []string{"a:missing_in_cloud", "b:missing_at_store", "c:missing_in_cloud", "d:status"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

func TestCheck_Summary(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		gw, cl map[string]*taskState
		link   linkState
		inSync bool
		want   []string
	}{
		{
			name: "InSync", inSync: true, link: linkUp,
			gw:   map[string]*taskState{"a": st("done", 1)},
			cl:   map[string]*taskState{"a": st("done", 1)},
			want: []string{"in sync: 1 task,"},
		},
		{
			name: "Behind", link: linkDown,
			gw: map[string]*taskState{"a": st("done", 1), "b": st("done", 1)},
			cl: map[string]*taskState{"c": st(cloud.StatusPendingDelivery, 0)},
			want: []string{"3 differences (1 missing at the store, 2 missing in the cloud)", "2 tasks at the store and 1 in the cloud",
				"the link is 4 events behind; differences may clear by themselves"},
		},
		{
			name: "DownNothingPending", link: linkDownIdle,
			gw:   map[string]*taskState{"a": st("done", 1)},
			cl:   map[string]*taskState{"a": st("printing", 1)},
			want: []string{"1 difference (1 different status)", "the link is down"},
		},
		{
			name: "NoLink", link: linkNone,
			want: []string{"in sync"}, inSync: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCheck(tt.gw, tt.cl, tt.link, at)
			if c.inSync() != tt.inSync {
				t.Errorf("got in sync %v, want %v", c.inSync(), tt.inSync)
			}
			if c.LinkBehind != tt.link.behind() || c.At != at {
				t.Errorf("got %+v", c)
			}
			got := c.summary()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got summary %q, want %q in it", got, w)
				}
			}
			if strings.Contains(got, "\n") {
				t.Errorf("got summary %q, want one line", got)
			}
		})
	}
}

func TestReconcile_WriteText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	gw := map[string]*taskState{"order_p1_station_hot": st("done", 1)}
	cl := map[string]*taskState{"order_w1_station_hot": {OrderID: "w1", Status: cloud.StatusPendingDelivery}}
	before := newCheck(gw, cl, linkDown, at)
	gw["order_w1_station_hot"] = &taskState{OrderID: "w1", Status: storeprint.StatusQueued}
	after := newCheck(gw, cl, linkDown, at)

	t.Run("Check", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		c := &reconcile{}
		c.writeText(&b, &report{StoreID: "s1", Gateway: "http://gw", Cloud: "http://cloud", Check: before})
		got := b.String()
		for _, w := range []string{
			"store s1: gateway http://gw, cloud http://cloud\n",
			"sync link: down (dial tcp: connection refused); cloud acknowledged event 5 of 9, 4 pending\n",
			"TASK                  DIFFERENCE        STORE            CLOUD             REPAIR\n",
			"order_p1_station_hot  missing_in_cloud  done, attempt 1  -                 the sync link replays it once connected\n",
			"order_w1_station_hot  missing_at_store  -                pending_delivery  --apply delivers order w1 through the gateway\n",
			"\n2 differences (1 missing at the store, 1 missing in the cloud) between 1 task at the store and 1 in the cloud; the link is 4 events behind; differences may clear by themselves\n",
		} {
			if !strings.Contains(got, w) {
				t.Errorf("got:\n%s\nwant %q in it", got, w)
			}
		}
		if strings.Contains(got, "apply:") {
			t.Errorf("got apply lines without --apply:\n%s", got)
		}
	})
	t.Run("Apply", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		c := &reconcile{}
		c.writeText(&b, &report{StoreID: "s1", Before: before, Check: after, Applied: []action{
			{OrderID: "w1", TaskNos: []string{"order_w1_station_hot"}, Result: resultDelivered, Detail: "posted"},
		}})
		got := b.String()
		i := strings.Index(got, "apply: order w1 (order_w1_station_hot): delivered: posted\n")
		j := strings.Index(got, "after --apply:\n")
		if i < 0 || j < i || strings.Count(got, "sync link:") != 2 ||
			!strings.Contains(got[j:], "order_w1_station_hot  status") {
			t.Fatalf("got:\n%s\nwant the first check, the repair, then the check after it", got)
		}
	})
	t.Run("Many", func(t *testing.T) {
		t.Parallel()
		gw := map[string]*taskState{}
		for i := range maxRows + 7 {
			gw[strings.Repeat("x", i+1)] = st("done", 1)
		}
		var b strings.Builder
		c := &reconcile{}
		c.writeText(&b, &report{Check: newCheck(gw, nil, linkDown, at)})
		if got := b.String(); strings.Count(got, "missing_in_cloud") != maxRows || !strings.Contains(got, "... and 7 more (--json lists them all)") {
			t.Fatalf("got:\n%s\nwant %d rows and a count of the rest", got, maxRows)
		}
	})
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err    error
		code   int
		report bool
	}{
		{nil, 0, false},
		{errors.New("boom"), 1, true},
		{&exitStatus{code: exitDiffer}, 1, false},
		{&exitStatus{code: exitUsage, err: errors.New("--store: x")}, 2, true},
		{&apiStatusError{api: &api{}, status: 500}, 3, true},
	}
	for _, tt := range tests {
		if code, report := ExitCode(tt.err); code != tt.code || report != tt.report {
			t.Errorf("ExitCode(%v): got %d %v, want %d %v", tt.err, code, report, tt.code, tt.report)
		}
	}
}

// setupReconcile parses reconcile's flags with env as the environment.
func setupReconcile(t *testing.T, env map[string]string, args ...string) (*Main, *reconcile, *testlog.Buffer, error) {
	t.Helper()
	m := NewMain()
	stdout := new(testlog.Buffer)
	m.Stdout, m.Stderr = stdout, new(testlog.Buffer)
	m.Getenv = func(k string) string { return env[k] }
	err := m.ParseFlags(append([]string{"reconcile"}, args...))
	c, _ := m.cmd.(*reconcile)
	return m, c, stdout, err
}

func TestReconcile_ParseFlags(t *testing.T) {
	t.Parallel()
	full := []string{"--gateway", "http://127.0.0.1:8080", "--gateway-token", "gw-secret", "--cloud", "https://cloud.example/base",
		"--cloud-token", "cloud-secret", "--store", "store-001"}

	t.Run("Flags", func(t *testing.T) {
		t.Parallel()
		_, c, _, err := setupReconcile(t, nil, append(full, "--apply", "--json", "--timeout", "5s")...)
		if err != nil {
			t.Fatal(err)
		}
		if c.Gateway != "http://127.0.0.1:8080" || c.GatewayToken != "gw-secret" || c.Cloud != "https://cloud.example/base" ||
			c.CloudToken != "cloud-secret" || c.Store != "store-001" || !c.Apply || !c.JSON || c.Timeout != 5*time.Second {
			t.Fatalf("got %+v", c)
		}
		if c.gw.base.String() != "http://127.0.0.1:8080" || c.cl.base.JoinPath("/v1/stores").String() != "https://cloud.example/base/v1/stores" {
			t.Fatalf("got bases %s and %s", c.gw.base, c.cl.base)
		}
	})
	t.Run("Env", func(t *testing.T) {
		t.Parallel()
		_, c, _, err := setupReconcile(t, map[string]string{
			"STOREPRINT_GATEWAY": "http://gw:8080", "STOREPRINT_GATEWAY_TOKEN": "gw-secret",
			"STOREPRINT_CLOUD": "http://cloud:9090", "STOREPRINT_CLOUD_TOKEN": "cloud-secret", "STOREPRINT_STORE": "store-002",
			"STOREPRINT_APPLY": "true", "STOREPRINT_JSON": "1", "STOREPRINT_TIMEOUT": "10s",
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Gateway != "http://gw:8080" || c.GatewayToken != "gw-secret" || c.Cloud != "http://cloud:9090" ||
			c.CloudToken != "cloud-secret" || c.Store != "store-002" || !c.Apply || !c.JSON || c.Timeout != 10*time.Second {
			t.Fatalf("got %+v", c)
		}
	})
	t.Run("FlagWins", func(t *testing.T) {
		t.Parallel()
		_, c, _, err := setupReconcile(t, map[string]string{"STOREPRINT_STORE": "store-002", "STOREPRINT_APPLY": "true"}, append(full, "--apply=false")...)
		if err != nil {
			t.Fatal(err)
		}
		if c.Store != "store-001" || c.Apply {
			t.Fatalf("got store %q apply %v, want the flags'", c.Store, c.Apply)
		}
	})
	t.Run("Help", func(t *testing.T) {
		t.Parallel()
		_, _, stdout, err := setupReconcile(t, nil, "--help")
		if !errors.Is(err, errHelp) {
			t.Fatalf("got %v, want errHelp", err)
		}
		got := stdout.String()
		for _, w := range []string{"--gateway URL", "--gateway-token", "--cloud URL", "--cloud-token", "--store", "--apply", "--json", "--timeout",
			"STOREPRINT_GATEWAY_TOKEN", "STOREPRINT_CLOUD_TOKEN", "missing_at_store", "missing_in_cloud", "pending_delivery",
			"events behind", "POST /v1/orders", "replays them once connected", "Exit status", "  3  a side cannot be read"} {
			if !strings.Contains(got, w) {
				t.Errorf("help does not mention %q", w)
			}
		}
	})
	t.Run("Err", func(t *testing.T) {
		t.Parallel()
		without := func(flag string) []string {
			var out []string
			for i := 0; i < len(full); i += 2 {
				if full[i] != flag {
					out = append(out, full[i], full[i+1])
				}
			}
			return out
		}
		tests := []struct {
			name string
			env  map[string]string
			args []string
			want string
		}{
			{"NoGateway", nil, without("--gateway"), "--gateway (or STOREPRINT_GATEWAY) is required"},
			{"NoGatewayToken", nil, without("--gateway-token"), "--gateway-token (or STOREPRINT_GATEWAY_TOKEN) is required"},
			{"NoCloud", nil, without("--cloud"), "--cloud (or STOREPRINT_CLOUD) is required"},
			{"NoCloudToken", nil, without("--cloud-token"), "--cloud-token (or STOREPRINT_CLOUD_TOKEN) is required"},
			{"NoStore", nil, without("--store"), "--store (or STOREPRINT_STORE) is required"},
			{"GatewayURL", nil, append(without("--gateway"), "--gateway", "192.168.1.20:8080"), `--gateway: "192.168.1.20:8080" is not an http`},
			{"CloudURL", nil, append(without("--cloud"), "--cloud", "ftp://cloud"), `--cloud: "ftp://cloud" is not an http`},
			{"URLPassword", nil, append(without("--cloud"), "--cloud", "ws://u:hunter2@cloud"), `"ws://u:xxxxx@cloud"`},
			{"Timeout", nil, append(full, "--timeout", "0s"), "--timeout"},
			{"TimeoutEnv", map[string]string{"STOREPRINT_TIMEOUT": "soon"}, full, "STOREPRINT_TIMEOUT"},
			{"ApplyEnv", map[string]string{"STOREPRINT_APPLY": "yes please"}, full, "STOREPRINT_APPLY"},
			{"JSONEnv", map[string]string{"STOREPRINT_JSON": "sometimes"}, full, "STOREPRINT_JSON"},
			{"UnknownFlag", nil, append(full, "--force"), "force"},
			{"Argument", nil, append(full, "now"), `unexpected argument "now"`},
		}
		for _, tt := range tests {
			_, _, _, err := setupReconcile(t, tt.env, tt.args...)
			if err == nil || errors.Is(err, errHelp) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.want)
				continue
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: the error %q shows a token", tt.name, err)
			}
		}
	})
}

// TestReconcile_Run covers what needs no running side; the cloud's tests
// (cmd/storeprint-cloud) run reconcile against a real cloud and gateway.
func TestReconcile_Run(t *testing.T) {
	t.Parallel()

	t.Run("ErrGatewayUnreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		for _, asJSON := range []bool{false, true} {
			args := []string{"--gateway", "http://" + addr, "--gateway-token", "gw-secret", "--cloud", "http://" + addr,
				"--cloud-token", "cloud-secret", "--store", "s1", "--timeout", "5s"}
			if asJSON {
				args = append(args, "--json")
			}
			m, _, stdout, err := setupReconcile(t, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			err = m.Run(context.Background())
			if code, _ := ExitCode(err); code != exitUnreachable || !strings.Contains(err.Error(), "cannot read the gateway at http://"+addr+" (--gateway)") {
				t.Fatalf("got %v (exit %d), want exit 3 naming the gateway", err, code)
			}
			if strings.Contains(err.Error()+stdout.String(), "secret") {
				t.Fatalf("a token shows in %q / %q", err, stdout)
			}
			if asJSON {
				var r report
				if jerr := json.Unmarshal([]byte(stdout.String()), &r); jerr != nil || r.Error != err.Error() || r.InSync || r.StoreID != "s1" {
					t.Fatalf("got report %s (%v), want the error in JSON", stdout, jerr)
				}
			}
		}
	})
}

func TestIncarnations_Describe(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   incarnations
		want []string
	}{
		{"None", incarnations{}, []string{"incarnation: store none (its data dir was made before incarnations); cloud knows none",
			"resync: store none since the gateway started; cloud recorded none"}},
		{"Snapshot", incarnations{Store: "ab", StoreResync: &resyncState{Kind: "snapshot", Tasks: 3, At: at},
			Cloud:  []*cloud.Incarnation{{GatewayID: "gw-1", Incarnation: "ab"}, {GatewayID: "gw-1"}},
			Events: []*cloud.LinkEvent{{Kind: cloud.LinkResynchronised, At: at}}},
			[]string{"store ab; cloud newest ab of gateway gw-1, 1 other before it", "store sent a snapshot of 3 tasks", "cloud last recorded resynchronised"}},
		{"Differs", incarnations{Store: "cd", StoreResync: &resyncState{Kind: "learned", Tasks: 1, At: at},
			Cloud: []*cloud.Incarnation{{GatewayID: "gw-2", Incarnation: "ef"}}},
			[]string{"newest ef of gateway gw-2 (not the store's)", "store learned 1 state from the cloud"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.describe()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want %q in it", got, w)
				}
			}
		})
	}
}
