//go:build linux

package badger

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// An update that needs no sync of its own is answered once committed,
// while the sync before it is still held; readers see it only once it is
// synced, with the next update that needs a sync: one sync for both. On
// its own it is synced when the store is quiet (OnQuietSync), and Close
// syncs what is left.
func TestDB_WithoutSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	obs := &countingObserver{}
	d, err := Open(dir, Options{MinFreeBytes: 1, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.Close() }()
	// The syncs updates waited for (a quiet store syncs its witness on
	// its own too, when it will).
	syncs := func() (syncs, synced int) {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.waited, obs.synced
	}
	seen := func(no string) bool {
		err := d.View(ctx, func(tx gateway.ReadTx) error {
			_, err := tx.Task(no)
			return err
		})
		if err != nil && storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
			t.Fatal(err)
		}
		return err == nil
	}
	put := func(ctx context.Context, no string) error {
		return d.Update(ctx, func(tx gateway.Tx) error { return tx.PutTask(queuedTask(tx, no)) })
	}
	lazy := gateway.WithoutSync(ctx)

	// Held behind a sync: answered all the same, and not seen.
	release, syncing := make(chan struct{}), make(chan struct{}, 8)
	d.syncHook = func() error {
		syncing <- struct{}{}
		<-release
		return nil
	}
	first := make(chan error, 1)
	go func() { first <- put(ctx, "first") }()
	<-syncing
	if err := put(lazy, "lazy"); err != nil {
		t.Fatalf("an update without a sync of its own: %v", err)
	}
	if seen("lazy") {
		t.Fatal("a reader sees an update not synced yet")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	d.syncHook = nil
	if seen("lazy") {
		t.Fatal("a reader sees an update committed after the sync it saw")
	}
	n0, s0 := syncs()
	// The next update that needs a sync takes it along.
	if err := put(ctx, "durable"); err != nil {
		t.Fatal(err)
	}
	if !seen("lazy") || !seen("durable") {
		t.Fatal("after the next sync, a reader does not see both updates")
	}
	if n, s := syncs(); n-n0 != 1 || s-s0 != 1 {
		t.Fatalf("the next update: %d syncs making %d updates durable, want 1 sync for the one that waited", n-n0, s-s0)
	}

	// Alone, it is synced once the store is quiet, and readers are told.
	quiet := make(chan struct{}, 1)
	d.OnQuietSync(func() {
		select {
		case quiet <- struct{}{}:
		default:
		}
	})
	if err := put(lazy, "alone"); err != nil {
		t.Fatal(err)
	}
	<-quiet
	if !seen("alone") {
		t.Fatal("after the quiet sync, a reader does not see the update")
	}

	// Close syncs what is left, and it is there after a restart.
	if err := put(lazy, "closing"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err = Open(dir, Options{MinFreeBytes: 1}); err != nil {
		t.Fatal(err)
	}
	if d.Recovery() != nil {
		t.Fatalf("reopened as recovered: %+v", d.Recovery())
	}
	if !seen("closing") {
		t.Fatal("an update without a sync of its own is lost by Close")
	}
}
