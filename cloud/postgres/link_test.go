package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// open starts a link of an incarnation of a gateway, failing the test on
// an error.
func (f *fixture) open(t testing.TB, gatewayID, storeID string, h cloud.LinkHello) *cloud.LinkWelcome {
	t.Helper()
	w, err := f.ingest.Open(context.Background(), gatewayID, storeID, h)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// ingestInc ingests events of an incarnation and fails the test on an error.
func (f *fixture) ingestInc(t testing.TB, gatewayID, storeID, inc string, events ...sync.Event) *cloud.IngestResult {
	t.Helper()
	res, err := f.ingest.Ingest(context.Background(), gatewayID, storeID, inc, events)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (f *fixture) status(t testing.TB, storeID, taskNo string) (storeprint.Status, uint64) {
	t.Helper()
	task, err := f.tasks.FindTask(adminCtx, storeID, taskNo)
	if err != nil {
		t.Fatal(err)
	}
	return task.Status, task.Version
}

func (f *fixture) secondGateway(t testing.TB, storeID string) *cloud.Gateway {
	t.Helper()
	gw, _, err := f.gateways.CreateGateway(adminCtx, storeID, cloud.Note{Reason: "second box"})
	if err != nil {
		t.Fatal(err)
	}
	return gw
}

func TestIngestService_Rules(t *testing.T) {
	t.Parallel()
	const taskNo = "order_a_station_hot"

	// A second gateway credential of the same store cannot change the
	// tasks the first reported, while the first is live; once it is
	// revoked, the second takes them over, audited.
	t.Run("Ownership", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw1, _ := f.mustStore(t, "acme", "s1")
		gw2 := f.secondGateway(t, "s1")
		f.ingestInc(t, gw1.ID, "s1", "", taskEvent(1, taskNo, 1, "queued"), taskEvent(2, taskNo, 2, "printing"), taskEvent(3, taskNo, 3, "done"))
		res := f.ingestInc(t, gw2.ID, "s1", "", taskEvent(1, taskNo, 9, "attention_required"),
			receiptEvent(2, taskNo, 9, storeprint.ReceiptPrepared), taskEvent(3, "order_b_station_hot", 1, "queued"))
		if res.Cursor != 3 || len(res.DeadLetters) != 2 || !strings.Contains(res.DeadLetters[0].Reason, "belongs to gateway "+gw1.ID) {
			t.Fatalf("got %+v, want the two events of the first gateway's task dead-lettered and the cursor past them", res)
		}
		if st, v := f.status(t, "s1", taskNo); st != storeprint.StatusDone || v != 3 {
			t.Fatalf("got %s v%d, want done v3: the second gateway changed nothing", st, v)
		}
		if got := f.receipts(t, "s1", taskNo); len(got) != 0 {
			t.Fatalf("got receipts %v of the second gateway, want none: its event is a dead letter", got)
		}
		if _, err := f.gateways.RevokeGateway(adminCtx, gw1.ID, cloud.Note{Reason: "box replaced"}); err != nil {
			t.Fatal(err)
		}
		res = f.ingestInc(t, gw2.ID, "s1", "", taskEvent(4, taskNo, 10, "done"))
		if len(res.DeadLetters) != 0 {
			t.Fatalf("got %+v, want the task taken over", res.DeadLetters)
		}
		if st, v := f.status(t, "s1", taskNo); st != storeprint.StatusDone || v != 10 {
			t.Fatalf("got %s v%d, want done v10 from the second gateway", st, v)
		}
		for q, want := range map[string]int{
			`SELECT count(*) FROM audit_events WHERE action = 'gateway.take_over'`:     1,
			`SELECT count(*) FROM link_events WHERE kind = 'take_over'`:                1,
			`SELECT count(*) FROM print_tasks WHERE gateway_id = '` + gw2.ID + `'`:     2,
			`SELECT count(*) FROM alerts WHERE kind = 'dead_letter' AND task_no <> ''`: 2,
		} {
			if n := f.count(t, q); n != want {
				t.Errorf("%s: got %d, want %d", q, n, want)
			}
		}
	})

	// A seq far past the cursor is neither stored nor claimed: the real
	// event with that seq is stored when it comes.
	t.Run("Window", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		far := uint64(sync.MaxWindow + 2)
		res := f.ingestInc(t, gw.ID, "s1", "", taskEvent(1, taskNo, 1, "queued"), taskEvent(far, "order_far_station_hot", 4_000_000_000, "done"))
		if res.Cursor != 1 || f.count(t, `SELECT count(*) FROM task_events`) != 1 {
			t.Fatalf("got cursor %d, want 1 and the far seq not stored", res.Cursor)
		}
		var events []sync.Event
		for seq := uint64(2); seq <= far; seq++ {
			events = append(events, event(seq, "noop", "", map[string]int{"n": int(seq)}))
		}
		events[len(events)-1] = taskEvent(far, "order_far_station_hot", 1, "queued")
		for len(events) > 0 {
			n := min(len(events), cloud.MaxIngestBatch)
			res = f.ingestInc(t, gw.ID, "s1", "", events[:n]...)
			events = events[n:]
		}
		if res.Cursor != far {
			t.Fatalf("got cursor %d, want %d", res.Cursor, far)
		}
		if st, v := f.status(t, "s1", "order_far_station_hot"); st != storeprint.StatusQueued || v != 1 {
			t.Fatalf("got %s v%d, want the real event's queued v1", st, v)
		}
	})

	// A version jump past the bound is dead-lettered; the next real
	// version applies.
	t.Run("VersionJump", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		res := f.ingestInc(t, gw.ID, "s1", "", taskEvent(1, taskNo, 1, "queued"), taskEvent(2, taskNo, 4_000_000_000_000_000_000, "attention_required"),
			taskEvent(3, "order_new_station_hot", sync.MaxVersionJump+1, "queued"), taskEvent(4, taskNo, 2, "printing"))
		if res.Cursor != 4 || len(res.DeadLetters) != 2 || !strings.Contains(res.DeadLetters[0].Reason, "version") {
			t.Fatalf("got %+v, want both jumps dead-lettered", res)
		}
		if st, v := f.status(t, "s1", taskNo); st != storeprint.StatusPrinting || v != 2 {
			t.Fatalf("got %s v%d, want printing v2", st, v)
		}
	})

	// A transition the table does not allow, where the state before it is
	// known, is dead-lettered.
	t.Run("Transition", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		res := f.ingestInc(t, gw.ID, "s1", "",
			taskEvent(1, "order_n_station_hot", 1, "done"),                       // a task cannot start done
			taskEvent(2, taskNo, 1, "queued"), taskEvent(3, taskNo, 2, "failed"), // queued cannot fail
			taskEvent(4, taskNo, 2, "printing"), taskEvent(5, taskNo, 3, "done"), taskEvent(6, taskNo, 4, "queued"))
		if len(res.DeadLetters) != 3 || res.Cursor != 6 {
			t.Fatalf("got %+v, want 3 impossible transitions dead-lettered", res)
		}
		if st, v := f.status(t, "s1", taskNo); st != storeprint.StatusDone || v != 3 {
			t.Fatalf("got %s v%d, want done v3", st, v)
		}
	})

	// The not_sent receipt of an attempt stopped after prepared is stored.
	t.Run("NotSent", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		res := f.ingestInc(t, gw.ID, "s1", "", taskEvent(1, taskNo, 1, "queued"), taskEvent(2, taskNo, 2, "printing"),
			receiptEvent(3, taskNo, 1, storeprint.ReceiptPrepared), receiptEvent(4, taskNo, 1, storeprint.ReceiptNotSent),
			taskEvent(5, taskNo, 3, "queued"))
		if res.Cursor != 5 || len(res.DeadLetters) != 0 {
			t.Fatalf("got %+v, want every event applied", res)
		}
		if got := fmt.Sprint(f.receipts(t, "s1", taskNo)); got != "["+taskNo+":1:prepared@3 "+taskNo+":1:not_sent@4]" {
			t.Fatalf("got receipts %s, want prepared, then not_sent", got)
		}
	})
}

