package ingesttest

import (
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// testCursor: a first link starts at 0; the cursor is the highest
// contiguous seq stored, whatever order the batches came in.
func testCursor(t *testing.T, s *suite) {
	w := s.open(t, s.gw, "i1", cloud.LinkHello{})
	if w.Cursor != 0 || w.Reset || w.Snapshot || w.Behind {
		t.Fatalf("got welcome %+v, want cursor 0 and nothing else", w)
	}
	ev := s.life(1, 1)
	s.ingest(t, s.gw, "i1", 1, ev[0], ev[2])
	s.wantTask(t, 1, 3, storeprint.StatusDone)
	s.ingest(t, s.gw, "i1", 3, ev[1])
	s.wantTask(t, 1, 3, storeprint.StatusDone)
	s.ingest(t, s.gw, "i1", 3) // an empty batch
	s.wantStored(t, s.gw, "i1", 3)
}

// testReplay: events stored before change nothing, in another batch or
// twice in one.
func testReplay(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	ev := append(s.life(1, 1), s.life(4, 2)...)
	s.ingest(t, s.gw, "i1", 2, ev[0], ev[1], ev[0], ev[1])
	s.wantStored(t, s.gw, "i1", 2)
	s.ingest(t, s.gw, "i1", 6, ev...)
	s.wantStored(t, s.gw, "i1", 6)
	// A replay changes nothing, even with other data under a stored seq.
	res := s.ingest(t, s.gw, "i1", 6, append(ev, s.task(2, 1, 1, storeprint.StatusQueued))...)
	wantDead(t, res)
	s.wantStored(t, s.gw, "i1", 6)
	s.wantTask(t, 1, 3, storeprint.StatusDone)
	s.wantTask(t, 2, 3, storeprint.StatusDone)
}

// testPastGap: events stored past a gap come again with the gap filled;
// each is stored once and the cursor runs over them all.
func testPastGap(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	ev := append(s.life(1, 1), s.life(4, 2)...)
	s.ingest(t, s.gw, "i1", 1, ev[0], ev[3], ev[4])
	s.wantStored(t, s.gw, "i1", 3)
	res := s.ingest(t, s.gw, "i1", 6, ev[1:]...)
	wantDead(t, res)
	s.wantStored(t, s.gw, "i1", 6)
	s.wantTask(t, 1, 3, storeprint.StatusDone)
	s.wantTask(t, 2, 3, storeprint.StatusDone)
}

// testWindow: a seq past the cursor by more than sync.MaxWindow is
// neither stored nor claimed; one at the window's edge is stored.
func testWindow(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	s.ingest(t, s.gw, "i1", 3, s.life(1, 1)...)
	far := s.task(3+sync.MaxWindow+1, 2, 1, storeprint.StatusQueued)
	s.ingest(t, s.gw, "i1", 3, far)
	s.wantStored(t, s.gw, "i1", 3)
	if _, ok := s.Task(t, s.store, taskNo(2)); ok {
		t.Fatalf("task 2 was applied from an event past the send window")
	}
	edge := s.task(3+sync.MaxWindow, 3, 1, storeprint.StatusQueued)
	s.ingest(t, s.gw, "i1", 3, edge)
	s.wantStored(t, s.gw, "i1", 4)
	s.wantTask(t, 3, 1, storeprint.StatusQueued)
}

// testOrder: a task's state only moves to a higher version; an older one
// arriving late (in a later batch, or after a newer one in the same
// batch) changes nothing and is no error.
func testOrder(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	res := s.ingest(t, s.gw, "i1", 2,
		s.task(2, 1, 2, storeprint.StatusPrinting), s.task(1, 1, 1, storeprint.StatusQueued))
	wantDead(t, res)
	s.wantTask(t, 1, 2, storeprint.StatusPrinting)
	res = s.ingest(t, s.gw, "i1", 3, s.task(3, 1, 1, storeprint.StatusQueued))
	wantDead(t, res)
	s.wantTask(t, 1, 2, storeprint.StatusPrinting)
	s.ingest(t, s.gw, "i1", 4, s.task(4, 1, 3, storeprint.StatusDone))
	s.wantTask(t, 1, 3, storeprint.StatusDone)
}

// testRank: a new incarnation's state wins for the tasks it reports,
// whatever its version; the older incarnation's states no longer do.
func testRank(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	s.ingest(t, s.gw, "i1", 3, s.life(1, 1)...)
	s.open(t, s.gw, "i2", cloud.LinkHello{})
	s.ingest(t, s.gw, "i2", 1, s.task(1, 1, 1, storeprint.StatusQueued))
	s.wantTask(t, 1, 1, storeprint.StatusQueued)
	s.ingest(t, s.gw, "i1", 4, s.task(4, 1, 4, storeprint.StatusQueued))
	s.wantTask(t, 1, 1, storeprint.StatusQueued)
}

// testDeadLetter: an event that cannot be applied is stored, answered as
// a dead letter, and the cursor moves past it: one that does not decode,
// a version jump past sync.MaxVersionJump, a move the transition table
// does not allow.
func testDeadLetter(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	bad := sync.Event{Seq: 1, Kind: sync.KindTask, TaskNo: taskNo(9), At: s.t0, Data: []byte(`{}`)}
	jump := s.task(2, 1, sync.MaxVersionJump+1, storeprint.StatusQueued)
	step := s.task(3, 2, 1, storeprint.StatusDone) // a new task cannot start done
	res := s.ingest(t, s.gw, "i1", 4, bad, jump, step, s.task(4, 3, 1, storeprint.StatusQueued))
	wantDead(t, res, 1, 2, 3)
	s.wantStored(t, s.gw, "i1", 4)
	for _, n := range []int{1, 2, 9} {
		if task, ok := s.Task(t, s.store, taskNo(n)); ok {
			t.Fatalf("task %d: got %+v from a dead letter, want none", n, task)
		}
	}
	s.wantTask(t, 3, 1, storeprint.StatusQueued)
	// The version bound counts from the state held.
	s.ingest(t, s.gw, "i1", 5, s.task(5, 3, 2, storeprint.StatusPrinting))
	res = s.ingest(t, s.gw, "i1", 6, s.task(6, 3, 2+sync.MaxVersionJump, storeprint.StatusDone))
	wantDead(t, res)
	s.wantTask(t, 3, 2+sync.MaxVersionJump, storeprint.StatusDone)
}

// testOwnership: a task belongs to the gateway that first reported it;
// another gateway of the store may not change it while the owner's
// credential is live, and takes it over once it is revoked.
func testOwnership(t *testing.T, s *suite) {
	other := s.AddGateway(t, s.store)
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	s.open(t, other, "j1", cloud.LinkHello{})
	s.ingest(t, s.gw, "i1", 2, s.life(1, 1)[:2]...)
	res := s.ingest(t, other, "j1", 1, s.task(1, 1, 3, storeprint.StatusDone))
	wantDead(t, res, 1)
	s.wantTask(t, 1, 2, storeprint.StatusPrinting)
	s.Revoke(t, s.store, s.gw)
	res = s.ingest(t, other, "j1", 2, s.task(2, 1, 1, storeprint.StatusQueued))
	wantDead(t, res)
	s.wantTask(t, 1, 1, storeprint.StatusQueued)
	s.ingest(t, other, "j1", 3, s.task(3, 1, 2, storeprint.StatusPrinting))
	s.wantTask(t, 1, 2, storeprint.StatusPrinting)
}

// testResume: a link of an incarnation that reported before resumes after
// its cursor.
func testResume(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true})
	s.ingest(t, s.gw, "i1", 3, s.life(1, 1)...)
	for _, h := range []cloud.LinkHello{{LastSeq: 5}, {LastSeq: 3, Resync: true}, {LastSeq: 9, Resync: true}} {
		w := s.open(t, s.gw, "i1", h)
		if w.Cursor != 3 || w.Reset || w.Snapshot || w.Behind {
			t.Fatalf("hello %+v: got welcome %+v, want cursor 3 and nothing else", h, w)
		}
	}
	s.ingest(t, s.gw, "i1", 4, s.task(4, 2, 1, storeprint.StatusQueued))
}

