package badger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
)

func setup(t testing.TB) (*badger.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

// reopen closes db and opens its dir again, until the test ends.
func reopen(t testing.TB, db *badger.DB, dir string) *badger.DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	return db2
}

func newTask(tx gateway.Tx, no, printer string) *gateway.Task {
	return &gateway.Task{TaskNo: no, OrderID: no, Station: "hot", PrinterID: printer,
		Status: storeprint.StatusQueued, Seq: tx.NextTaskSeq(), CreatedAt: time.Now()}
}

func TestDB_Update(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		db, dir := setup(t)
		err := db.Update(ctx, func(tx gateway.Tx) error {
			return tx.PutTask(newTask(tx, "a", "p1"))
		})
		if err != nil {
			t.Fatal(err)
		}
		// Durable: visible after reopening.
		db2 := reopen(t, db, dir)
		err = db2.View(ctx, func(tx gateway.ReadTx) error {
			got, err := tx.Task("a")
			if err != nil {
				return err
			}
			if got.Version != 1 || got.PrinterID != "p1" {
				t.Errorf("got version %d printer %q, want 1 p1", got.Version, got.PrinterID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Counters survive a restart: the next seq follows the last.
		err = db2.Update(ctx, func(tx gateway.Tx) error {
			if got := tx.NextTaskSeq(); got != 2 {
				t.Errorf("got task seq %d after reopen, want 2", got)
			}
			return errors.New("discard")
		})
		if err == nil {
			t.Fatal("want the fn's error")
		}
	})

	t.Run("ErrLeavesNothing", func(t *testing.T) {
		db, _ := setup(t)
		boom := errors.New("boom")
		err := db.Update(ctx, func(tx gateway.Tx) error {
			if err := tx.PutTask(newTask(tx, "a", "p1")); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("got %v, want boom", err)
		}
		err = db.View(ctx, func(tx gateway.ReadTx) error {
			if _, err := tx.Task("a"); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
				t.Errorf("got %v, want not found", err)
			}
			ev, err := tx.Outbox(0, 0)
			if len(ev) != 0 {
				t.Errorf("got %d outbox events, want 0", len(ev))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// The failed update's sequence numbers are not used up: no gaps.
		_ = db.Update(ctx, func(tx gateway.Tx) error { return tx.PutTask(newTask(tx, "b", "p1")) })
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			ev, _ := tx.Outbox(0, 0)
			if len(ev) != 1 || ev[0].Seq != 1 {
				t.Errorf("got outbox %v, want one event with seq 1", ev)
			}
			b, _ := tx.Task("b")
			if b.Seq != 1 {
				t.Errorf("got task seq %d, want 1", b.Seq)
			}
			return nil
		})
	})

	// Readers share views across commits while writers go on: every
	// answered update is seen by the next reader of its writer, and a
	// reader's view does not change under it.
	t.Run("ViewsWhileCommitting", func(t *testing.T) {
		db, _ := setup(t)
		const writers, each = 8, 40
		var wg stdsync.WaitGroup
		stop := make(chan struct{})
		errs := make(chan error, writers+2)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					no := fmt.Sprintf("w%d-%03d", w, i)
					if err := db.Update(ctx, func(tx gateway.Tx) error { return tx.PutTask(newTask(tx, no, "p1")) }); err != nil {
						errs <- err
						return
					}
					err := db.View(ctx, func(tx gateway.ReadTx) error {
						_, err := tx.Task(no)
						return err
					})
					if err != nil {
						errs <- fmt.Errorf("%s answered, then not seen: %w", no, err)
						return
					}
				}
			}()
		}
		var readers stdsync.WaitGroup
		for range 2 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					err := db.View(ctx, func(tx gateway.ReadTx) error {
						first, err := tx.Open("p1", 0)
						if err != nil {
							return err
						}
						again, err := tx.Open("p1", 0)
						if err != nil {
							return err
						}
						if len(first) != len(again) {
							return fmt.Errorf("a view changed under its reader: %d open tasks, then %d", len(first), len(again))
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})

	t.Run("ViewAfterClose", func(t *testing.T) {
		db, _ := setup(t)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		err := db.View(ctx, func(tx gateway.ReadTx) error {
			_, err := tx.Open("p1", 0)
			return err
		})
		if storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
			t.Fatalf("a reader after Close: got %v, want EUNAVAILABLE", err)
		}
	})

	t.Run("ConcurrentGroupCommit", func(t *testing.T) {
		db, _ := setup(t)
		const n = 200
		var wg stdsync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- db.Update(ctx, func(tx gateway.Tx) error {
					no := fmt.Sprintf("t%03d", i)
					if i%10 == 0 {
						return errors.New("rejected")
					}
					return tx.PutTask(newTask(tx, no, "p1"))
				})
			}()
		}
		wg.Wait()
		close(errs)
		failed := 0
		for err := range errs {
			if err != nil {
				failed++
			}
		}
		if failed != n/10 {
			t.Fatalf("got %d failed updates, want %d", failed, n/10)
		}
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			open, err := tx.Open("p1", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(open) != n-n/10 {
				t.Fatalf("got %d open tasks, want %d", len(open), n-n/10)
			}
			for i := 1; i < len(open); i++ {
				if open[i].Seq != open[i-1].Seq+1 {
					t.Fatalf("queue seqs not contiguous: %d then %d", open[i-1].Seq, open[i].Seq)
				}
			}
			ev, _ := tx.Outbox(0, 0)
			for i, e := range ev {
				if e.Seq != uint64(i+1) {
					t.Fatalf("outbox seq %d at %d, want contiguous", e.Seq, i)
				}
			}
			return nil
		})
	})
}

