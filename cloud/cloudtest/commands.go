package cloudtest

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// Submit implements cloud.CommandService for any caller: the request is
// validated and queued, a command_id seen before answers the queued
// command (ECONFLICT with another kind or target). The cloud's checks of
// the task's state are not made.
func (c *Cloud) Submit(ctx context.Context, storeID string, r *cloud.CommandRequest) (*cloud.Command, bool, error) {
	if err := r.Validate(); err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.store(storeID)
	for _, prev := range s.commands {
		if r.ID != "" && prev.ID == r.ID {
			if prev.Kind != r.Kind || prev.TaskNo != r.TaskNo || prev.PrinterID != r.PrinterID || prev.DeviceID != r.DeviceID {
				return nil, false, storeprint.Errorf(storeprint.ECONFLICT, "command_id %q was already used for another command", r.ID)
			}
			cp := *prev
			return &cp, false, nil
		}
	}
	cmd := c.queue(storeID, cloud.Command{ID: r.ID, Kind: r.Kind, TaskNo: r.TaskNo, PrinterID: r.PrinterID,
		DeviceID: r.DeviceID, Reason: r.Reason, Operator: r.Operator, CreatedBy: "cloudtest"})
	return cmd, true, nil
}

// Queue queues any command for the store (a cloud order, say) as the
// next of its downstream queue, and returns it with its seq.
func (c *Cloud) Queue(storeID string, cmd cloud.Command) *cloud.Command {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue(storeID, cmd)
}

// queue appends to the store's downstream queue; c.mu is held.
func (c *Cloud) queue(storeID string, cmd cloud.Command) *cloud.Command {
	s := c.store(storeID)
	cmd.StoreID, cmd.Seq = storeID, uint64(len(s.commands))+1
	if cmd.ID == "" {
		cmd.ID = cloud.RandomID(16)
	}
	if cmd.CreatedAt.IsZero() {
		cmd.CreatedAt = time.Now()
	}
	s.commands = append(s.commands, &cmd)
	c.notify(cloud.DownstreamChannel, storeID)
	c.signal()
	cp := cmd
	return &cp
}

// Downstream implements cloud.CommandService.
func (c *Cloud) Downstream(ctx context.Context, storeID string, after uint64, limit int) ([]*cloud.Command, error) {
	if limit <= 0 || limit > cloud.MaxDownstreamLimit {
		limit = cloud.DefaultDownstreamLimit
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*cloud.Command
	for _, cmd := range c.store(storeID).commands {
		if cmd.Seq > after && len(out) < limit {
			cp := *cmd
			out = append(out, &cp)
		}
	}
	return out, nil
}

// AckDownstream implements cloud.CommandService; the acked seq never
// moves back.
func (c *Cloud) AckDownstream(ctx context.Context, storeID string, seq uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.store(storeID)
	s.downAcked = max(s.downAcked, seq)
	c.signal()
	return nil
}

// DownAcked returns the highest command seq the store's gateway made
// durable.
func (c *Cloud) DownAcked(storeID string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.store(storeID).downAcked
}
