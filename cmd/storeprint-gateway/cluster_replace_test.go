package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/clustertest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// replaceTrailing is how many entries a snapshot leaves in the log of the
// nodes of TestProcess_ClusterReplace (4096 in the field).
const replaceTrailing = 8

// A gateway's box is replaced: killed with SIGKILL, its data dir gone,
// started again with the same configuration on an empty one. The leader
// compacted its log behind a snapshot meanwhile, so the new box can only
// start from that snapshot: it joins, takes the snapshot into its store
// (not a replay of the log from its first entry), and takes its share:
// with the other gateway killed it leads, holds every ticket, receipt
// and audit entry the old leader held, and prints the tickets left
// waiting for the printer and the next order, nothing twice.
func TestProcess_ClusterReplace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three gateway processes")
	}
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfgs, dirs := writeClusterConfigsDirs(t, hot, "hot")
	env := []string{
		"STOREPRINT_CLUSTER_TRAILING_LOGS=" + strconv.Itoa(replaceTrailing),
		"STOREPRINT_CLUSTER_SNAPSHOT_INTERVAL=50ms",
	}
	procs := map[string]*proc{}
	for _, id := range clustertest.Nodes {
		procs[id] = startProc(t, cfgs[id], env...)
	}
	p := &pos{t: t, addrs: []string{procs["gw-a"].base, procs["gw-b"].base}}
	n := 0
	postSome := func(k int) {
		for range k {
			p.post(fmt.Sprintf("r%d", n), 30*time.Second)
			n++
		}
	}
	postSome(10)
	leaderID, leader, _ := leaderOf(t, procs)
	gatewaytest.Settle(t, leader.base, 30*time.Second)
	replacedID := "gw-a"
	if leaderID == "gw-a" {
		replacedID = "gw-b"
	}

	// The box dies and its disk with it.
	procs[replacedID].kill(t)
	if err := os.RemoveAll(dirs[replacedID]); err != nil {
		t.Fatal(err)
	}
	postSome(10)
	gatewaytest.Settle(t, leader.base, 30*time.Second)
	// The leader's log no longer begins at its first entry.
	waitSnapshot(t, filepath.Join(dirs[leaderID], "raft", "snapshots"), 2*replaceTrailing+1)
	want := storeContents(t, leader.base)
	// Tickets left waiting for the printer, for the replaced node to
	// print once it leads.
	hot.SetFault(printersim.FaultOffline)
	waiting := n
	postSome(3)

	started := time.Now()
	replaced := startProc(t, cfgs[replacedID], env...)
	procs[replacedID] = replaced
	restored := waitLogLine(t, replaced, restoreRE, 30*time.Second)
	applied, _ := strconv.ParseUint(restored[2], 10, 64)
	if applied <= 2*replaceTrailing {
		t.Errorf("the replaced node took a snapshot as of entry %d, want one past %d", applied, 2*replaceTrailing)
	}
	at, err := time.Parse(time.RFC3339Nano, restored[1])
	if err != nil {
		t.Fatal(err)
	}

	// Its share: the other gateway is gone, the replaced one leads.
	killed := time.Now()
	leader.kill(t)
	hot.SetFault(printersim.FaultNone)
	p.addrs = []string{leader.base, replaced.base}
	p.post(fmt.Sprintf("r%d", n), 30*time.Second)
	n++
	acceptedAfter := time.Since(killed)
	all := gatewaytest.Settle(t, replaced.base, 30*time.Second)
	var st gateway.ClusterState
	if code := gatewaytest.Call(t, "GET", replaced.base+"/v1/cluster", nil, &st); code != 200 || st.Leader != replacedID || st.Role != gateway.RoleLeader {
		t.Fatalf("GET /v1/cluster on the replaced node: %d %+v, want it the leader", code, st)
	}
	t.Logf("replaced %s: started %s, its store took the snapshot (entry %d) after %s; with %s killed it accepted the next order after %s",
		replacedID, started.Format(time.RFC3339Nano), applied, at.Sub(started).Round(time.Millisecond), leaderID, acceptedAfter.Round(time.Millisecond))

	got := storeContents(t, replaced.base)
	for no, w := range want.tasks {
		if g, ok := got.tasks[no]; !ok || string(g) != string(w) {
			t.Errorf("%s on the replaced node: got %s, want %s", no, g, w)
		}
		if g := got.receipts[no]; string(g) != string(want.receipts[no]) {
			t.Errorf("%s's receipts on the replaced node: got %s, want %s", no, g, want.receipts[no])
		}
	}
	for seq, w := range want.audit {
		if g := got.audit[seq]; string(g) != string(w) {
			t.Errorf("audit entry %s on the replaced node: got %s, want %s", seq, g, w)
		}
	}
	paper := hot.Printed()
	for i := range n {
		no := fmt.Sprintf("order_r%d_station_hot", i)
		if k := gatewaytest.CountPaper(paper, no); k != 1 {
			t.Errorf("%s on paper %d times, want once", no, k)
		}
	}
	for i := waiting; i < n; i++ {
		no := fmt.Sprintf("order_r%d_station_hot", i)
		if j := slices.IndexFunc(all, func(tj gatewaytest.TaskJSON) bool { return tj.TaskNo == no }); j < 0 || all[j].Status != "done" {
			t.Errorf("%s, printed by the replaced node: not done in %+v", no, all)
		}
	}
}

// restoreRE finds the line a node logs once its store took a snapshot of
// the cluster's state, with its time and the snapshot's last entry.
var restoreRE = regexp.MustCompile(`(?m)^time=(\S+) .*msg="this node's store took a snapshot of the cluster's state".* applied=(\d+)`)

