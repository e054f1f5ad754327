//go:build unix

package main

import (
	"syscall"
	"testing"
	"time"
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
	c := startClusterChain(t, "s-cluster-freeze", "f")
	first := c.leader("", 30*time.Second)
	c.rush(10)
	waitSynced(t, c.procs[first], 30*time.Second)
	c.rush(5) // the link streams these as the leader freezes
	if err := syscall.Kill(c.procs[first].Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	c.rush(10)
	second := c.leader(first, 30*time.Second)
	waitSynced(t, c.procs[second], 30*time.Second)
	if wait := 15*time.Second - time.Since(frozen); wait > 0 {
		time.Sleep(wait) // the freeze lasts 15 s, as a stuck box's would
	}
	if err := syscall.Kill(c.procs[first].Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.rush(10)
	if got := c.leader(first, 30*time.Second); got != second {
		t.Errorf("after %s woke, %s leads, want %s still", first, got, second)
	}
	waitSynced(t, c.procs[second], 30*time.Second)
	t.Logf("%s frozen for 15 s, %s leads", first, second)

	c.check(second) // held for a person: uncertain after the freeze
	// The new leader's link replaced the frozen one's: a takeover, which
	// does not count towards a gateway_credential_shared alert.
	if takeovers := countRows(t, c.dbURL, `SELECT count(*) FROM link_replacements WHERE store_id = $1 AND takeover`, c.st.id); takeovers == 0 {
		t.Errorf("the cloud recorded no takeover of the link")
	}
	if others := countRows(t, c.dbURL, `SELECT count(*) FROM link_replacements WHERE store_id = $1 AND NOT takeover`, c.st.id); others != 0 {
		t.Errorf("the cloud counted %d replacements of the link towards a shared credential, want none", others)
	}
}
