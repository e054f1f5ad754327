package client

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// dial opens the websocket with the gateway's credentials in headers
// (never in the URL); a refused credential is errRefused.
func (c *Client) dial(ctx context.Context) (*websocket.Conn, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+c.Token)
	h.Set(sync.HeaderGateway, c.GatewayID)
	conn, resp, err := c.Dialer.DialContext(ctx, c.URL, h)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return nil, fmt.Errorf("%w: %s", errRefused, resp.Status)
		}
		return nil, fmt.Errorf("connect: %w", err)
	}
	conn.SetReadLimit(sync.MaxFrameBytes)
	return conn, nil
}

// handshake sends hello and reads the cloud's welcome.
func (c *Client) handshake(ctx context.Context, conn *websocket.Conn) (*sync.Frame, sync.Hello, error) {
	h, err := c.Gateway.Hello(ctx)
	if err != nil {
		return nil, h, err
	}
	c.mu.Lock()
	c.state.Incarnation = h.Incarnation
	c.mu.Unlock()
	hello := &sync.Frame{Type: sync.FrameHello, GatewayID: c.GatewayID, StoreID: c.StoreID, Version: c.Version,
		DownCursor: h.DownCursor, Incarnation: h.Incarnation, LastSeq: h.LastSeq, Compacted: h.Compacted, Resync: true}
	if c.Cluster != nil {
		// The node and its term: the cloud tells a takeover from two
		// boxes sharing the credential.
		hello.Cluster = c.Cluster()
	}
	if err := writeFrame(conn, hello); err != nil {
		return nil, h, err
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	f, err := readFrame(conn)
	if err != nil {
		return nil, h, fmt.Errorf("handshake: %w", err)
	}
	if f.Type == sync.FrameError {
		return nil, h, c.closedBy(f)
	}
	if f.Type != sync.FrameWelcome {
		return nil, h, fmt.Errorf("handshake: got %s frame, want welcome", f.Type)
	}
	return f, h, nil
}

// start resumes the outbox at the welcome's cursor, sends a snapshot to a
// cloud behind what the outbox compacted, and, unless the gateway is
// behind the cloud, lets it print what it held.
func (s *session) start(ctx context.Context, welcome *sync.Frame, hello sync.Hello) error {
	c := s.c
	s.acked, s.sent = welcome.Cursor, welcome.Cursor
	c.setCursor(s.acked)
	if err := c.Gateway.OutboxAcked(ctx, s.acked); err != nil {
		return err
	}
	if welcome.Resync && s.acked < hello.Compacted {
		// The cloud lacks events the outbox no longer has.
		if err := c.sendSnapshot(ctx, s.conn, hello.Compacted); err != nil {
			return err
		}
		s.sent = hello.Compacted
	}
	if !welcome.Behind {
		c.Gateway.Learned()
	}
	c.setState(true, nil)
	s.compacted, s.compactedAt = s.acked, c.Clock.Mono()
	return nil
}

// startReader starts the goroutine that reads the cloud's frames, with a
// read deadline that every frame and pong moves on.
func (s *session) startReader(ctx context.Context, learning bool) {
	conn := s.conn
	deadline := 3*s.c.PingEvery + 10*time.Second
	conn.SetReadDeadline(time.Now().Add(deadline))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(deadline)) })
	r := &reader{c: s.c, conn: conn, deadline: deadline, acks: s.acks, downAcks: s.downAcks, learning: learning}
	go func() { s.readErr <- r.run(ctx) }()
}
