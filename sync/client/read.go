package client

import (
	"context"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// reader handles the cloud's frames: acks go to the session's writer,
// commands and states are applied here (durably) and the down cursor goes
// to the writer. A gateway behind the cloud learns states until the final
// states frame; states of tasks it does not hold yet (orders sent again)
// wait for the commands that bring them.
type reader struct {
	c        *Client
	conn     *websocket.Conn
	deadline time.Duration // the read deadline after each frame
	acks     chan<- uint64
	downAcks chan<- uint64 // 0 after the final states frame: tell the cloud it learned them

	learning bool             // states frames come until the final one
	pending  []sync.TaskEvent // states of tasks the gateway does not hold yet
	learned  int              // states learned so far
}

// run reads frames until the link breaks or ctx ends.
func (r *reader) run(ctx context.Context) error {
	for {
		f, err := readFrame(r.conn)
		if err != nil {
			return err
		}
		r.conn.SetReadDeadline(time.Now().Add(r.deadline))
		if err := r.handle(ctx, f); err != nil {
			return err
		}
	}
}

func (r *reader) handle(ctx context.Context, f *sync.Frame) error {
	switch f.Type {
	case sync.FrameAck:
		for _, d := range f.DeadLetters {
			r.c.Logger.Warn("the cloud set an event aside: it could not apply it", "seq", d.Seq, "reason", d.Reason)
		}
		return send(ctx, r.acks, f.Cursor)
	case sync.FrameDown:
		return r.down(ctx, f)
	case sync.FrameStates:
		return r.states(ctx, f)
	case sync.FrameError:
		return r.c.closedBy(f)
	default:
		return fmt.Errorf("unexpected %s frame", f.Type)
	}
}

// down applies the cloud's commands durably, then the states waiting for
// them, and has the writer ack the down cursor.
func (r *reader) down(ctx context.Context, f *sync.Frame) error {
	cur, err := r.c.Gateway.ApplyDown(ctx, f.Commands, f.Cursor)
	if err != nil {
		return fmt.Errorf("apply commands: %w", err)
	}
	if r.pending, err = r.c.Gateway.ApplyStates(ctx, r.pending); err != nil {
		return fmt.Errorf("apply the cloud's states: %w", err)
	}
	return send(ctx, r.downAcks, cur)
}

// states applies the cloud's newer task states to a gateway behind it;
// after the final frame the gateway may print what it held, and the
// writer tells the cloud it learned them.
func (r *reader) states(ctx context.Context, f *sync.Frame) error {
	if !r.learning {
		return fmt.Errorf("unexpected states frame")
	}
	r.learned += len(f.Tasks)
	var err error
	if r.pending, err = r.c.Gateway.ApplyStates(ctx, append(r.pending, f.Tasks...)); err != nil {
		return fmt.Errorf("apply the cloud's states: %w", err)
	}
	if !f.Final {
		return nil
	}
	r.learning = false
	r.c.setResync(ResyncLearned, r.learned)
	r.c.Gateway.Learned()
	return send(ctx, r.downAcks, 0)
}

func send(ctx context.Context, ch chan<- uint64, v uint64) error {
	select {
	case ch <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
