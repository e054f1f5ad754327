//go:build linux

package badger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// newestLog is the highest-numbered memtable log in dir.
func newestLog(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fid := -1
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%05d.mem", &n); err == nil && strings.HasSuffix(e.Name(), ".mem") && n > fid {
			fid = n
		}
	}
	return fid
}

func TestWALSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	put := func(d *DB, no string, note string) error {
		return d.Update(ctx, func(tx gateway.Tx) error {
			return tx.PutTask(&gateway.Task{TaskNo: no, OrderID: no, Station: "hot", PrinterID: "p1", Note: note,
				Status: storeprint.StatusQueued, Seq: tx.NextTaskSeq(), CreatedAt: time.Now()})
		})
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		d, err := Open(dir, Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.wal == nil {
			t.Fatal("got Badger's own sync, want the store's")
		}
		first := d.wal.fid
		// Enough to fill several memtables: the store follows Badger to
		// each new log.
		note := strings.Repeat("x", 16000)
		for i := range 1500 {
			if err := put(d, fmt.Sprintf("t%05d", i), note); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := d.wal.fid, newestLog(t, dir); got != want || got == first {
			t.Fatalf("syncing log %d (first %d), want the newest, %d", got, first, want)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		d, err = Open(dir, Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		err = d.View(ctx, func(tx gateway.ReadTx) error {
			n, err := tx.Count(storeprint.StatusQueued)
			if err == nil && n != 1500 {
				err = fmt.Errorf("got %d queued tasks after a restart, want 1500", n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ErrTooLarge", func(t *testing.T) {
		t.Parallel()
		d, err := Open(t.TempDir(), Options{MinFreeBytes: 1, MemtableSize: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		err = put(d, "big", strings.Repeat("x", 1<<20))
		if storeprint.ErrorCode(err) != storeprint.ETOOLARGE {
			t.Fatalf("a value of 1 MiB: got %v, want ETOOLARGE", err)
		}
		if err := put(d, "small", "x"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ValueLogInUse", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		d, err := Open(dir, Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if !ownWALSync(dir) {
			t.Fatal("an empty value log: got Badger's own sync, want the store's")
		}
		vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
		if len(vlogs) == 0 {
			t.Fatal("no value log")
		}
		f, err := os.OpenFile(vlogs[0], os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		// An entry after the header, as an earlier release wrote there.
		if _, err := f.WriteAt([]byte{1, 2, 3}, vlogHeaderSize+100); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if ownWALSync(dir) {
			t.Fatal("a value log that holds values: got the store's sync, want Badger's own")
		}
	})
}

// A commit's sync runs while the writer runs and commits the next
// batches: those see it, readers see nothing before it is synced, and
// nothing is answered before its own sync.
func TestWALSync_Pipelined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Open(t.TempDir(), Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	release := make(chan error)
	syncing := make(chan struct{}, 16)
	d.syncHook = func() error {
		syncing <- struct{}{}
		return <-release
	}
	first := make(chan error, 1)
	go func() { first <- d.Update(ctx, func(tx gateway.Tx) error { return tx.PutTask(queuedTask(tx, "a")) }) }()
	<-syncing // "a" is committed, its sync held

	ran := make(chan error, 1)
	second := make(chan error, 1)
	go func() {
		second <- d.Update(ctx, func(tx gateway.Tx) error {
			_, err := tx.Task("a")
			ran <- err
			return tx.PutTask(queuedTask(tx, "b"))
		})
	}()
	if err := <-ran; err != nil {
		t.Fatalf("the next batch does not see the commit being synced: %v", err)
	}
	// A reader does not wait for the sync, and does not see what it syncs.
	err = d.View(ctx, func(tx gateway.ReadTx) error {
		_, err := tx.Task("a")
		return err
	})
	if storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
		t.Fatalf("a reader while the commit is synced: got %v, want it not found", err)
	}
	// The writer goes on committing while "a" syncs: an update after "b"
	// sees it, and a reader sees neither.
	sawB := make(chan error, 1)
	third := make(chan error, 1)
	go func() {
		third <- d.Update(ctx, func(tx gateway.Tx) error {
			_, err := tx.Task("b")
			sawB <- err
			return nil
		})
	}()
	select {
	case err := <-sawB:
		if err != nil {
			t.Fatalf("the batch after \"b\" does not see it: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the writer waits for the sync of \"a\" before it commits \"b\"")
	}
	// An update refused for what it read of a commit not yet synced: its
	// answer waits for the sync too.
	refused := make(chan error, 1)
	go func() {
		refused <- d.Update(ctx, func(tx gateway.Tx) error {
			if _, err := tx.Task("a"); err == nil {
				return storeprint.Errorf(storeprint.ECONFLICT, "a is there")
			}
			return nil
		})
	}()
	// Its refusal queued after the commits of "b" and of the update after
	// it: then one sync covers all three.
	for len(d.syncQ) < 3 {
		runtime.Gosched()
	}
	err = d.View(ctx, func(tx gateway.ReadTx) error {
		_, err := tx.Task("b")
		return err
	})
	if storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
		t.Fatalf("a reader while \"b\" waits for its sync: got %v, want it not found", err)
	}
	select {
	case err := <-first:
		t.Fatalf("answered before its sync: %v", err)
	default:
	}
	select {
	case err := <-refused:
		t.Fatalf("refused before the sync of what it read: %v", err)
	default:
	}
	release <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-syncing // "b", committed while "a" was synced, in one sync with what came after it
	err = d.View(ctx, func(tx gateway.ReadTx) error {
		if _, err := tx.Task("a"); err != nil {
			return err
		}
		if _, err := tx.Task("b"); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
			return fmt.Errorf("\"b\" before its sync: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a reader once \"a\" is synced: %v", err)
	}
	select {
	case err := <-second:
		t.Fatalf("answered before its sync: %v", err)
	default:
	}
	release <- fmt.Errorf("injected")
	if err := <-second; storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
		t.Fatalf("a failed sync: got %v, want EUNAVAILABLE", err)
	}
	if err := <-third; storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
		t.Fatalf("a failed sync, the update committed after \"b\": got %v, want EUNAVAILABLE", err)
	}
	if err := <-refused; storeprint.ErrorCode(err) != storeprint.ECONFLICT && storeprint.ErrorCode(err) != storeprint.EUNAVAILABLE {
		t.Fatalf("the refused update: got %v, want its own error or EUNAVAILABLE", err)
	}
	if d.Health() == nil {
		t.Fatal("a failed sync leaves the store healthy")
	}
	close(release) // later syncs go through
	err = d.View(ctx, func(tx gateway.ReadTx) error {
		_, err := tx.Task("a")
		return err
	})
	if err != nil {
		t.Fatalf("once synced, a reader does not see it: %v", err)
	}
}
