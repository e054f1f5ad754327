package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

func TestIngestService_Ingest(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		events := append(lifecycle(1, 2, "a"), auditEvent(13, "a-1", "reprint", "order_a0_station_hot"))
		cursor, err := f.ingestEvents(context.Background(), gw.ID, "s1", events)
		if err != nil {
			t.Fatal(err)
		}
		if cursor != 13 {
			t.Fatalf("got cursor %d, want 13", cursor)
		}
		task, err := f.tasks.FindTask(tenantCtx("acme"), "s1", "order_a0_station_hot")
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != storeprint.StatusDone || task.Version != 3 || len(task.Receipts) != 3 ||
			task.Receipts[2].State != storeprint.ReceiptPrinted || task.PrinterID != "hot-1" {
			t.Fatalf("got task %+v, want done at version 3 with 3 receipts", task)
		}
		if n := f.count(t, `SELECT count(*) FROM task_events WHERE gateway_id = $1`, gw.ID); n != 13 {
			t.Fatalf("got %d events stored, want 13", n)
		}
		var audit cloud.AuditEvent
		err = f.db.pool.QueryRow(context.Background(), `
			SELECT actor, operator, action, reason, before, after FROM audit_events WHERE source = 'gateway'`).
			Scan(&audit.Actor, &audit.Operator, &audit.Action, &audit.Reason, &audit.Before, &audit.After)
		if err != nil {
			t.Fatal(err)
		}
		if audit.Actor != "gateway:"+gw.ID || audit.Operator != "Li" || audit.Action != "reprint" ||
			audit.Reason != "paper jam" || string(audit.Before) != `{"status": "failed"}` {
			t.Fatalf("got audit %+v", audit)
		}
		if n := f.count(t, `SELECT count(*) FROM printers WHERE store_id = 's1' AND printer_id = 'hot-1'`); n != 1 {
			t.Fatalf("got %d printers, want the one the tasks name", n)
		}
	})

	t.Run("Replay", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		events := append(lifecycle(1, 10, "r"), auditEvent(61, "r-1", "resolve", ""))
		for i := range 5 {
			cursor, err := f.ingestEvents(context.Background(), gw.ID, "s1", events)
			if err != nil {
				t.Fatalf("delivery %d: %v", i+1, err)
			}
			if cursor != 61 {
				t.Fatalf("delivery %d: got cursor %d, want 61", i+1, cursor)
			}
		}
		for q, want := range map[string]int{
			`SELECT count(*) FROM task_events`:                                       61,
			`SELECT count(*) FROM print_tasks`:                                       10,
			`SELECT count(*) FROM audit_events WHERE source='gateway'`:               1,
			`SELECT count(*) FROM print_tasks WHERE status = 'done' AND version = 3`: 10,
		} {
			if n := f.count(t, q); n != want {
				t.Errorf("%s: got %d, want %d", q, n, want)
			}
		}
		var taskNos []string
		for i := range 10 {
			taskNos = append(taskNos, fmt.Sprintf("order_r%d_station_hot", i))
		}
		if got := f.receipts(t, "s1", taskNos...); len(got) != 30 {
			t.Errorf("got %d receipts %v, want 30: three steps of each task once", len(got), got)
		}
	})

	t.Run("OldVersionLate", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		// The newer state arrives first (seq 2), the older one late (seq 1).
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{taskEvent(2, "order_o_station_hot", 3, "done")}); err != nil {
			t.Fatal(err)
		}
		cursor, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{taskEvent(1, "order_o_station_hot", 2, "printing")})
		if err != nil {
			t.Fatal(err)
		}
		if cursor != 2 {
			t.Fatalf("got cursor %d, want 2", cursor)
		}
		task, err := f.tasks.FindTask(adminCtx, "s1", "order_o_station_hot")
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != storeprint.StatusDone || task.Version != 3 {
			t.Fatalf("got %s at version %d, want done at version 3", task.Status, task.Version)
		}
		// And within one batch.
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{
			taskEvent(3, "order_b_station_hot", 5, "failed"),
			taskEvent(4, "order_b_station_hot", 4, "retry_wait"),
		}); err != nil {
			t.Fatal(err)
		}
		task, _ = f.tasks.FindTask(adminCtx, "s1", "order_b_station_hot")
		if task.Status != storeprint.StatusFailed || task.Version != 5 {
			t.Fatalf("got %s at version %d, want failed at version 5", task.Status, task.Version)
		}
	})

	t.Run("Gap", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		events := lifecycle(1, 2, "g") // seq 1..12
		cursor, err := f.ingestEvents(ctx, gw.ID, "s1", events[6:])
		if err != nil || cursor != 0 {
			t.Fatalf("got cursor %d err %v, want 0: seq 1-6 are missing", cursor, err)
		}
		cursor, err = f.ingestEvents(ctx, gw.ID, "s1", events[:3])
		if err != nil || cursor != 3 {
			t.Fatalf("got cursor %d err %v, want 3", cursor, err)
		}
		cursor, err = f.ingestEvents(ctx, gw.ID, "s1", events[3:6])
		if err != nil || cursor != 12 {
			t.Fatalf("got cursor %d err %v, want 12: the gap is filled", cursor, err)
		}
		cursor, err = f.ingestEvents(ctx, gw.ID, "s1", nil)
		if err != nil || cursor != 12 {
			t.Fatalf("empty batch: got cursor %d err %v, want 12", cursor, err)
		}
	})

	t.Run("CloudOrder", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		if _, _, err := f.orders.CreateOrder(adminCtx, "s1", newOrder("d1")); err != nil {
			t.Fatal(err)
		}
		ev := event(1, sync.KindTask, "order_d1_station_hot", sync.TaskEvent{
			TaskNo: "order_d1_station_hot", Version: 1, OrderID: "d1", Station: "hot", PrinterID: "hot-1",
			Status: "queued", Source: "cloud", CreatedAt: t0, UpdatedAt: t0,
		})
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{ev}); err != nil {
			t.Fatal(err)
		}
		hot, _ := f.tasks.FindTask(adminCtx, "s1", "order_d1_station_hot")
		bar, _ := f.tasks.FindTask(adminCtx, "s1", "order_d1_station_bar")
		if hot.Status != storeprint.StatusQueued || hot.PrinterID != "hot-1" || hot.Source != "cloud" {
			t.Fatalf("got hot %+v, want queued on hot-1", hot)
		}
		if bar.Status != cloud.StatusPendingDelivery {
			t.Fatalf("got bar %s, want pending_delivery", bar.Status)
		}
	})

	t.Run("Alerts", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		const taskNo = "order_al_station_hot"
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{
			taskEvent(1, taskNo, 1, "queued"),
			taskEvent(2, taskNo, 2, "attention_required"),
		}); err != nil {
			t.Fatal(err)
		}
		alerts, err := f.stores.FindAlerts(adminCtx, "s1", cloud.AlertFilter{})
		if err != nil || len(alerts) != 1 || alerts[0].TaskNo != taskNo || alerts[0].Kind != "attention_required" {
			t.Fatalf("got %+v %v, want one attention_required alert", alerts, err)
		}
		stores, _, _ := f.stores.FindStores(adminCtx, cloud.StoreFilter{})
		if stores[0].OpenAlerts != 1 {
			t.Fatalf("got %d open alerts, want 1", stores[0].OpenAlerts)
		}
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{taskEvent(3, taskNo, 3, "done")}); err != nil {
			t.Fatal(err)
		}
		alerts, _ = f.stores.FindAlerts(adminCtx, "s1", cloud.AlertFilter{})
		if len(alerts) != 0 {
			t.Fatalf("got %+v, want none: the task is done", alerts)
		}
	})

	t.Run("UnknownKind", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		cursor, err := f.ingestEvents(context.Background(), gw.ID, "s1", []sync.Event{event(1, "printer", "", map[string]string{"id": "p"})})
		if err != nil || cursor != 1 {
			t.Fatalf("got %d %v, want 1 nil: a newer kind is stored", cursor, err)
		}
	})

	t.Run("DeadLetters", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		bad := []sync.Event{
			taskEvent(2, "order_x_station_hot", 1, "lost"),
			taskEvent(3, "order_y_station_hot", 0, "queued"),
			{Seq: 4, Kind: sync.KindTask, At: t0, Data: json.RawMessage(`{"task_no":`)},
			{Seq: 5, Kind: "printer", At: t0, Data: json.RawMessage(`{`)},
			receiptEvent(6, "order_x_station_hot", 1, "lost"),
			{Seq: 7, At: t0, Data: json.RawMessage(`{}`)},
			{Seq: 8, Kind: "x", Data: json.RawMessage(`{}`)},
			{Seq: 9, Kind: sync.KindTask, TaskNo: "other", At: t0, Data: taskEvent(9, "order_x_station_hot", 1, "queued").Data},
			auditEvent(10, "id", "", ""),
			{Seq: 11, Kind: sync.KindAudit, At: t0, Data: json.RawMessage(`{"id":"1","action":"void","reason":"a\u0000b"}`)},
			{Seq: 12, Kind: "x\x00y\xff", TaskNo: "t\x00", At: t0, Data: json.RawMessage("{\"a\":\"\x00\xff\"}")},
		}
		batch := append([]sync.Event{taskEvent(1, "order_ok_station_hot", 1, "queued")}, bad...)
		batch = append(batch, taskEvent(13, "order_ok_station_hot", 2, "printing"),
			taskEvent(0, "order_z_station_hot", 1, "queued"), taskEvent(13, "order_z_station_hot", 1, "queued"))
		for i := range 2 {
			res, err := f.ingest.Ingest(ctx, gw.ID, "s1", "", batch)
			if err != nil {
				t.Fatalf("delivery %d: %v", i+1, err)
			}
			if res.Cursor != 13 {
				t.Fatalf("delivery %d: got cursor %d, want 13: past every bad event", i+1, res.Cursor)
			}
			if want := len(bad) * (1 - i); len(res.DeadLetters) != want {
				t.Fatalf("delivery %d: got %d dead letters, want %d: %+v", i+1, len(res.DeadLetters), want, res.DeadLetters)
			}
		}
		task, err := f.tasks.FindTask(adminCtx, "s1", "order_ok_station_hot")
		if err != nil || task.Status != storeprint.StatusPrinting {
			t.Fatalf("got %+v %v, want the events after the bad ones applied", task, err)
		}
		for q, want := range map[string]int{
			`SELECT count(*) FROM dead_letters`:                                        len(bad),
			`SELECT count(*) FROM alerts WHERE kind = 'dead_letter'`:                   len(bad),
			`SELECT count(*) FROM link_events WHERE kind = 'dead_letter'`:              1,
			`SELECT count(*) FROM task_events`:                                         13,
			`SELECT count(*) FROM print_tasks WHERE task_no <> 'order_ok_station_hot'`: 0,
		} {
			if n := f.count(t, q); n != want {
				t.Errorf("%s: got %d, want %d", q, n, want)
			}
		}
	})

	t.Run("ErrOtherStore", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		f.mustStore(t, "acme", "s2")
		_, err := f.ingestEvents(context.Background(), gw.ID, "s2", lifecycle(1, 1, "x"))
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
}