// testReset: a new incarnation of a gateway that reported before is a
// reset and starts from 0; one of a gateway that never did is not.
func testReset(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	if w := s.open(t, s.gw, "i2", cloud.LinkHello{}); w.Reset {
		t.Fatalf("got welcome %+v, want no reset: nothing was reported before", w)
	}
	s.ingest(t, s.gw, "i2", 3, s.life(1, 1)...)
	w := s.open(t, s.gw, "i3", cloud.LinkHello{LastSeq: 7})
	if !w.Reset || w.Cursor != 0 {
		t.Fatalf("got welcome %+v, want a reset from cursor 0", w)
	}
	s.ingest(t, s.gw, "i3", 1, s.task(1, 2, 1, storeprint.StatusQueued))
	s.wantStored(t, s.gw, "i3", 1)
	s.wantStored(t, s.gw, "i2", 3)
}

// testSnapshot: a cloud behind what the gateway compacted asks for a
// snapshot; its states apply version-forward and the final part moves the
// cursor to the seq it stands for.
func testSnapshot(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true})
	s.ingest(t, s.gw, "i1", 3, s.life(1, 1)...)
	if w := s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true, LastSeq: 20, Compacted: 3}); w.Snapshot {
		t.Fatalf("got welcome %+v, want no snapshot: the cloud has what the gateway compacted", w)
	}
	if w := s.open(t, s.gw, "i1", cloud.LinkHello{LastSeq: 20, Compacted: 12}); w.Snapshot {
		t.Fatalf("got welcome %+v, want no snapshot from a gateway that sends none", w)
	}
	w := s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true, LastSeq: 20, Compacted: 12})
	if !w.Snapshot || w.Cursor != 3 || w.Behind {
		t.Fatalf("got welcome %+v, want a snapshot asked for at cursor 3", w)
	}
	part := &cloud.SnapshotPart{Tasks: []sync.TaskEvent{s.state(1, 2, storeprint.StatusPrinting), s.state(2, 3, storeprint.StatusDone)}}
	if c, err := s.Snapshot(s.ctx, s.gw, s.store, "i1", part); err != nil || c != 3 {
		t.Fatalf("snapshot part: got cursor %d, %v; want 3", c, err)
	}
	s.wantTask(t, 1, 3, storeprint.StatusDone)
	s.wantTask(t, 2, 3, storeprint.StatusDone)
	final := &cloud.SnapshotPart{Tasks: []sync.TaskEvent{s.state(3, 1, storeprint.StatusQueued)}, Final: true, Through: 12, Total: 3}
	if c, err := s.Snapshot(s.ctx, s.gw, s.store, "i1", final); err != nil || c != 12 {
		t.Fatalf("final snapshot part: got cursor %d, %v; want 12", c, err)
	}
	s.wantTask(t, 3, 1, storeprint.StatusQueued)
	s.ingest(t, s.gw, "i1", 13, s.task(13, 3, 2, storeprint.StatusPrinting))
	s.wantTask(t, 3, 2, storeprint.StatusPrinting)
	if w := s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true, LastSeq: 20, Compacted: 12}); w.Snapshot || w.Cursor != 13 {
		t.Fatalf("got welcome %+v, want cursor 13 and no snapshot", w)
	}
}

