package ingesttest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// Cloud is one fresh, empty cloud under test: its Ingester and what the
// suite does around it.
type Cloud struct {
	cloud.Ingester
	// AddGateway makes a gateway credential for the store (and the store
	// with its tenant when new) and returns the gateway's id.
	AddGateway func(t *testing.T, storeID string) string
	// Revoke revokes a gateway's credential.
	Revoke func(t *testing.T, storeID, gatewayID string)
	// Task returns the cloud's state of a store's task (its version and
	// status suffice), ok false when it holds none.
	Task func(t *testing.T, storeID, taskNo string) (task sync.TaskEvent, ok bool)
	// Stored returns how many events of one incarnation of a gateway the
	// cloud stored.
	Stored func(t *testing.T, storeID, gatewayID, incarnation string) int
}

// Exercise runs the suite; newCloud returns a fresh cloud for each case
// and closes it with t.Cleanup. Cases run in parallel.
func Exercise(t *testing.T, newCloud func(t *testing.T) Cloud) {
	cases := []struct {
		name string
		run  func(t *testing.T, s *suite)
	}{
		{"Cursor", testCursor},
		{"Replay", testReplay},
		{"PastGap", testPastGap},
		{"Window", testWindow},
		{"Order", testOrder},
		{"Rank", testRank},
		{"DeadLetter", testDeadLetter},
		{"Ownership", testOwnership},
		{"Resume", testResume},
		{"Reset", testReset},
		{"Snapshot", testSnapshot},
		{"Behind", testBehind},
		{"Staged", testStaged},
		{"ErrBatchTooLarge", testErrBatchTooLarge},
		{"ErrNoLink", testErrNoLink},
		{"ErrRevoked", testErrRevoked},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			t.Cleanup(cancel)
			cl := newCloud(t)
			s := &suite{Cloud: cl, ctx: ctx, store: "s1", t0: time.Now().UTC().Truncate(time.Second)}
			s.gw = cl.AddGateway(t, s.store)
			c.run(t, s)
		})
	}
}

// suite is one case's cloud with a store and its first gateway.
type suite struct {
	Cloud
	ctx   context.Context
	store string
	gw    string
	t0    time.Time
}

// taskNo names the suite's tasks.
func taskNo(n int) string { return fmt.Sprintf("order_o%d_station_hot", n) }

// task is a task event: task n at version v in status st.
func (s *suite) task(seq uint64, n int, v uint64, st storeprint.Status) sync.Event {
	at := s.t0.Add(time.Duration(seq) * time.Millisecond)
	t := sync.TaskEvent{TaskNo: taskNo(n), Version: v, OrderID: fmt.Sprintf("o%d", n), Station: "hot", PrinterID: "hot-1",
		Status: st, Source: "pos", CreatedAt: s.t0, UpdatedAt: at}
	if st != storeprint.StatusQueued {
		t.Attempt = 1
	}
	if st == storeprint.StatusDone {
		t.PrintedAt = &at
	}
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return sync.Event{Seq: seq, Kind: sync.KindTask, TaskNo: t.TaskNo, At: at, Data: b}
}

// life is task n's three states from seq on: queued, printing, done.
func (s *suite) life(seq uint64, n int) []sync.Event {
	return []sync.Event{
		s.task(seq, n, 1, storeprint.StatusQueued),
		s.task(seq+1, n, 2, storeprint.StatusPrinting),
		s.task(seq+2, n, 3, storeprint.StatusDone),
	}
}

// state is a task state as a snapshot carries it.
func (s *suite) state(n int, v uint64, st storeprint.Status) sync.TaskEvent {
	var t sync.TaskEvent
	e := s.task(v, n, v, st)
	if err := json.Unmarshal(e.Data, &t); err != nil {
		panic(err)
	}
	return t
}

func (s *suite) open(t *testing.T, gatewayID, inc string, h cloud.LinkHello) *cloud.LinkWelcome {
	t.Helper()
	h.Incarnation = inc
	w, err := s.Open(s.ctx, gatewayID, s.store, h)
	if err != nil {
		t.Fatalf("open %s/%s: %v", gatewayID, inc, err)
	}
	return w
}

// ingest ingests a batch and checks the cursor it returns.
func (s *suite) ingest(t *testing.T, gatewayID, inc string, want uint64, events ...sync.Event) *cloud.IngestResult {
	t.Helper()
	res, err := s.Ingest(s.ctx, gatewayID, s.store, inc, events)
	if err != nil {
		t.Fatalf("ingest %s: %v", seqs(events), err)
	}
	if res.Cursor != want {
		t.Fatalf("ingest %s: got cursor %d, want %d", seqs(events), res.Cursor, want)
	}
	return res
}

func seqs(events []sync.Event) string {
	out := make([]uint64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return fmt.Sprint(out)
}

// wantTask checks the cloud's state of task n.
func (s *suite) wantTask(t *testing.T, n int, v uint64, st storeprint.Status) {
	t.Helper()
	got, ok := s.Task(t, s.store, taskNo(n))
	if !ok || got.Version != v || got.Status != st {
		t.Fatalf("task %d: got version %d %q (held: %v), want version %d %q", n, got.Version, got.Status, ok, v, st)
	}
}

func (s *suite) wantStored(t *testing.T, gatewayID, inc string, want int) {
	t.Helper()
	if got := s.Stored(t, s.store, gatewayID, inc); got != want {
		t.Fatalf("got %d events of %s/%s stored, want %d", got, gatewayID, inc, want)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := storeprint.ErrorCode(err); got != code {
		t.Fatalf("%s: got error %v (code %q), want code %q", what, err, got, code)
	}
}

func wantDead(t *testing.T, res *cloud.IngestResult, seqs ...uint64) {
	t.Helper()
	var got []uint64
	for _, d := range res.DeadLetters {
		got = append(got, d.Seq)
		if d.Reason == "" {
			t.Errorf("dead letter %d has no reason", d.Seq)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(seqs) {
		t.Fatalf("got dead letters %v, want %v", got, seqs)
	}
}
