package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// The chain across a wiped gateway data dir, a cloud database restored
// from an earlier dump, and a gateway data dir replaced by an earlier
// copy. Afterwards the cloud has every task the store holds in the store's
// state, no ticket printed twice, nothing is pending on the link, and the
// dashboard says what happened.

// compareHeld checks that the cloud has every task the store holds in the
// store's state, and returns how many the store holds.
func compareHeld(t testing.TB, dbURL string, g *gatewayProc, st store) int {
	t.Helper()
	tasks, cloudStatus := tasksOfStore(t, dbURL, g, st)
	for _, tk := range tasks {
		status, ok := cloudStatus[tk.TaskNo]
		if !ok {
			t.Errorf("task %s: not in the cloud", tk.TaskNo)
			continue
		}
		if status != tk.Status {
			t.Errorf("task %s: cloud says %q, store %q", tk.TaskNo, status, tk.Status)
		}
	}
	return len(tasks)
}

// printedOnce checks that no ticket came out twice and returns how many
// tickets the printers printed.
func printedOnce(t testing.TB, sims ...*printersim.Printer) int {
	t.Helper()
	seen := map[string]int{}
	n := 0
	for _, p := range sims {
		for _, tk := range p.Printed() {
			seen[tk.TaskNo]++
			n++
		}
	}
	for no, k := range seen {
		if k > 1 {
			t.Errorf("ticket %s printed %d times", no, k)
		}
	}
	return n
}

// wantLinkEvent waits until the dashboard shows a link event of the kind.
func wantLinkEvent(t testing.TB, base, kind string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var dash struct {
			LinkEvents []struct {
				Kind    string `json:"kind"`
				StoreID string `json:"store_id"`
				At      string `json:"at"`
			} `json:"link_events"`
		}
		do(t, adminToken, "GET", base+"/v1/dashboard", nil, &dash)
		for _, e := range dash.LinkEvents {
			if e.Kind == kind && e.At != "" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard shows %+v, want a %s event", dash.LinkEvents, kind)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reconcileShows runs storeprint reconcile and checks its exit status and
// that its report says each of want.
func reconcileShows(t testing.TB, node *cloudNode, g *gatewayProc, st store, code int, want ...string) {
	t.Helper()
	rc := reconciler{gateway: g.base, cloud: node.base, store: st.id, gatewayToken: posToken, cloudToken: adminToken}
	r := rc.run(t)
	if r.code != code {
		t.Errorf("reconcile exited %d, want %d:\n%s%s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("reconcile says:\n%s\nwant %q in it", r.stdout, w)
		}
	}
}

func postOrders(t testing.TB, base, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if code := postOrder(t, base, fmt.Sprintf("%s%03d", prefix, i), "hot"); code != 201 {
			t.Fatalf("order %s%03d: %d", prefix, i, code)
		}
	}
}

func cloudOrder(t testing.TB, base string, st store, id string) {
	t.Helper()
	body := map[string]any{"order_id": id, "items": []map[string]any{{"name": "外卖", "qty": 1, "station": "hot"}}}
	if code := do(t, adminToken, "POST", base+"/v1/stores/"+st.id+"/orders", body, nil); code != 201 {
		t.Fatalf("cloud order %s: %d", id, code)
	}
}

func waitPrinted(t testing.TB, p *printersim.Printer, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := p.WaitPrinted(ctx, n); err != nil {
		t.Fatalf("%d tickets on paper: got %d", n, len(p.Printed()))
	}
}

// The gateway's data dir removed, restarted with the same config and
// credential: a new incarnation. The cloud learns every new task, the
// dashboard shows "gateway data reset", and a cloud order posted while the
// store was down is delivered once.
func TestChain_DataDirRemoved(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	cloudAddr := strings.TrimPrefix(node.base, "http://")
	st := createStore(t, node.base, "t1", "s-wiped")
	hot, hotAddr := startSim(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	g := startGatewayIn(t, st, cloudAddr, map[string]string{"hot-1": hotAddr}, dataDir)
	postOrders(t, g.base, "old", 30)
	cloudOrder(t, node.base, st, "w-old")
	waitPrinted(t, hot, 31)
	waitSynced(t, g, time.Minute)

	g.Kill(t)
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	cloudOrder(t, node.base, st, "w-down") // pending delivery while the store is down
	g = startGatewayIn(t, st, cloudAddr, map[string]string{"hot-1": hotAddr}, dataDir)
	g.dbURL = dbURL
	postOrders(t, g.base, "new", 40)
	waitPrinted(t, hot, 31+41)
	waitSynced(t, g, time.Minute)

	if n := compareHeld(t, dbURL, g, st); n != 41 {
		t.Errorf("the store holds %d tasks, want 41 (40 new and the cloud order posted while it was down)", n)
	}
	if n := printedOnce(t, hot); n != 72 {
		t.Errorf("got %d tickets, want 72", n)
	}
	wantLinkEvent(t, node.base, "gateway_reset")
	// The old data's tickets are only in the cloud now: a person's matter.
	reconcileShows(t, node, g, st, 1, "cloud last recorded gateway reset", ", 1 other before it")
}

// The cloud's database restored with pg_restore from a dump taken earlier:
// the cloud's cursor is behind what the gateway compacted, so the gateway
// sends a snapshot of every task; the cloud then has all of them in the
// store's state, "store resynchronised" is on the dashboard, and cloud
// orders neither repeat nor get lost.
func TestChain_CloudRestored(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t) // first: it skips under -short without PostgreSQL
	pgDump, err := pgtest.Tool("pg_dump")
	if err != nil {
		t.Fatal(err)
	}
	pgRestore, err := pgtest.Tool("pg_restore")
	if err != nil {
		t.Fatal(err)
	}
	node := startCloud(t, dbURL, "127.0.0.1:0")
	cloudAddr := strings.TrimPrefix(node.base, "http://")
	st := createStore(t, node.base, "t1", "s-restored")
	px := startProxy(t, cloudAddr)
	hot, hotAddr := startSim(t)
	g := startGateway(t, st, px.addr(), map[string]string{"hot-1": hotAddr})
	postOrders(t, g.base, "a", 20)
	cloudOrder(t, node.base, st, "w-before")
	waitPrinted(t, hot, 21)
	waitSynced(t, g, time.Minute)

	dump := filepath.Join(t.TempDir(), "cloud.dump")
	if out, err := exec.Command(pgDump, "-Fc", "-f", dump, "-d", dbURL).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v: %s", err, out)
	}
	postOrders(t, g.base, "b", 80)
	cloudOrder(t, node.base, st, "w-after-dump")
	waitPrinted(t, hot, 102)
	waitSynced(t, g, time.Minute)

	// The cloud goes down (the gateway compacts its outbox up to what the
	// cloud acknowledged) and comes back on the restored database.
	node.close()
	restored := pgtest.NewEmptyDatabase(t)
	if out, err := exec.Command(pgRestore, "--no-owner", "-d", restored, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v: %s", err, out)
	}
	node = startCloud(t, restored, cloudAddr)
	g.dbURL = restored
	waitSynced(t, g, time.Minute)
	wantLinkEvent(t, node.base, "resynchronised")
	cloudOrder(t, node.base, st, "w-after-restore")
	waitPrinted(t, hot, 103)
	waitSynced(t, g, time.Minute)

	if n := compareHeld(t, restored, g, st); n != 103 {
		t.Errorf("the store holds %d tasks, want 103", n)
	}
	if n := printedOnce(t, hot); n != 103 {
		t.Errorf("got %d tickets, want 103", n)
	}
	reconcileShows(t, node, g, st, 0, "resync: store sent a snapshot of 102 tasks", "cloud last recorded resynchronised")
}