// testBehind: a gateway whose last seq is below what the cloud stored of
// it learns the cloud's state of the tasks changed past its last seq, on
// every link until it says it learned them; what it sends next is stored
// after what the cloud has.
func testBehind(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true})
	s.ingest(t, s.gw, "i1", 6, append(s.life(1, 1), s.life(4, 2)...)...)
	if w := s.open(t, s.gw, "i1", cloud.LinkHello{LastSeq: 3}); w.Behind || w.Cursor != 6 {
		t.Fatalf("got welcome %+v, want cursor 6 for a gateway that takes no states", w)
	}
	w := s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true, LastSeq: 3})
	if !w.Behind || w.Cursor != 3 || w.Snapshot || w.Reset {
		t.Fatalf("got welcome %+v, want behind at cursor 3", w)
	}
	wantStates(t, w, taskNo(2))
	if w.States[0].Version != 3 || w.States[0].Status != storeprint.StatusDone {
		t.Fatalf("got state %+v, want version 3 done", w.States[0])
	}
	// What it sends next is new, stored past what the cloud has.
	s.ingest(t, s.gw, "i1", 4, s.task(4, 3, 1, storeprint.StatusQueued))
	s.wantStored(t, s.gw, "i1", 7)
	s.wantTask(t, 3, 1, storeprint.StatusQueued)
	s.wantTask(t, 2, 3, storeprint.StatusDone)
	w = s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true, LastSeq: 4})
	if !w.Behind || w.Cursor != 4 {
		t.Fatalf("got welcome %+v, want behind again at cursor 4 until it learned", w)
	}
	wantStates(t, w, taskNo(2))
	if err := s.Learned(s.ctx, s.gw, s.store, "i1"); err != nil {
		t.Fatal(err)
	}
	if w := s.open(t, s.gw, "i1", cloud.LinkHello{Resync: true, LastSeq: 4}); w.Behind || len(w.States) != 0 || w.Cursor != 4 {
		t.Fatalf("got welcome %+v, want cursor 4 and nothing to learn", w)
	}
}

