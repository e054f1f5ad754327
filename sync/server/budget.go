package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gorilla/websocket"
)

// maxHelloBytes bounds the hello frame, read before the link is welcomed
// and before any read budget applies.
const maxHelloBytes = 64 << 10

// frameChunk is the most of a frame a link reads at a time: each part
// takes its share of the node's read budget before it is read.
const frameChunk = 64 << 10

// errOverBudget closes a link whose frame grew past what the node's read
// budget had free.
var errOverBudget = errors.New("frame over the node's free read budget")

// reserve is the part of the budget a frame growing past its first part
// must leave free: the other links' frames still come in while one link
// sends a large one.
func (s *Server) reserve() int64 { return s.ReadAheadBytes / 8 }

// readBounded reads the gateway's next message within the node's read
// budget and returns it with the budget it holds (readAheadSize of its
// length). A frame's first part waits for room, as a link that holds
// nothing may; every further part is taken only if the budget has it
// free, an eighth of the budget left over, at once. When it has not, a
// link whose own frames, read and waiting to be handled, hold budget
// waits for them to be handled (they are, whatever other links do);
// otherwise the frame grew past what the budget has free and closes its
// link (websocket close 1009), and only its link: however many links send
// however large frames, the node holds at most its budget of them, read
// or being read, and no two links wait on each other's partial frames.
func (l *link) readBounded(ctx context.Context) (typ int, b []byte, size int64, err error) {
	s := l.s
	typ, r, err := l.conn.NextReader()
	if err != nil {
		return 0, nil, 0, err
	}
	held := min(s.firstPart(), s.ReadAheadBytes)
	if !s.readAhead.TryAcquire(held) {
		stop := l.keepAlive()
		err := s.readAhead.Acquire(ctx, held)
		stop()
		if err != nil {
			return 0, nil, 0, err
		}
	}
	// Waiting for room was the node's time, not the gateway's.
	l.conn.SetReadDeadline(time.Now().Add(s.PingWait))
	defer func() {
		if err != nil {
			s.readAhead.Release(held)
		}
	}()
	// The first part is read into a part's room: most frames (status,
	// acks of commands, a few events) end within it, and a frame of a
	// few bytes holds no more than its part. A frame that goes on is
	// given room for the frame as held at once: a frame of the usual size
	// is copied once, its first part, not grown part by part.
	b = make([]byte, 0, frameChunk)
	for {
		part := frameChunk
		if need := readAheadSize(len(b) + part); need > held {
			if err := l.growBy(ctx, need-held, len(b)); err != nil {
				return 0, nil, 0, err
			}
			s.readAhead.Release(s.reserve())
			held = need
		}
		if len(b) > 0 && cap(b)-len(b) < part {
			b = slices.Grow(b, max(part, int(held/2)-len(b)))
		}
		b = slices.Grow(b, part)
		n, rerr := io.ReadFull(r, b[len(b):len(b)+part])
		b = b[:len(b)+n]
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return 0, nil, 0, rerr
		}
	}
	size = readAheadSize(len(b))
	s.readAhead.Release(held - size)
	s.noteFrame(len(b))
	return typ, b, size, nil
}

// growBy takes n more of the budget (and the reserve, given back at once)
// for a frame of which read bytes were read: at once, or once the link's
// own frames waiting to be handled are, or not at all (the link closes).
func (l *link) growBy(ctx context.Context, n int64, read int) error {
	s := l.s
	var stop func()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for !s.readAhead.TryAcquire(n + s.reserve()) {
		if l.queued.Load() <= 0 {
			l.tooLarge(read)
			return fmt.Errorf("%w: %d bytes read and more coming", errOverBudget, read)
		}
		if stop == nil {
			stop = l.keepAlive()
		}
		select {
		case <-l.drained:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.conn.SetReadDeadline(time.Now().Add(s.PingWait))
	}
	return nil
}

// keepAlive sends the gateway an unsolicited pong every PingWait/3 until
// stopped, while the link's reader waits for room in the node's budget:
// the gateway's pings wait unread behind its frame meanwhile, and a
// gateway that hears nothing takes its link for dead and opens another,
// which waits its turn again. (A pong may be sent unsolicited, as a
// heartbeat; the gateway's read deadline moves on with every pong.)
func (l *link) keepAlive() (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(max(l.s.PingWait/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = l.conn.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// usualFrame is the size a frame's first part is made for before the
// node read any: a frame of the sync client's default 2,000 events.
const usualFrame = 640 << 10

// firstPart is the budget a frame waits for before it is read: room for a
// frame as large as the ones the node reads (frameHint) and one part
// more, within the reserve. Gateways send frames of about one size, so
// with many links reading at once each waits for room for a whole frame,
// in turn, instead of taking a part and finding no room for the rest,
// which would close its link.
func (s *Server) firstPart() int64 {
	hint := max(s.frameHint.Load(), usualFrame)
	parts := (hint + frameChunk - 1) / frameChunk
	return max(readAheadSize(frameChunk), min(readAheadSize(int(parts+1)*frameChunk), s.reserve()))
}

// noteFrame moves frameHint with the length of a frame read: up to a
// larger one at once, down towards smaller ones slowly, so that a link's
// small frames (its printers' status) leave room for the events frames.
// Links race on it; a lost update only delays the hint.
func (s *Server) noteFrame(n int) {
	h, m := s.frameHint.Load(), int64(n)
	if m < h {
		m = h - (h-m)/64
	}
	s.frameHint.Store(m)
}

// tooLarge tells the gateway why its link closes.
func (l *link) tooLarge(read int) {
	l.log.Warn("sync frame over the node's free read budget: closing its link", "bytes_read", read,
		"read_budget", l.s.ReadAheadBytes)
	msg := websocket.FormatCloseMessage(websocket.CloseMessageTooBig, "frame over the cloud's free read budget")
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_ = l.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}

// release gives back budget held by this link's frames.
func (l *link) release(n int64) {
	l.s.readAhead.Release(n)
	l.queued.Add(-n)
	select {
	case l.drained <- struct{}{}:
	default:
	}
}
