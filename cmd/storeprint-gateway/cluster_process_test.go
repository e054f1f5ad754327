package main

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/clustertest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// pos is a POS terminal that knows both gateways' addresses: it posts an
// order to one, and on a 503 or no answer to the other, in turn, at its
// own retry pace, until one accepts it.
type pos struct {
	t     *testing.T
	addrs []string
	next  int
	tries []posTry // the last post's tries
}

// posTry is one try of a post: where, when, how long, what came back.
type posTry struct {
	base       string
	start, end time.Time
	code       int
	err        error
}

// RetryEvery is the POS's pace between tries: a terminal's, not a wait
// for the gateways.
const posRetryEvery = 100 * time.Millisecond

func (p *pos) post(orderID string, within time.Duration) (accepted time.Time) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	p.tries = p.tries[:0]
	for time.Now().Before(deadline) {
		base := p.addrs[p.next%len(p.addrs)]
		start := time.Now()
		code, err := tryCall("POST", base+"/v1/orders", gatewaytest.Order(orderID, "hot"))
		p.tries = append(p.tries, posTry{base: base, start: start, end: time.Now(), code: code, err: err})
		switch {
		case err == nil && (code == 201 || code == 200):
			return time.Now()
		case err == nil && code != 503:
			p.t.Fatalf("POST %s to %s: got %d, want 201 or 503", orderID, base, code)
		}
		p.next++
		time.Sleep(posRetryEvery / time.Duration(len(p.addrs)))
	}
	p.t.Fatalf("no gateway accepted %s within %s", orderID, within)
	return time.Time{}
}

// phases says, from t0 on, what the last post's tries met and when the
// nodes' logs say their leadership changed: where a takeover's time goes.
func (p *pos) phases(t0 time.Time, procs map[string]*proc) string {
	var b strings.Builder
	names := map[string]string{}
	for id, pr := range procs {
		names[pr.base] = id
	}
	for _, tr := range p.tries {
		what := fmt.Sprint(tr.code)
		if tr.err != nil {
			what = "no answer"
		}
		fmt.Fprintf(&b, "\n  %6s..%6s POS -> %s: %s", offset(tr.start, t0), offset(tr.end, t0), names[tr.base], what)
	}
	for _, id := range slices.Sorted(maps.Keys(procs)) {
		for _, line := range strings.Split(procs[id].Log(), "\n") {
			m := phaseRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if err != nil || at.Before(t0) {
				continue
			}
			fmt.Fprintf(&b, "\n  %6s %s: %s", offset(at, t0), id, m[2])
		}
	}
	return b.String()
}

// phaseRE finds the log lines of a node that mark a takeover's steps.
var phaseRE = regexp.MustCompile(`^time=(\S+) level=\S+ msg="((?:this node leads|this node no longer leads|leading the cluster|no longer leading|the witness was elected|leadership transfer|the cluster leader fell silent|recovered|printer status|raft: .*(?:heartbeat timeout|entering|election|vote|failed to contact|transfer))[^"]*".*)`)

func offset(at, t0 time.Time) string {
	return fmt.Sprintf("%.2fs", at.Sub(t0).Seconds())
}

// posClient gives up on a gateway that does not answer within 2 s (a
// frozen box accepts connections and answers nothing), as a POS with a
// second address should.
var posClient = &http.Client{Timeout: 2 * time.Second, Transport: gatewaytest.API.Transport(&http.Transport{MaxIdleConnsPerHost: 4})}

