package client

import (
	"context"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// snapshotBatch is the tasks of one snapshot frame.
const snapshotBatch = 500

// handshake sends hello and reads the cloud's welcome.
func (c *Client) handshake(ctx context.Context, conn *websocket.Conn) (*sync.Frame, sync.Hello, error) {
	h, err := c.Gateway.Hello(ctx)
	if err != nil {
		return nil, h, err
	}
	c.mu.Lock()
	c.state.Incarnation = h.Incarnation
	c.mu.Unlock()
	if err := writeFrame(conn, &sync.Frame{Type: sync.FrameHello, GatewayID: c.GatewayID, StoreID: c.StoreID, Version: c.Version,
		DownCursor: h.DownCursor, Incarnation: h.Incarnation, LastSeq: h.LastSeq, Compacted: h.Compacted, Resync: true}); err != nil {
		return nil, h, err
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	f, err := readFrame(conn)
	if err != nil {
		return nil, h, fmt.Errorf("handshake: %w", err)
	}
	if f.Type == sync.FrameError {
		return nil, h, fmt.Errorf("%w: %s", errRefused, f.Error)
	}
	if f.Type != sync.FrameWelcome {
		return nil, h, fmt.Errorf("handshake: got %s frame, want welcome", f.Type)
	}
	return f, h, nil
}

// sendSnapshot sends every task the gateway holds with its receipts, the
// last frame final with the seq the snapshot stands for. The cloud acks
// that seq once it applied them.
func (c *Client) sendSnapshot(ctx context.Context, conn *websocket.Conn, through uint64) error {
	c.Logger.Warn("the cloud lacks events this gateway already removed (its database restored?): sending every task it holds", "cursor", through)
	after, total := "", 0
	for {
		tasks, receipts, err := c.Gateway.Snapshot(ctx, after, snapshotBatch)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		total += len(tasks)
		f := &sync.Frame{Type: sync.FrameSnapshot, Tasks: tasks, Receipts: receipts}
		if len(tasks) < snapshotBatch {
			f.Final, f.Cursor = true, through
		}
		if err := writeFrame(conn, f); err != nil {
			return err
		}
		if f.Final {
			c.setResync(ResyncSnapshot, total)
			return nil
		}
		after = tasks[len(tasks)-1].TaskNo
	}
}