func wantStates(t *testing.T, w *cloud.LinkWelcome, taskNos ...string) {
	t.Helper()
	var got []string
	for _, st := range w.States {
		got = append(got, st.TaskNo)
	}
	if len(got) != len(taskNos) || (len(got) > 0 && got[0] != taskNos[0]) {
		t.Fatalf("got states of %v, want %v", got, taskNos)
	}
}

// testStaged: a cloud that stages batches stores the next batch of a link
// while the one before finishes, with the cursors Ingest would give; an
// aborted batch keeps nothing.
func testStaged(t *testing.T, s *suite) {
	in, ok := s.Ingester.(cloud.StagedIngester)
	if !ok {
		t.Skip("this cloud does not stage batches")
	}
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	ev := append(s.life(1, 1), s.life(4, 2)...)
	first, err := in.Stage(s.ctx, s.gw, s.store, "i1", ev[:4])
	if err != nil {
		t.Fatal(err)
	}
	second, err := in.Stage(s.ctx, s.gw, s.store, "i1", ev[4:])
	if err != nil {
		t.Fatal(err)
	}
	if res, err := first.Finish(s.ctx); err != nil || res.Cursor != 4 {
		t.Fatalf("first: got %+v, %v; want cursor 4", res, err)
	}
	if res, err := second.Finish(s.ctx); err != nil || res.Cursor != 6 {
		t.Fatalf("second: got %+v, %v; want cursor 6", res, err)
	}
	s.wantTask(t, 2, 3, storeprint.StatusDone)
	more := s.life(7, 3)
	b, err := in.Stage(s.ctx, s.gw, s.store, "i1", more)
	if err != nil {
		t.Fatal(err)
	}
	b.Abort()
	s.wantStored(t, s.gw, "i1", 6)
	s.ingest(t, s.gw, "i1", 9, more...)
	s.wantTask(t, 3, 3, storeprint.StatusDone)
}

func testErrBatchTooLarge(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	events := make([]sync.Event, cloud.MaxIngestBatch+1)
	for i := range events {
		events[i] = s.task(uint64(i+1), 1, 1, storeprint.StatusQueued)
	}
	_, err := s.Ingest(s.ctx, s.gw, s.store, "i1", events)
	wantCode(t, "ingest", err, storeprint.EINVALID)
	s.wantStored(t, s.gw, "i1", 0)
}

// testErrNoLink: an incarnation that opened no link, or a gateway of
// another store, is refused.
func testErrNoLink(t *testing.T, s *suite) {
	_, err := s.Ingest(s.ctx, s.gw, s.store, "i1", s.life(1, 1))
	wantCode(t, "ingest before open", err, storeprint.EUNAUTHORIZED)
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	_, err = s.Ingest(s.ctx, s.gw, "s2", "i1", s.life(1, 1))
	wantCode(t, "ingest as another store", err, storeprint.EUNAUTHORIZED)
	_, err = s.Open(s.ctx, "gw-unknown", s.store, cloud.LinkHello{Incarnation: "i1"})
	wantCode(t, "open of an unknown gateway", err, storeprint.EUNAUTHORIZED)
}

// testErrRevoked: a revoked gateway's links are refused, new or open.
func testErrRevoked(t *testing.T, s *suite) {
	s.open(t, s.gw, "i1", cloud.LinkHello{})
	s.ingest(t, s.gw, "i1", 3, s.life(1, 1)...)
	s.Revoke(t, s.store, s.gw)
	_, err := s.Ingest(s.ctx, s.gw, s.store, "i1", []sync.Event{s.task(4, 2, 1, storeprint.StatusQueued)})
	wantCode(t, "ingest", err, storeprint.EUNAUTHORIZED)
	_, err = s.Open(s.ctx, s.gw, s.store, cloud.LinkHello{Incarnation: "i1", LastSeq: 3})
	wantCode(t, "open", err, storeprint.EUNAUTHORIZED)
	_, err = s.Open(s.ctx, s.gw, s.store, cloud.LinkHello{Incarnation: "i2"})
	wantCode(t, "open of a new incarnation", err, storeprint.EUNAUTHORIZED)
	_, err = s.Snapshot(s.ctx, s.gw, s.store, "i1", &cloud.SnapshotPart{Final: true, Through: 3})
	wantCode(t, "snapshot", err, storeprint.EUNAUTHORIZED)
	s.wantStored(t, s.gw, "i1", 3)
}
