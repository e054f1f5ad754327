//go:build unix

package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
)

// The leader of a linked cluster frozen (SIGSTOP) for 15 s while its
// link streams, then woken (SIGCONT): its link, stuck on the cloud's
// side, is replaced by the new leader's, and the woken node, no longer
// the leader, sends nothing that disturbs the stream. The cloud sees one
// incarnation, no link event and a gapless stream, and ends with every
// task in the store's state.
func TestChain_ClusterFreeze(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three gateway processes and freezes one for 15 s")
	}
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-cluster-freeze")
	hot, hotAddr := startSim(t)
	c := startClusterNodes(t, st, strings.TrimPrefix(node.base, "http://"), hotAddr, dbURL)

	n := 0
	rush := func(count int) {
		for range count {
			c.post(n, fmt.Sprintf("f%d", n))
			n++
		}
	}
	first := c.leader("", 30*time.Second)
	rush(10)
	waitSynced(t, c.procs[first], 30*time.Second)
	rush(5) // the link streams these as the leader freezes
	if err := syscall.Kill(c.procs[first].Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	rush(10)
	second := c.leader(first, 30*time.Second)
	waitSynced(t, c.procs[second], 30*time.Second)
	if wait := 15*time.Second - time.Since(frozen); wait > 0 {
		time.Sleep(wait) // the freeze lasts 15 s, as a stuck box's would
	}
	if err := syscall.Kill(c.procs[first].Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	rush(10)
	if got := c.leader(first, 30*time.Second); got != second {
		t.Errorf("after %s woke, %s leads, want %s still", first, got, second)
	}
	waitSynced(t, c.procs[second], 30*time.Second)
	t.Logf("%s frozen for 15 s, %s leads", first, second)

	if got := compare(t, dbURL, c.procs[second], st); got != n {
		t.Errorf("the store has %d tasks, %d orders were accepted", got, n)
	}
	if inc := countCloudRows(t, dbURL, `SELECT count(DISTINCT incarnation) FROM gateway_cursors WHERE store_id = $1 AND incarnation <> ''`, st.id); inc != 1 {
		t.Errorf("the cloud saw %d incarnations of the store, want 1: %s", inc, describeCursors(t, dbURL, st.id))
	}
	if events := countCloudRows(t, dbURL, `SELECT count(*) FROM link_events WHERE store_id = $1`, st.id); events != 0 {
		t.Errorf("the cloud recorded %d link events (a reset, a store behind, a take-over): want none", events)
	}
	// The new leader's link replaced the frozen one's: a takeover, which
	// does not count towards a gateway_credential_shared alert.
	if takeovers := countCloudRows(t, dbURL, `SELECT count(*) FROM link_replacements WHERE store_id = $1 AND takeover`, st.id); takeovers == 0 {
		t.Errorf("the cloud recorded no takeover of the link")
	}
	if others := countCloudRows(t, dbURL, `SELECT count(*) FROM link_replacements WHERE store_id = $1 AND NOT takeover`, st.id); others != 0 {
		t.Errorf("the cloud counted %d replacements of the link towards a shared credential, want none", others)
	}
	printedOnce(t, hot) // no ticket twice
	var tasks []gwTask
	do(t, posToken, "GET", c.procs[second].base+"/v1/tasks?limit=1000", nil, &tasks)
	paper := map[string]bool{}
	for _, tk := range hot.Printed() {
		paper[tk.TaskNo] = true
	}
	for _, tk := range tasks {
		switch {
		case tk.Status == "attention_required": // uncertain after the freeze: held for a person
		case tk.Status != "done":
			t.Errorf("%s: %s, want done or held for a person", tk.TaskNo, tk.Status)
		case !paper[tk.TaskNo]:
			t.Errorf("%s: done, not on paper", tk.TaskNo)
		}
	}
}