// tryCall is call for a gateway that may be gone: its error is returned.
func tryCall(method, url string, body any) (int, error) {
	req, err := gatewaytest.NewJSONRequest(method, url, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+gatewaytest.Token)
	resp, err := posClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// startClusterProcs runs two gateways and a witness as processes on one
// store printing on hot, and a POS that knows both gateways.
func startClusterProcs(t *testing.T, hot *gatewaytest.Sim) (map[string]*proc, *pos) {
	t.Helper()
	cfgs := writeClusterConfigs(t, hot, "hot")
	procs := map[string]*proc{}
	for _, id := range clustertest.Nodes {
		procs[id] = startProc(t, cfgs[id])
	}
	p := &pos{t: t, addrs: []string{procs["gw-a"].base, procs["gw-b"].base}}
	return procs, p
}

// leaderOf asks gw-a which gateway leads, and returns its id, its
// process and the other gateway's.
func leaderOf(t *testing.T, procs map[string]*proc) (id string, leader, survivor *proc) {
	t.Helper()
	var st gateway.ClusterState
	if code := gatewaytest.Call(t, "GET", procs["gw-a"].base+"/v1/cluster", nil, &st); code != 200 || st.Leader == "" {
		t.Fatalf("GET /v1/cluster: %d %+v", code, st)
	}
	survivor = procs["gw-a"]
	if st.Leader == "gw-a" {
		survivor = procs["gw-b"]
	}
	return st.Leader, procs[st.Leader], survivor
}

// Three real processes, two gateways and a witness, on one store: the
// leader is killed with SIGKILL in the middle of a rush while the POS
// posts to both gateways in turn. The other gateway takes over: every
// order that got an answer is on paper once or flagged for a person,
// none twice, and orders keep being accepted and printed.
func TestProcess_ClusterKillLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three gateway processes")
	}
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	procs, p := startClusterProcs(t, hot)

	const before, after = 10, 10
	for i := range before {
		p.post(fmt.Sprintf("k%d", i), 30*time.Second)
	}
	leaderID, leader, survivor := leaderOf(t, procs)
	killed := time.Now()
	leader.kill(t)
	var firstAccepted time.Time
	var phases string
	for i := range after {
		at := p.post(fmt.Sprintf("k%d", before+i), 30*time.Second)
		if i == 0 {
			firstAccepted, phases = at, p.phases(killed, procs)
		}
	}
	all := gatewaytest.Settle(t, survivor.base, 30*time.Second)
	paper := hot.Printed()
	firstPaper := time.Time{}
	for _, tk := range paper {
		if tk.TaskNo == "order_k10_station_hot" {
			firstPaper = tk.At
		}
	}
	t.Logf("takeover after SIGKILL of %s: the POS got its next 201 after %s, its ticket on paper after %s%s",
		leaderID, firstAccepted.Sub(killed).Round(time.Millisecond), firstPaper.Sub(killed).Round(time.Millisecond), phases)

	checkOnceOrFlagged(t, all, paper, "k", before+after, before, "accepted after the takeover")
}

// checkOnceOrFlagged checks the n orders "<prefix><i>" on the hot station
// against the store (all) and the paper: each is in the store, done and
// on paper once, or flagged and on paper at most once; those from
// firstAfter on (accepted after the loss, which says why) are done.
func checkOnceOrFlagged(t *testing.T, all []gatewaytest.TaskJSON, paper []printersim.Ticket, prefix string, n, firstAfter int, after string) {
	t.Helper()
	byNo := map[string]gatewaytest.TaskJSON{}
	for _, tj := range all {
		byNo[tj.TaskNo] = tj
	}
	for i := range n {
		no := fmt.Sprintf("order_%s%d_station_hot", prefix, i)
		tj, ok := byNo[no]
		k := gatewaytest.CountPaper(paper, no)
		switch {
		case !ok:
			t.Errorf("%s: accepted, not in the store", no)
		case tj.Status == "done" && k != 1:
			t.Errorf("%s: done, on paper %d times, want once", no, k)
		case tj.Status == "attention_required" && k > 1:
			t.Errorf("%s: flagged, on paper %d times", no, k)
		case tj.Status != "done" && tj.Status != "attention_required":
			t.Errorf("%s: %s, want done or flagged", no, tj.Status)
		case i >= firstAfter && tj.Status != "done":
			t.Errorf("%s: %s, %s, want done", no, after, tj.Status)
		}
	}
}
