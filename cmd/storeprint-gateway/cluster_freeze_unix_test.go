//go:build unix

package main

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The leader frozen (SIGSTOP) for 15 s while it holds tickets, the
// printer still reachable, then woken (SIGCONT): the other gateway takes
// over and prints what is accepted meanwhile; the woken node, no longer
// the leader, prints nothing more. Every accepted order is on paper
// once or flagged, none twice.
func TestProcess_ClusterFreezeLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three gateway processes and freezes one for 15 s")
	}
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	procs, p := startClusterProcs(t, hot)
	n := 0
	postSome := func(k int) {
		for range k {
			p.post(fmt.Sprintf("f%d", n), 30*time.Second)
			n++
		}
	}
	postSome(3)
	leaderID, leader, survivor := leaderOf(t, procs)
	// The leader holds tickets: the printer is slow, three wait.
	hot.SetFault(printersim.FaultSlow)
	postSome(3)
	if err := syscall.Kill(leader.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	hot.SetFault(printersim.FaultNone)
	firstAfter := n
	at, phases := time.Time{}, ""
	for i := range 3 {
		a := p.post(fmt.Sprintf("f%d", n), 30*time.Second)
		n++
		if i == 0 {
			at, phases = a, p.phases(frozen, procs)
		}
	}
	gatewaytest.Settle(t, survivor.base, 30*time.Second)
	first := time.Time{}
	for _, tk := range hot.Printed() {
		if tk.TaskNo == fmt.Sprintf("order_f%d_station_hot", firstAfter) {
			first = tk.At
		}
	}
	t.Logf("frozen leader %s: the POS got its next 201 after %s, its ticket on paper after %s%s",
		leaderID, at.Sub(frozen).Round(time.Millisecond), first.Sub(frozen).Round(time.Millisecond), phases)
	if wait := 15*time.Second - time.Since(frozen); wait > 0 {
		time.Sleep(wait) // the freeze lasts 15 s, as a stuck box's would
	}
	before := len(hot.Printed())
	if err := syscall.Kill(leader.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	woke := time.Now()
	postSome(2)
	all := gatewaytest.Settle(t, survivor.base, 30*time.Second)
	paper := hot.Printed()
	checkOnceOrFlagged(t, all, paper, "f", n, firstAfter, "accepted while the leader was frozen")
	late := map[string]bool{fmt.Sprintf("order_f%d_station_hot", n-2): true, fmt.Sprintf("order_f%d_station_hot", n-1): true}
	for _, tk := range paper[before:] {
		if tk.At.After(woke) && !late[tk.TaskNo] {
			t.Errorf("%s on paper after the old leader woke; only the orders posted since print", tk.TaskNo)
		}
	}
}
