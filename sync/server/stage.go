package server

import (
	"context"
	"time"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// A link's batches in two steps, with an Ingester that stages them: while
// batch N is applied and committed (finish, in a goroutine of its own),
// the link stages batch N+1, its events stored in its own transaction.
// N+1 finishes only once N has finished and its ack is sent: batches are
// applied, committed and acknowledged in order, each ack after its commit.
// A staged batch holds an ingest slot until it ends, so a link holds two
// at most; a link stages ahead only on a slot free at once, so that on a
// busy node it holds one and leaves the others to other links.

// stagedBatch is a batch staged on this link.
type stagedBatch struct {
	l     *link
	b     cloud.StagedBatch
	n     int   // events
	size  int64 // the read-ahead budget its frames hold
	start time.Time
}

// finishing is a staged batch being finished.
type finishing struct {
	done  chan struct{} // closed once res and err are set
	res   *cloud.IngestResult
	err   error
	n     int
	size  int64
	start time.Time
}

// stage takes an ingest slot and stores the events of a batch.
func (l *link) stage(ctx context.Context, in cloud.StagedIngester, events []sync.Event, size int64) (*stagedBatch, error) {
	s := l.s
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return l.staged(ctx, in, events, size)
}

// tryStage stages a batch if an ingest slot is free now; with none free
// it returns nil and no error.
func (l *link) tryStage(ctx context.Context, in cloud.StagedIngester, events []sync.Event, size int64) (*stagedBatch, error) {
	select {
	case l.s.slots <- struct{}{}:
	default:
		return nil, nil
	}
	return l.staged(ctx, in, events, size)
}

// staged stores the events of a batch on a slot taken.
func (l *link) staged(ctx context.Context, in cloud.StagedIngester, events []sync.Event, size int64) (*stagedBatch, error) {
	s := l.s
	start := time.Now()
	b, err := in.Stage(ctx, l.gw.ID, l.gw.StoreID, l.incarnation, events)
	if err != nil {
		<-s.slots
		return nil, l.ingestFailed(err)
	}
	return &stagedBatch{l: l, b: b, n: len(events), size: size, start: start}, nil
}

// abort gives a staged batch up and frees its slot and budget.
func (st *stagedBatch) abort() {
	st.b.Abort()
	<-st.l.s.slots
	st.l.release(st.size)
}

// finish finishes a staged batch in a goroutine of its own.
func (st *stagedBatch) finish(ctx context.Context) *finishing {
	f := &finishing{done: make(chan struct{}), n: st.n, size: st.size, start: st.start}
	go func() {
		defer close(f.done)
		f.res, f.err = st.b.Finish(ctx)
		<-st.l.s.slots
	}()
	return f
}

// acked answers a finished batch: its ack, or the link's end. It frees
// the batch's read-ahead budget.
func (l *link) acked(f *finishing) error {
	l.release(f.size)
	if f.err != nil {
		return l.ingestFailed(f.err)
	}
	return l.ackIngest(f.n, f.res, f.start)
}