// The gateway's data dir replaced by a copy taken while ten tickets
// waited for paper; they printed after the copy and the cloud knew. After
// the restore the gateway learns the cloud's newer state before printing
// anything it holds: none prints again, the dashboard shows the gateway
// restored from an older copy, and a cloud order posted while it was down
// prints once.
func TestChain_DataDirFromOlderCopy(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	cloudAddr := strings.TrimPrefix(node.base, "http://")
	st := createStore(t, node.base, "t1", "s-copy")
	hot, hotAddr := startSim(t)
	hot.SetFault(printersim.FaultPaperEnd)
	dataDir := filepath.Join(t.TempDir(), "data")
	printers := map[string]string{"hot-1": hotAddr}
	g := startGatewayIn(t, st, cloudAddr, printers, dataDir)
	postOrders(t, g.base, "p", 10)
	waitPending(t, g)

	g.Kill(t)
	copyDir := filepath.Join(t.TempDir(), "copy")
	copyTree(t, dataDir, copyDir)
	g = startGatewayIn(t, st, cloudAddr, printers, dataDir)
	hot.SetFault(printersim.FaultNone)
	waitPrinted(t, hot, 10)
	postOrders(t, g.base, "q", 5)
	cloudOrder(t, node.base, st, "w-after-copy")
	waitPrinted(t, hot, 16)
	waitSynced(t, g, time.Minute)

	g.Kill(t)
	cloudOrder(t, node.base, st, "w-down")
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	copyTree(t, copyDir, dataDir)
	g = startGatewayIn(t, st, cloudAddr, printers, dataDir)
	g.dbURL = dbURL
	waitPrinted(t, hot, 17)
	waitSynced(t, g, time.Minute)
	wantLinkEvent(t, node.base, "gateway_behind")
	if n := countRows(t, dbURL, `SELECT count(*) FROM gateway_cursors WHERE learn_to > 0`); n != 0 {
		t.Errorf("the cloud still has %d lessons for the gateway, want 0: it said it learned them", n)
	}

	if n := compareHeld(t, dbURL, g, st); n != 11 {
		t.Errorf("the store holds %d tasks, want 11 (the copy's 10 and the order posted while it was down)", n)
	}
	if n := printedOnce(t, hot); n != 17 {
		t.Errorf("got %d tickets, want 17", n)
	}
	// What printed after the copy is only in the cloud now.
	reconcileShows(t, node, g, st, 1, "resync: store learned", "cloud last recorded gateway behind")
}

// waitPending waits until the cloud acknowledged every event of the
// gateway, whatever its tasks are doing.
func waitPending(t testing.TB, g *gatewayProc) {
	t.Helper()
	waitGateway(t, g, time.Minute, func() (bool, string) {
		var h linkState
		do(t, posToken, "GET", g.base+"/healthz", nil, &h)
		return h.Cloud.Connected && h.Cloud.Pending == 0 && h.Cloud.LastSeq > 0, fmt.Sprintf("link still pending: %+v", h.Cloud)
	})
}

// copyTree copies a directory as a backup tool would.
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}
