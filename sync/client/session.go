package client

import (
	"context"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// Intervals of a session, on the client's clock.
const (
	// statusEvery: printers are reported when they change, and this often
	// anyway.
	statusEvery = 30 * time.Second
	// compactEvery: the outbox is compacted when the cloud acked
	// 4×BatchSize events past the last compaction, or on an ack this
	// long after it (and on every ping): each compaction is a durable
	// write on the store's disk.
	compactEvery = time.Second
)

// session is one connection to the cloud, in steps: handshake
// (handshake.go), the send window, acknowledgement and compaction
// (window.go), printer status (status.go) and the cloud's frames with its
// commands and states (read.go). One reader goroutine reads the cloud's
// frames; every write happens in the session's own goroutine, in loop.
type session struct {
	c    *Client
	conn *websocket.Conn

	acked       uint64        // highest seq the cloud acknowledged
	sent        uint64        // highest seq sent
	compacted   uint64        // the outbox is compacted up to here
	compactedAt time.Duration // when, on the clock's monotonic reading

	status statusReport

	acks     chan uint64 // from the reader: the cloud's ack cursors
	downAcks chan uint64 // from the reader: down cursors to ack; 0 after the final states frame
	readErr  chan error  // from the reader: why it stopped
}

// session runs one connection; welcomed reports whether the handshake
// completed.
func (c *Client) session(ctx context.Context) (welcomed bool, err error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	// Stop the session's blocking calls when ctx ends or the session does.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-sctx.Done()
		conn.Close()
	}()

	welcome, hello, err := c.handshake(ctx, conn)
	if err != nil {
		return false, err
	}
	c.setShared(welcome.CredentialShared)
	s := &session{c: c, conn: conn, status: statusReport{dirty: true},
		acks: make(chan uint64, 16), downAcks: make(chan uint64, 16), readErr: make(chan error, 1)}
	if err := s.start(ctx, welcome, hello); err != nil {
		return true, err
	}
	// Leave the outbox compacted up to what the cloud has.
	defer s.compactOnExit(context.WithoutCancel(ctx))
	s.startReader(sctx, welcome.Behind)
	changes, unsubscribe := c.Gateway.Subscribe()
	defer unsubscribe()
	return true, s.loop(ctx, changes)
}

// loop sends while the window has room and the printers' state when it
// changed, then waits for the reader, the gateway's changes or the ping.
func (s *session) loop(ctx context.Context, changes <-chan struct{}) error {
	c := s.c
	ping := c.Clock.NewTimer(c.PingEvery)
	defer func() { ping.Stop() }()
	for {
		if err := s.fill(ctx); err != nil {
			return err
		}
		if err := s.report(ctx); err != nil {
			return err
		}
		var err error
		select {
		case <-ctx.Done():
			s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "gateway stopping"), time.Now().Add(time.Second))
			return ctx.Err()
		case err = <-s.readErr:
		case cur := <-s.acks:
			err = s.ack(ctx, latest(cur, s.acks))
		case seq := <-s.downAcks:
			err = s.ackDown(seq)
		case <-changes:
			s.status.dirty = true
		case <-ping.C():
			err = s.ping(ctx)
			ping = c.Clock.NewTimer(c.PingEvery)
		}
		if err != nil {
			return err
		}
	}
}

// ackDown tells the cloud the commands up to seq are durable, or (seq 0)
// that the gateway learned the states it was sent.
func (s *session) ackDown(seq uint64) error {
	f := &sync.Frame{Type: sync.FrameDownAck, Seq: seq}
	if seq == 0 {
		f = &sync.Frame{Type: sync.FrameStates, Final: true}
	}
	return writeFrame(s.conn, f)
}
