package badger_test

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
)

// A store whose clock the test moves.
func setupClock(t testing.TB, now *time.Time) *badger.DB {
	t.Helper()
	db, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// accept stores an order's task as the gateway does, in a status.
func accept(t testing.TB, db *badger.DB, now time.Time, id string, status storeprint.Status, attempts int) string {
	t.Helper()
	no := storeprint.TaskNo(id, "hot")
	err := db.Update(context.Background(), func(tx gateway.Tx) error {
		task := &gateway.Task{TaskNo: no, OrderID: id, Station: "hot", PrinterID: "p1", FirstPrinter: "p1",
			Status: storeprint.StatusQueued, Seq: tx.NextTaskSeq(), CreatedAt: now}
		if err := tx.PutTask(task); err != nil {
			return err
		}
		if err := tx.PutOrder(&gateway.OrderRecord{OrderID: id, Digest: "d-" + id, TaskNos: []string{no}, Printers: []string{"p1"}, CreatedAt: task.CreatedAt}); err != nil {
			return err
		}
		for a := 1; a <= attempts; a++ {
			task.Status, task.Attempt = storeprint.StatusPrinting, a
			if err := tx.PutTask(task); err != nil {
				return err
			}
			if err := tx.PutReceipt(&gateway.Receipt{TaskNo: no, Attempt: a, State: storeprint.ReceiptPrinted}); err != nil {
				return err
			}
		}
		if status != storeprint.StatusQueued {
			task.Status = status
			if err := tx.PutTask(task); err != nil {
				return err
			}
		}
		return tx.AppendAudit(&gateway.AuditEntry{Action: storeprint.ActionResolve, Operator: "x", TaskNo: no})
	})
	if err != nil {
		t.Fatal(err)
	}
	return no
}

func purgeAll(t testing.TB, db *badger.DB, before time.Time, acked uint64) (tasks, audit int) {
	t.Helper()
	for _, st := range []storeprint.Status{storeprint.StatusDone, storeprint.StatusCancelled} {
		after := uint64(0)
		for {
			var r gateway.PurgeResult
			err := db.Update(context.Background(), func(tx gateway.Tx) error {
				var err error
				r, err = tx.PurgeTasks(st, before, acked, after, 2)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			tasks += r.Purged
			after = r.Last
			if r.Done {
				break
			}
		}
	}
	for {
		var r gateway.PurgeResult
		if err := db.Update(context.Background(), func(tx gateway.Tx) error {
			var err error
			r, err = tx.PurgeAudit(before, acked, 2)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		audit += r.Purged
		if r.Done {
			return tasks, audit
		}
	}
}

func TestTx_PurgeTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		db := setupClock(t, &now)
		var old []string
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			old = append(old, accept(t, db, now, id, storeprint.StatusDone, 2))
		}
		cancelled := accept(t, db, now, "f", storeprint.StatusCancelled, 0)
		open := accept(t, db, now, "g", storeprint.StatusQueued, 0)
		held := accept(t, db, now, "h", storeprint.StatusAttention, 1)
		now = now.Add(10 * 24 * time.Hour)
		recent := accept(t, db, now, "i", storeprint.StatusDone, 1)

		tasks, audit := purgeAll(t, db, now.Add(-24*time.Hour), ^uint64(0))
		if tasks != 6 || audit != 8 {
			t.Fatalf("purged %d tasks and %d audit entries, want 6 and 8", tasks, audit)
		}
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			for _, no := range append(old, cancelled) {
				if _, err := tx.Task(no); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
					t.Errorf("task %s: got %v, want deleted", no, err)
				}
				if rs, _ := tx.Receipts(no); len(rs) != 0 {
					t.Errorf("task %s: %d receipts left", no, len(rs))
				}
			}
			for _, no := range []string{open, held, recent} {
				if _, err := tx.Task(no); err != nil {
					t.Errorf("task %s: %v, want kept", no, err)
				}
			}
			// The order's compact record answers a replay.
			o, err := tx.Order("a")
			if err != nil || o.Digest != "d-a" || len(o.TaskNos) != 1 || o.TaskNos[0] != old[0] || o.Printers[0] != "p1" {
				t.Errorf("order record of a purged order: got %+v %v", o, err)
			}
			if n, _ := tx.Count(storeprint.StatusDone); n != 1 {
				t.Errorf("got %d done, want 1", n)
			}
			return nil
		})

		// Past order_ids_retention the record goes too.
		var r gateway.PurgeResult
		if err := db.Update(ctx, func(tx gateway.Tx) (err error) { r, err = tx.PurgeOrders(now, 100); return err }); err != nil {
			t.Fatal(err)
		}
		if r.Purged != 6 {
			t.Fatalf("purged %d order records, want 6", r.Purged)
		}
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			if _, err := tx.Order("a"); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
				t.Errorf("order a: got %v, want gone", err)
			}
			if _, err := tx.Order("g"); err != nil {
				t.Errorf("order g (its task is open): %v, want kept", err)
			}
			return nil
		})
	})

	t.Run("NotAcked", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		db := setupClock(t, &now)
		a := accept(t, db, now, "a", storeprint.StatusDone, 1)
		var seq uint64
		_ = db.View(ctx, func(tx gateway.ReadTx) (err error) { seq, err = tx.LastEventSeq(); return err })
		b := accept(t, db, now, "b", storeprint.StatusDone, 1)
		now = now.Add(48 * time.Hour)
		// The cloud stored everything up to a's events, none of b's.
		if tasks, _ := purgeAll(t, db, now.Add(-time.Hour), seq); tasks != 1 {
			t.Fatalf("purged %d, want 1", tasks)
		}
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			if _, err := tx.Task(a); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
				t.Errorf("acked task: got %v, want deleted", err)
			}
			if _, err := tx.Task(b); err != nil {
				t.Errorf("task the cloud has not stored: %v, want kept", err)
			}
			return nil
		})
	})
}
