//go:build linux

package badger

import (
	"context"
	"errors"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// queuedTask is a new task numbered no, queued on printer p1.
func queuedTask(tx gateway.Tx, no string) *gateway.Task {
	return &gateway.Task{TaskNo: no, OrderID: no, Station: "hot", PrinterID: "p1",
		Status: storeprint.StatusQueued, Seq: tx.NextTaskSeq(), CreatedAt: time.Now()}
}

// countingObserver records what the store tells its observer.
type countingObserver struct {
	mu      stdsync.Mutex
	syncs   int
	waited  int // syncs that updates waited for
	synced  int // updates the syncs made durable
	updates int
	zero    int // timings of zero or less
}

func (o *countingObserver) Synced(d time.Duration, updates int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs++
	o.synced += updates
	if updates > 0 {
		o.waited++
	}
	if d <= 0 {
		o.zero++
	}
}

func (o *countingObserver) Updated(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.updates++
	if d <= 0 {
		o.zero++
	}
}

// The observer hears of every sync with the updates it made durable, and
// of every update answered, refused ones too; whether the store syncs
// Badger's log itself or Badger does.
func TestDB_Observer(t *testing.T) {
	t.Parallel()
	for _, badgerSync := range []bool{false, true} {
		name := "StoreSyncs"
		if badgerSync {
			name = "BadgerSyncs"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			obs := &countingObserver{}
			d, err := Open(t.TempDir(), Options{MinFreeBytes: 1, Observer: obs, badgerSync: badgerSync})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if got := d.wal != nil; got == badgerSync {
				t.Fatalf("the store syncs its log: %v, want %v", got, !badgerSync)
			}
			ctx := context.Background()
			const writers, each = 8, 25
			var wg stdsync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						errs <- d.Update(ctx, func(tx gateway.Tx) error {
							return tx.PutTask(queuedTask(tx, storeprint.TaskNo("obs", string(rune('a'+w))+string(rune('a'+i)))))
						})
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			// While a sync is held, an update committed and one refused
			// wait for the same next sync: only the first is made durable.
			release, syncing := make(chan struct{}), make(chan struct{}, 64)
			d.syncHook = func() error {
				syncing <- struct{}{}
				<-release
				return nil
			}
			put := func(no string, ran chan<- struct{}) <-chan error {
				done := make(chan error, 1)
				go func() {
					done <- d.Update(ctx, func(tx gateway.Tx) error {
						ran <- struct{}{}
						return tx.PutTask(queuedTask(tx, no))
					})
				}()
				return done
			}
			ran := make(chan struct{}, 4)
			held := put("held", ran)
			<-ran
			<-syncing // its sync is held
			committed := put("committed", ran)
			<-ran
			refused := errors.New("refused")
			refusal := make(chan error, 1)
			go func() {
				refusal <- d.Update(ctx, func(gateway.Tx) error { ran <- struct{}{}; return refused })
			}()
			<-ran
			// The writer takes one more only once it has handed both on.
			after := put("after", ran)
			<-ran
			close(release)
			for _, c := range []<-chan error{held, committed, after} {
				if err := <-c; err != nil {
					t.Fatal(err)
				}
			}
			if err := <-refusal; !errors.Is(err, refused) {
				t.Fatalf("a refused update: got %v", err)
			}
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if obs.synced != writers*each+3 {
				t.Errorf("the syncs made %d updates durable, want %d", obs.synced, writers*each+3)
			}
			if obs.syncs < 1 || obs.syncs > writers*each+3 {
				t.Errorf("%d syncs for %d updates", obs.syncs, writers*each+3)
			}
			if obs.updates != writers*each+4 {
				t.Errorf("%d updates answered, want %d (one refused)", obs.updates, writers*each+4)
			}
			if obs.zero > 0 {
				t.Errorf("%d timings of zero", obs.zero)
			}
		})
	}
}
