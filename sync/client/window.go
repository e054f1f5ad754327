package client

import (
	"context"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// fill sends outbox events in seq order while the window (events sent and
// not acknowledged) has room.
func (s *session) fill(ctx context.Context) error {
	c := s.c
	for s.sent-s.acked < uint64(c.Window) {
		n := min(c.BatchSize, c.Window-int(s.sent-s.acked))
		events, err := c.Gateway.OutboxEvents(ctx, s.sent, n)
		if err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		if err := writeFrame(s.conn, &sync.Frame{Type: sync.FrameEvents, Events: events}); err != nil {
			return err
		}
		s.sent = events[len(events)-1].Seq
	}
	return nil
}

// latest returns the highest of cur and every ack waiting on acks: only
// the highest matters.
func latest(cur uint64, acks <-chan uint64) uint64 {
	for {
		select {
		case c := <-acks:
			cur = max(cur, c)
		default:
			return cur
		}
	}
}

// ack moves the window on to the cloud's cursor and compacts the outbox
// now and then, not on every ack.
func (s *session) ack(ctx context.Context, cur uint64) error {
	if cur > s.acked {
		s.acked = cur
		s.c.setCursor(s.acked)
	}
	s.sent = max(s.sent, s.acked)
	if s.acked-s.compacted >= uint64(s.c.BatchSize)*4 || s.c.Clock.Mono()-s.compactedAt > compactEvery {
		return s.compact(ctx)
	}
	return nil
}

// compact removes the outbox's events up to what the cloud acknowledged.
func (s *session) compact(ctx context.Context) error {
	if err := s.c.Gateway.OutboxAcked(ctx, s.acked); err != nil {
		return err
	}
	s.compacted, s.compactedAt = s.acked, s.c.Clock.Mono()
	return nil
}

// compactOnExit compacts what the cloud acknowledged since the last
// compaction, as the session ends.
func (s *session) compactOnExit(ctx context.Context) {
	if s.acked > s.compacted {
		if err := s.c.Gateway.OutboxAcked(ctx, s.acked); err != nil {
			s.c.Logger.Warn("compact the outbox", "err", err)
		}
	}
}

// ping keeps the link alive, compacts what is acknowledged, and has the
// printers reported again when the last report is old (or the cluster
// read again, on a cluster).
func (s *session) ping(ctx context.Context) error {
	// A cluster's members change with no word from the gateway: read
	// them at each ping (a report goes out only when they changed).
	s.status.dirty = s.status.due(s.c.Clock.Mono()) || s.c.Cluster != nil
	if s.acked > s.compacted {
		if err := s.compact(ctx); err != nil {
			return err
		}
	}
	// A ping waits behind the events already in the socket: while the
	// cloud holds back reading (its read-ahead budget is spent) it may
	// take as long as an events frame may, and the link is not dead for
	// that. A cloud that is gone shows in the reader's deadline.
	if err := s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}