func TestTx_Indexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := setup(t)
	err := db.Update(ctx, func(tx gateway.Tx) error {
		for _, no := range []string{"a", "b", "c"} {
			if err := tx.PutTask(newTask(tx, no, "p1")); err != nil {
				return err
			}
		}
		// Reads in the same update see its own writes, in key order.
		h, err := tx.Head("p1")
		if err != nil || h == nil || h.TaskNo != "a" {
			t.Errorf("got head %v %v, want a", h, err)
		}
		a, _ := tx.Task("a")
		a.Status = storeprint.StatusDone
		if err := tx.PutTask(a); err != nil {
			return err
		}
		h, _ = tx.Head("p1")
		if h == nil || h.TaskNo != "b" {
			t.Errorf("got head %v after a is done, want b", h)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx gateway.Tx) error {
		b, _ := tx.Task("b")
		b.PrinterID = "p2"
		return tx.PutTask(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(ctx, func(tx gateway.ReadTx) error {
		open, _ := tx.Open("p1", 0)
		if len(open) != 1 || open[0].TaskNo != "c" {
			t.Errorf("got p1 queue %v, want [c]", open)
		}
		open, _ = tx.Open("p2", 0)
		if len(open) != 1 || open[0].TaskNo != "b" {
			t.Errorf("got p2 queue %v, want [b]", open)
		}
		done, _ := tx.ByStatus(storeprint.StatusDone, 0)
		if len(done) != 1 || done[0].TaskNo != "a" || done[0].Version != 2 {
			t.Errorf("got done %v, want [a] at version 2", done)
		}
		n, _ := tx.Count(storeprint.StatusQueued)
		if n != 2 {
			t.Errorf("got %d queued, want 2", n)
		}
		return nil
	})
}

func TestDB_DiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Ask for more free space than any disk has: the store does not start.
	_, err := badger.Open(dir, badger.Options{MinFreeBytes: 1 << 62})
	var low *badger.DiskLowError
	if !errors.As(err, &low) {
		t.Fatalf("got %v, want a DiskLowError", err)
	}
	if !strings.Contains(err.Error(), "disk low") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %q, want it to say disk low and name the data dir", err)
	}
}

func TestTx_TasksAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := setup(t)
	err := db.Update(ctx, func(tx gateway.Tx) error {
		for _, no := range []string{"c", "a", "b", "b_copy_1"} {
			if err := tx.PutTask(newTask(tx, no, "p1")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	after := ""
	for {
		var page []*gateway.Task
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			var err error
			page, err = tx.TasksAfter(after, 2)
			return err
		})
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			got = append(got, p.TaskNo)
		}
		after = page[len(page)-1].TaskNo
	}
	if want := "a b b_copy_1 c"; fmt.Sprint(got) != "["+want+"]" {
		t.Fatalf("got %v, want [%s]", got, want)
	}
}

func TestTx_Count(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, dir := setup(t)
	err := db.Update(ctx, func(tx gateway.Tx) error {
		for _, no := range []string{"a", "b", "c"} {
			if err := tx.PutTask(newTask(tx, no, "p1")); err != nil {
				return err
			}
		}
		a, _ := tx.Task("a")
		a.Status = storeprint.StatusDone
		if err := tx.PutTask(a); err != nil {
			return err
		}
		a.LastError = "same status again"
		return tx.PutTask(a)
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(db *badger.DB) {
		t.Helper()
		_ = db.View(ctx, func(tx gateway.ReadTx) error {
			for s, want := range map[storeprint.Status]int{storeprint.StatusQueued: 2, storeprint.StatusDone: 1, storeprint.StatusFailed: 0} {
				if got, _ := tx.Count(s); got != want {
					t.Errorf("count %s: got %d, want %d", s, got, want)
				}
			}
			return nil
		})
	}
	check(db)
	db.Close()
	db2, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	check(db2)
}

// A task or order not there is ENOTFOUND, its id quoted as %q quotes it.
func TestTx_NotFound(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	err := db.View(context.Background(), func(tx gateway.ReadTx) error {
		for _, id := range []string{"order_A-1_station_hot", `a"b\c`, "宫保", "tab\there"} {
			_, err := tx.Task(id)
			if want := fmt.Sprintf("task %q not found", id); storeprint.ErrorCode(err) != storeprint.ENOTFOUND || storeprint.ErrorMessage(err) != want {
				t.Errorf("task %q: got %v, want ENOTFOUND %s", id, err, want)
			}
			_, err = tx.Order(id)
			if want := fmt.Sprintf("order %q not found", id); storeprint.ErrorCode(err) != storeprint.ENOTFOUND || storeprint.ErrorMessage(err) != want {
				t.Errorf("order %q: got %v, want ENOTFOUND %s", id, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
