package client

import (
	"context"
	"fmt"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// snapshotBatch is the tasks of one snapshot frame.
const snapshotBatch = 500

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
