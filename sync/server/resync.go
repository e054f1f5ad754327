package server

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// statesPerFrame bounds the task states of one states frame.
const statesPerFrame = 500

// teach sends a gateway that is behind the cloud what it lost, before any
// other command: the cloud's state of the tasks it may hold in an older
// state, the cloud orders it acknowledged and lost, then a final states
// frame. The gateway prints nothing it held until that frame.
func (l *link) teach(w *cloud.LinkWelcome) error {
	for states := w.States; len(states) > 0; {
		n := min(len(states), statesPerFrame)
		if err := l.write(&sync.Frame{Type: sync.FrameStates, Tasks: states[:n]}); err != nil {
			return err
		}
		states = states[n:]
	}
	for cmds := w.Redeliver; len(cmds) > 0; {
		n := min(len(cmds), cloud.DefaultDownstreamLimit)
		f, err := downFrame(cmds[:n])
		if err != nil {
			return err
		}
		if n == len(cmds) {
			f.Cursor = w.DownAfter // the store's cursor may move past what is not sent again
		}
		if err := l.write(f); err != nil {
			return err
		}
		cmds = cmds[n:]
	}
	if len(w.Redeliver) == 0 && w.DownAfter > 0 {
		if err := l.write(&sync.Frame{Type: sync.FrameDown, Cursor: w.DownAfter}); err != nil {
			return err
		}
	}
	l.log.Info("gateway behind the cloud: sent what it lost", "states", len(w.States), "orders", len(w.Redeliver))
	return l.write(&sync.Frame{Type: sync.FrameStates, Final: true})
}

// ingest stores a batch of events and acks it, with its dead letters.
func (l *link) ingest(ctx context.Context, events []sync.Event) error {
	s := l.s
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	start := time.Now()
	res, err := s.Ingester.Ingest(ctx, l.gw.ID, l.gw.StoreID, l.incarnation, events)
	<-s.slots
	if err != nil {
		return l.ingestFailed(err)
	}
	return l.ackIngest(len(events), res, start)
}

// ingestFailed ends the link on a batch the cloud did not store.
func (l *link) ingestFailed(err error) error {
	if storeprint.ErrorCode(err) == storeprint.EINTERNAL {
		l.log.Error("ingest", "err", err)
		return l.fail("the cloud could not store the events; the link will retry")
	}
	return l.fail("events refused: " + storeprint.ErrorMessage(err))
}

// ackIngest acknowledges a stored batch.
func (l *link) ackIngest(n int, res *cloud.IngestResult, start time.Time) error {
	took := time.Since(start)
	l.log.Debug("ingested", "events", n, "cursor", res.Cursor, "took", took)
	if o := l.s.Observer; o != nil {
		o.Ingested(n, len(res.DeadLetters), took)
	}
	for _, d := range res.DeadLetters {
		l.log.Warn("event set aside: the cloud could not apply it", "seq", d.Seq, "reason", d.Reason)
	}
	return l.write(&sync.Frame{Type: sync.FrameAck, Cursor: res.Cursor, DeadLetters: res.DeadLetters})
}

// takeSnapshot applies one snapshot frame; the final one is acked with the
// cursor it moved to.
func (l *link) takeSnapshot(ctx context.Context, f *sync.Frame) error {
	l.snapshot += len(f.Tasks)
	cursor, err := l.s.Ingester.Snapshot(ctx, l.gw.ID, l.gw.StoreID, l.incarnation, &cloud.SnapshotPart{
		Tasks: f.Tasks, Receipts: f.Receipts, Final: f.Final, Through: f.Cursor, Total: l.snapshot,
	})
	if err != nil {
		if storeprint.ErrorCode(err) == storeprint.EINTERNAL {
			l.log.Error("snapshot", "err", err)
			return l.fail("the cloud could not store the snapshot; the link will retry")
		}
		return l.fail("snapshot refused: " + storeprint.ErrorMessage(err))
	}
	if !f.Final {
		return nil
	}
	l.log.Info("store resynchronised from the gateway's snapshot", "tasks", l.snapshot, "cursor", cursor)
	l.snapshot = 0
	return l.write(&sync.Frame{Type: sync.FrameAck, Cursor: cursor})
}