func TestIngestService_Open(t *testing.T) {
	t.Parallel()
	const taskNo = "order_a_station_hot"

	// A new incarnation of a gateway (its data dir wiped) gets a cursor of
	// its own starting at 0, its states win over the old incarnation's
	// higher versions, and the store shows "gateway data reset".
	t.Run("NewIncarnation", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		if w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "aaaa", Resync: true}); w.Reset || w.Cursor != 0 || w.Behind || w.Snapshot {
			t.Fatalf("got %+v, want a plain first link", w)
		}
		f.ingestInc(t, gw.ID, "s1", "aaaa", lifecycle(1, 3, "a")...)
		w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "bbbb", Resync: true})
		if !w.Reset || w.Cursor != 0 || w.Behind || w.Snapshot {
			t.Fatalf("got %+v, want a reset with its cursor at 0", w)
		}
		res := f.ingestInc(t, gw.ID, "s1", "bbbb", taskEvent(1, "order_a0_station_hot", 1, "queued"), taskEvent(2, "order_new_station_hot", 1, "queued"))
		if res.Cursor != 2 || len(res.DeadLetters) != 0 {
			t.Fatalf("got %+v, want both events stored and applied", res)
		}
		if st, v := f.status(t, "s1", "order_a0_station_hot"); st != storeprint.StatusQueued || v != 1 {
			t.Fatalf("got %s v%d, want the new incarnation's queued v1", st, v)
		}
		d, err := NewDashboardService(f.db).Dashboard(tenantCtx("acme"), cloud.DashboardFilter{})
		if err != nil || len(d.LinkEvents) != 1 || d.LinkEvents[0].Kind != cloud.LinkGatewayReset || d.LinkEvents[0].StoreName != "Store s1" {
			t.Fatalf("got %+v %v, want the dashboard to show the gateway data reset", d.LinkEvents, err)
		}
		// The old incarnation, should it still run, changes nothing.
		f.ingestInc(t, gw.ID, "s1", "aaaa", taskEvent(19, "order_a0_station_hot", 9, "done"))
		if st, _ := f.status(t, "s1", "order_a0_station_hot"); st != storeprint.StatusQueued {
			t.Fatalf("got %s, want the newer incarnation's queued", st)
		}
		if w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "bbbb", LastSeq: 2, Compacted: 2, Resync: true}); w.Reset || w.Cursor != 2 {
			t.Fatalf("got %+v, want the same incarnation again at 2", w)
		}
	})

	// A gateway of another store, in whatever incarnation, cannot touch
	// this store's tasks.
	t.Run("OtherStore", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gwA, _ := f.mustStore(t, "acme", "a1")
		gwB, _ := f.mustStore(t, "acme", "b1")
		f.ingestInc(t, gwA.ID, "a1", "", taskEvent(1, taskNo, 1, "queued"))
		f.open(t, gwB.ID, "b1", cloud.LinkHello{Incarnation: "new1", Resync: true})
		f.ingestInc(t, gwB.ID, "b1", "new1", taskEvent(1, taskNo, 1, "queued"), taskEvent(2, taskNo, 2, "printing"))
		if _, err := f.ingest.Open(context.Background(), gwB.ID, "a1", cloud.LinkHello{Incarnation: "new2"}); storeprint.ErrorCode(err) == "" {
			t.Fatal("a gateway opened a link for another store")
		}
		if _, err := f.ingest.Ingest(context.Background(), gwB.ID, "a1", "new1", lifecycle(3, 1, "x")); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("got %v, want EUNAUTHORIZED", err)
		}
		if st, v := f.status(t, "a1", taskNo); st != storeprint.StatusQueued || v != 1 {
			t.Fatalf("got %s v%d in store a1, want its own queued v1", st, v)
		}
	})

	// A gateway restored from an older copy: the cloud stored seqs past its
	// last one. It learns the cloud's state of the tasks changed since,
	// what it sends next is stored (not taken for what the cloud has), and
	// its states win from then on.
	t.Run("GatewayBehind", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "c0", Resync: true})
		events := lifecycle(1, 4, "w") // 24 events; tasks w0..w3
		f.ingestInc(t, gw.ID, "s1", "c0", events...)
		w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "c0", LastSeq: 12, Compacted: 10, Resync: true})
		if !w.Behind || w.Cursor != 12 || w.Snapshot || len(w.States) != 2 {
			t.Fatalf("got %+v, want behind at 12 with the states of w2 and w3", w)
		}
		if w.States[0].TaskNo != "order_w2_station_hot" || w.States[0].Status != storeprint.StatusDone {
			t.Fatalf("got states %+v, want w2 done first", w.States)
		}
		// The link broke before the gateway said it learned them: it hears
		// them again, until it says so.
		if w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "c0", LastSeq: 12, Compacted: 10, Resync: true}); !w.Behind || w.Cursor != 12 || len(w.States) != 2 {
			t.Fatalf("got %+v, want the same lesson again", w)
		}
		if err := f.ingest.Learned(context.Background(), gw.ID, "s1", "c0"); err != nil {
			t.Fatal(err)
		}
		if w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "c0", LastSeq: 12, Compacted: 10, Resync: true}); w.Behind || w.Cursor != 12 {
			t.Fatalf("got %+v, want nothing more to learn", w)
		}
		// Seq 13 again, other content: stored, and it wins (higher rank).
		res := f.ingestInc(t, gw.ID, "s1", "c0", taskEvent(13, "order_w2_station_hot", 2, "attention_required"))
		if res.Cursor != 13 || len(res.DeadLetters) != 0 {
			t.Fatalf("got %+v, want 13 stored", res)
		}
		if st, _ := f.status(t, "s1", "order_w2_station_hot"); st != storeprint.StatusAttention {
			t.Fatalf("got %s, want the restored gateway's attention_required", st)
		}
		if n := f.count(t, `SELECT count(*) FROM link_events WHERE kind = 'gateway_behind' AND count = 2`); n != 1 {
			t.Fatalf("got %d gateway_behind events, want 1", n)
		}
	})

	// The cloud behind (its database restored): the gateway is asked for a
	// snapshot, applied version-forward; the final part moves the cursor.
	t.Run("CloudBehind", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "d0", Resync: true})
		f.ingestInc(t, gw.ID, "s1", "d0", lifecycle(1, 1, "s")...) // seq 1..6
		w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "d0", LastSeq: 40, Compacted: 30, Resync: true})
		if !w.Snapshot || w.Behind || w.Cursor != 6 {
			t.Fatalf("got %+v, want a snapshot asked at 6", w)
		}
		ctx := context.Background()
		var tasks []sync.TaskEvent
		for i := range 5 {
			no := fmt.Sprintf("order_s%d_station_hot", i)
			tasks = append(tasks, sync.TaskEvent{TaskNo: no, Version: 5, OrderID: "s", Station: "hot", PrinterID: "hot-1",
				Status: storeprint.StatusDone, Attempt: 1, CreatedAt: t0, UpdatedAt: t0})
		}
		tasks = append(tasks, sync.TaskEvent{TaskNo: "bad/no", Version: 1, Status: "queued"})
		receipts := []sync.ReceiptEvent{{TaskNo: "order_s1_station_hot", Attempt: 1, State: storeprint.ReceiptPrinted, PrinterID: "hot-1", At: t0}}
		if cur, err := f.ingest.Snapshot(ctx, gw.ID, "s1", "d0", &cloud.SnapshotPart{Tasks: tasks[:3]}); err != nil || cur != 6 {
			t.Fatalf("got %d %v, want 6: the cursor moves with the final part", cur, err)
		}
		cur, err := f.ingest.Snapshot(ctx, gw.ID, "s1", "d0", &cloud.SnapshotPart{Tasks: tasks[3:], Receipts: receipts, Final: true, Through: 30, Total: 5})
		if err != nil || cur != 30 {
			t.Fatalf("got %d %v, want 30", cur, err)
		}
		if res := f.ingestInc(t, gw.ID, "s1", "d0", taskEvent(31, "order_s9_station_hot", 1, "queued")); res.Cursor != 31 {
			t.Fatalf("got %+v, want the stream to resume at 31", res)
		}
		for q, want := range map[string]int{
			`SELECT count(*) FROM print_tasks WHERE status = 'done' AND version = 5`:       5,
			`SELECT count(*) FROM link_events WHERE kind = 'resynchronised' AND count = 5`: 1,
		} {
			if n := f.count(t, q); n != want {
				t.Errorf("%s: got %d, want %d", q, n, want)
			}
		}
		// order_s0's from its events, order_s1's from the snapshot.
		want := "[order_s0_station_hot:1:prepared@3 order_s0_station_hot:1:submitted@4 order_s0_station_hot:1:printed@5 order_s1_station_hot:1:printed@0]"
		if got := fmt.Sprint(f.receipts(t, "s1", "order_s0_station_hot", "order_s1_station_hot")); got != want {
			t.Errorf("got receipts %s, want %s", got, want)
		}
	})

	// Downstream: commands the store applied and the restored database
	// lost are numbered past the store's cursor; cloud orders the store
	// acknowledged and lost come again (not those done), with their
	// tasks' state; copies and make-up prints do not.
	t.Run("Downstream", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		for _, id := range []string{"o1", "o2", "o3"} {
			if _, _, err := f.orders.CreateOrder(adminCtx, "s1", newOrder(id)); err != nil {
				t.Fatal(err)
			}
		}
		of := func(seq uint64, orderID, station string, version uint64, status storeprint.Status) sync.Event {
			ev := taskEvent(seq, storeprint.TaskNo(orderID, station), version, status)
			var te sync.TaskEvent
			json.Unmarshal(ev.Data, &te)
			te.OrderID, te.Station, te.Source = orderID, station, storeprint.SourceCloud
			ev.Data, _ = json.Marshal(te)
			return ev
		}
		f.ingestInc(t, gw.ID, "s1", "", of(1, "o1", "hot", 1, "queued"), of(2, "o1", "hot", 2, "printing"),
			of(3, "o1", "hot", 3, "done"), of(4, "o1", "bar", 1, "queued"), of(5, "o1", "bar", 2, "printing"),
			of(6, "o1", "bar", 3, "done"), of(7, "o2", "hot", 1, "queued"))
		if err := f.commands.AckDownstream(ctx, "s1", 3); err != nil {
			t.Fatal(err)
		}
		w := f.open(t, gw.ID, "s1", cloud.LinkHello{Incarnation: "e1", DownCursor: 0, Resync: true})
		if !w.Behind || w.DownAfter != 3 || len(w.Redeliver) != 2 || w.Redeliver[0].Order.OrderID != "o2" {
			t.Fatalf("got %+v, want o2 and o3 sent again (o1 is done) and the queue on after 3", w)
		}
		if len(w.States) != 1 || w.States[0].TaskNo != "order_o2_station_hot" {
			t.Fatalf("got states %+v, want o2's hot task", w.States)
		}
		// A store ahead of a restored queue: what this queue has not seen
		// acknowledged goes after the store's cursor.
		f2 := setup(t)
		gw2, _ := f2.mustStore(t, "acme", "s1")
		for _, id := range []string{"p1", "p2"} {
			if _, _, err := f2.orders.CreateOrder(adminCtx, "s1", newOrder(id)); err != nil {
				t.Fatal(err)
			}
		}
		if w := f2.open(t, gw2.ID, "s1", cloud.LinkHello{DownCursor: 7, Resync: true}); w.DownAfter != 7 {
			t.Fatalf("got %+v, want the queue on after the store's 7", w)
		}
		cmds, err := f2.commands.Downstream(ctx, "s1", 7, 10)
		if err != nil || len(cmds) != 2 || cmds[0].Seq != 8 || cmds[1].Order.OrderID != "p2" {
			t.Fatalf("got %+v %v, want p1 and p2 as 8 and 9", cmds, err)
		}
	})
}

// A NUL or invalid UTF-8 that reaches PostgreSQL (SQLSTATE 22021) is bad
// input, never an internal error.
func TestInterpret_Encoding(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "s1")
	for _, id := range []string{"s\x00", "s\xff"} {
		_, err := f.tasks.FindTask(adminCtx, "s1", "order_"+id)
		wantCode(t, err, storeprint.EINVALID)
		var n int
		err = f.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM stores WHERE store_id = $1`, id).Scan(&n)
		wantCode(t, interpret(err), storeprint.EINVALID)
	}
}