func TestIngestService_Stage(t *testing.T) {
	t.Parallel()

	t.Run("OKNextWhileOneFinishes", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		events := lifecycle(1, 4, "p") // seq 1..24; task p1 runs over both batches
		first, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events[:9])
		if err != nil {
			t.Fatal(err)
		}
		second, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events[9:])
		if err != nil {
			t.Fatal(err)
		}
		if res, err := first.Finish(ctx); err != nil || res.Cursor != 9 {
			t.Fatalf("first: got %+v, %v; want cursor 9", res, err)
		}
		if res, err := second.Finish(ctx); err != nil || res.Cursor != 24 || len(res.DeadLetters) != 0 {
			t.Fatalf("second: got %+v, %v; want cursor 24, nothing set aside", res, err)
		}
		for i := 0; i < 4; i++ {
			task, err := f.tasks.FindTask(tenantCtx("acme"), "s1", fmt.Sprintf("order_p%d_station_hot", i))
			if err != nil || task.Status != storeprint.StatusDone || task.Version != 3 {
				t.Fatalf("task %d: got %+v, %v; want done at version 3", i, task, err)
			}
		}
	})

	t.Run("OKSameEventsStagedTwice", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		events := lifecycle(1, 2, "r")
		first, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events)
		if err != nil {
			t.Fatal(err)
		}
		// A second link of the gateway replays the same batch: its
		// insert waits for the first transaction.
		type staged struct {
			b   cloud.StagedBatch
			err error
		}
		again := make(chan staged, 1)
		go func() {
			b, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events)
			again <- staged{b, err}
		}()
		if res, err := first.Finish(ctx); err != nil || res.Cursor != 12 {
			t.Fatalf("first: got %+v, %v; want cursor 12", res, err)
		}
		second := <-again
		if second.err != nil {
			t.Fatal(second.err)
		}
		if res, err := second.b.Finish(ctx); err != nil || res.Cursor != 12 || len(res.DeadLetters) != 0 {
			t.Fatalf("replay: got %+v, %v; want cursor 12, nothing set aside", res, err)
		}
	})

	t.Run("OKStoredByAnotherSinceCursorRead", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		events := lifecycle(1, 2, "c")
		first, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events)
		if err != nil {
			t.Fatal(err)
		}
		// Another link's batch of the same events is staged as the
		// first commits: it reads the cursor (0, when the first has
		// not committed) and copies the events in, which waits on the
		// first's rows and then fails on them: it begins again and
		// finds them stored. (Staged after the commit, it reads the
		// cursor at 12 and has nothing to store.)
		type stagedOrErr struct {
			st  cloud.StagedBatch
			err error
		}
		again := make(chan stagedOrErr, 1)
		go func() {
			st, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events)
			again <- stagedOrErr{st, err}
		}()
		if res, err := first.Finish(ctx); err != nil || res.Cursor != 12 {
			t.Fatalf("first: got %+v, %v; want cursor 12", res, err)
		}
		got := <-again
		if got.err != nil {
			t.Fatalf("second: %v", got.err)
		}
		if res, err := got.st.Finish(ctx); err != nil || res.Cursor != 12 {
			t.Fatalf("second: got %+v, %v; want cursor 12", res, err)
		}
		if n := f.count(t, `SELECT count(*) FROM task_events WHERE gateway_id = $1`, gw.ID); n != 12 {
			t.Fatalf("got %d events stored, want 12", n)
		}
	})

	t.Run("OKAbort", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		events := lifecycle(1, 1, "x")
		b, err := f.ingest.Stage(ctx, gw.ID, "s1", "", events)
		if err != nil {
			t.Fatal(err)
		}
		b.Abort()
		b.Abort() // twice: nothing more
		if cursor, err := f.ingestEvents(ctx, gw.ID, "s1", events); err != nil || cursor != 6 {
			t.Fatalf("got cursor %d, %v; want 6: nothing was kept of the aborted batch", cursor, err)
		}
	})

	t.Run("ErrRevokedBeforeFinish", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		ctx := context.Background()
		b, err := f.ingest.Stage(ctx, gw.ID, "s1", "", lifecycle(1, 1, "y"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.pool.Exec(ctx, `UPDATE gateways SET revoked_at = now() WHERE gateway_id = $1`, gw.ID); err != nil {
			t.Fatal(err)
		}
		_, err = b.Finish(ctx)
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
}

// A receipt step is stored once: the first of a batch, and not again when
// a later batch carries it, whether its task has a row or not.
func TestIngestService_ReceiptStepOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	steps := func(t *testing.T, f *fixture, taskNo string) []string {
		t.Helper()
		var out []string
		for _, r := range f.receipts(t, "s1", taskNo) {
			out = append(out, strings.SplitN(r, ":", 3)[2])
		}
		return out
	}

	t.Run("Repeated", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		gw, _ := f.mustStore(t, "acme", "s1")
		// a: its state in the batch, then locked in the next. b: no row
		// and no state anywhere. c: a row from before, locked.
		first := []sync.Event{
			taskEvent(1, "order_c_station_hot", 1, "queued"),
		}
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", first); err != nil {
			t.Fatal(err)
		}
		batch := []sync.Event{
			taskEvent(2, "order_a_station_hot", 1, "queued"),
			receiptEvent(3, "order_a_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(4, "order_a_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(5, "order_b_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(6, "order_b_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(7, "order_c_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(8, "order_c_station_hot", 1, storeprint.ReceiptPrepared),
		}
		if _, err := f.ingestEvents(ctx, gw.ID, "s1", append(first, batch...)); err != nil {
			t.Fatal(err)
		}
		later := []sync.Event{
			receiptEvent(9, "order_a_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(10, "order_b_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(11, "order_c_station_hot", 1, storeprint.ReceiptPrepared),
			receiptEvent(12, "order_a_station_hot", 1, storeprint.ReceiptSubmitted),
		}
		if cursor, err := f.ingestEvents(ctx, gw.ID, "s1", later); err != nil || cursor != 12 {
			t.Fatalf("got cursor %d, %v; want 12", cursor, err)
		}
		for taskNo, want := range map[string]string{
			"order_a_station_hot": "[prepared@3 submitted@12]",
			"order_b_station_hot": "[prepared@5]",
			"order_c_station_hot": "[prepared@7]",
		} {
			if got := fmt.Sprint(steps(t, f, taskNo)); got != want {
				t.Errorf("%s: got steps %s, want %s", taskNo, got, want)
			}
		}
		task, err := f.tasks.FindTask(tenantCtx("acme"), "s1", "order_a_station_hot")
		if err != nil {
			t.Fatal(err)
		}
		if len(task.Receipts) != 2 {
			t.Fatalf("got receipts %+v, want prepared and submitted", task.Receipts)
		}
	})
}

// A printed receipt says how the printer confirmed it, as the gateway
// reported.
func TestIngestService_ReceiptConfirmedBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	const no = "order_cb_station_hot"
	events := []sync.Event{
		taskEvent(1, no, 2, "done"),
		receiptEvent(2, no, 1, storeprint.ReceiptPrepared),
		event(3, sync.KindReceipt, no, sync.ReceiptEvent{TaskNo: no, Attempt: 1, State: storeprint.ReceiptPrinted,
			PrinterID: "hot-1", ProcessID: "0001", ConfirmedBy: storeprint.ConfirmTransmitStatus, At: t0.Add(3 * time.Second)}),
	}
	if _, err := f.ingestEvents(ctx, gw.ID, "s1", events); err != nil {
		t.Fatal(err)
	}
	task, err := f.tasks.FindTask(tenantCtx("acme"), "s1", no)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range task.Receipts {
		got = append(got, string(r.State)+"/"+string(r.ConfirmedBy))
	}
	if want := "[prepared/ printed/transmit_status]"; fmt.Sprint(got) != want {
		t.Fatalf("got receipts %s, want %s", got, want)
	}
}