// waitLogLine waits until the process logged a line re matches, and
// returns the match.
func waitLogLine(t testing.TB, p *proc, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		if m := re.FindStringSubmatch(p.Log()); m != nil {
			return m
		}
		select {
		case <-tick.C:
		case <-p.Exited:
			t.Fatalf("the gateway ended before it logged %s:\n%s", re, p.Log())
		case <-deadline:
			t.Fatalf("the gateway did not log %s within %s:\n%s", re, timeout, p.Log())
		}
	}
}

// waitSnapshot waits until the snapshot store dir holds a snapshot of
// the log up to at least entry index (the log before it is compacted),
// and returns that snapshot's dir.
func waitSnapshot(t testing.TB, dir string, index uint64) string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		metas, _ := filepath.Glob(filepath.Join(dir, "*", "meta.json"))
		for _, m := range metas {
			var meta struct{ Index uint64 }
			if b, err := os.ReadFile(m); err == nil && json.Unmarshal(b, &meta) == nil && meta.Index >= index {
				return filepath.Dir(m)
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no snapshot up to entry %d in %s: %v", index, dir, metas)
		}
	}
}

// contents is what a gateway's API shows of its store: each task and its
// receipts by task number, each audit entry by its sequence, as JSON.
type contents struct {
	tasks, receipts, audit map[string]json.RawMessage
}

// storeContents reads the tasks, their receipts and the audit trail from
// the gateway at base.
func storeContents(t *testing.T, base string) contents {
	t.Helper()
	c := contents{tasks: map[string]json.RawMessage{}, receipts: map[string]json.RawMessage{}, audit: map[string]json.RawMessage{}}
	var tasks []json.RawMessage
	if code := gatewaytest.Call(t, "GET", base+"/v1/tasks?limit=100000", nil, &tasks); code != 200 {
		t.Fatalf("GET /v1/tasks: %d", code)
	}
	for _, raw := range tasks {
		var tj struct {
			TaskNo string `json:"task_no"`
		}
		if err := json.Unmarshal(raw, &tj); err != nil {
			t.Fatal(err)
		}
		c.tasks[tj.TaskNo] = raw
		var rs json.RawMessage
		if code := gatewaytest.Call(t, "GET", base+"/v1/tasks/"+tj.TaskNo+"/receipts", nil, &rs); code != 200 {
			t.Fatalf("GET receipts of %s: %d", tj.TaskNo, code)
		}
		c.receipts[tj.TaskNo] = rs
	}
	for after := "0"; ; {
		var entries []json.RawMessage
		if code := gatewaytest.Call(t, "GET", base+"/v1/audit?after="+after, nil, &entries); code != 200 {
			t.Fatalf("GET /v1/audit: %d", code)
		}
		if len(entries) == 0 {
			return c
		}
		for _, raw := range entries {
			var e struct {
				Seq json.Number `json:"seq"`
			}
			if err := json.Unmarshal(raw, &e); err != nil || e.Seq == "" {
				t.Fatalf("audit entry %s: no seq (%v)", raw, err)
			}
			c.audit[e.Seq.String()] = raw
			after = e.Seq.String()
		}
	}
}

// BenchmarkClusterReplace measures how long a replaced gateway box (an
// empty data dir, three processes) takes from its start to its store
// holding the leader's snapshot of a store of 1,000 printed orders
// (2,000 tickets):
// go test -run '^$' -bench BenchmarkClusterReplace -benchtime 3x
// ./cmd/storeprint-gateway/
func BenchmarkClusterReplace(b *testing.B) {
	const orders = 1000
	hot := gatewaytest.StartSim(b, printersim.FaultNone)
	cfgs, dirs := writeClusterConfigsDirs(b, hot, "hot", "cold")
	env := []string{"STOREPRINT_CLUSTER_TRAILING_LOGS=64", "STOREPRINT_CLUSTER_SNAPSHOT_INTERVAL=50ms"}
	procs := map[string]*proc{}
	for _, id := range clustertest.Nodes {
		procs[id] = startProc(b, cfgs[id], env...)
	}
	var st gateway.ClusterState
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(30 * time.Second); st.Leader == ""; {
		select {
		case <-tick.C:
		case <-deadline:
			b.Fatal("no leader elected")
		}
		gatewaytest.Call(b, "GET", procs["gw-a"].base+"/v1/cluster", nil, &st)
	}
	leader := procs[st.Leader]
	postLoad(b, leader.base, fmt.Sprintf("rb%d", time.Now().UnixNano()), 0, orders)
	gatewaytest.Settle(b, leader.base, 5*time.Minute)
	replacedID := "gw-a"
	if st.Leader == "gw-a" {
		replacedID = "gw-b"
	}
	var took time.Duration
	var size int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		procs[replacedID].kill(b)
		if err := os.RemoveAll(dirs[replacedID]); err != nil {
			b.Fatal(err)
		}
		snap := waitSnapshot(b, filepath.Join(dirs[st.Leader], "raft", "snapshots"), 2*64+1)
		if fi, err := os.Stat(filepath.Join(snap, "state.bin")); err == nil {
			size = fi.Size()
		}
		b.StartTimer()
		started := time.Now()
		procs[replacedID] = startProc(b, cfgs[replacedID], env...)
		m := waitLogLine(b, procs[replacedID], restoreRE, time.Minute)
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			b.Fatal(err)
		}
		took += at.Sub(started)
	}
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms-to-snapshot")
	b.ReportMetric(float64(size)/1e6, "snapshot-MB")
}
