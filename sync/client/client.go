package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	stdsync "sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// Gateway is what the link needs of the store's gateway.
type Gateway interface {
	OutboxEvents(ctx context.Context, after uint64, limit int) ([]sync.Event, error)
	OutboxAcked(ctx context.Context, cursor uint64) error
	// Hello says what the store's data is: its incarnation, newest and
	// compacted outbox seqs, and down cursor.
	Hello(ctx context.Context) (sync.Hello, error)
	// ApplyDown applies commands durably and returns the down cursor,
	// moved to at least through (0: no such move).
	ApplyDown(ctx context.Context, cmds []sync.Command, through uint64) (cursor uint64, err error)
	// ApplyStates applies the cloud's newer state of the tasks the
	// gateway holds and returns the states of those it does not hold.
	ApplyStates(ctx context.Context, states []sync.TaskEvent) (rest []sync.TaskEvent, err error)
	// Learned says the link came up and the gateway knows what the cloud
	// knows: it may print what it held from before.
	Learned()
	// Snapshot returns up to limit tasks in task_no order after the
	// given one, with their receipts.
	Snapshot(ctx context.Context, after string, limit int) ([]sync.TaskEvent, []sync.ReceiptEvent, error)
	PrinterStatuses(ctx context.Context) ([]sync.PrinterStatus, error)
	// Subscribe signals after changes (new outbox events, printer states).
	Subscribe() (<-chan struct{}, func())
}

// Client keeps the link to the cloud up.
type Client struct {
	URL       string // ws:// or wss:// address of the cloud's /v1/sync
	GatewayID string
	Token     string
	StoreID   string
	Version   string
	Gateway   Gateway
	Logger    *slog.Logger
	Dialer    *websocket.Dialer

	BatchSize  int           // events per frame; default 500
	Window     int           // events sent and not yet acknowledged; default 5000
	PingEvery  time.Duration // default 2s
	MinBackoff time.Duration // default 500ms
	MaxBackoff time.Duration // default 15s

	mu    stdsync.Mutex
	state State
}

// State is the link as shown to people.
type State struct {
	Connected   bool      `json:"connected"`
	Since       time.Time `json:"since"`
	Cursor      uint64    `json:"cursor"` // highest seq the cloud acknowledged
	LastError   string    `json:"last_error,omitempty"`
	Incarnation string    `json:"incarnation"`
	// Resync is the last time since start that one side was found behind
	// the other and caught up.
	Resync *Resync `json:"resync,omitempty"`
}

// Resync is one catching up of a side found behind the other.
type Resync struct {
	Kind  string    `json:"kind"`  // ResyncSnapshot or ResyncLearned
	Tasks int       `json:"tasks"` // tasks sent, or states learned
	At    time.Time `json:"at"`
}

// Resync kinds.
const (
	ResyncSnapshot = "snapshot" // the cloud was behind: the gateway sent every task it holds
	ResyncLearned  = "learned"  // the gateway was behind: it learned the cloud's newer states
)

// State returns the link's state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

func (c *Client) setState(connected bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := c.state.Connected != connected
	if changed {
		c.state.Since = time.Now()
	}
	c.state.Connected = connected
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	// Log only when the state changes, not on every failed retry.
	if changed && connected {
		c.Logger.Info("sync link up", "url", c.URL, "cursor", c.state.Cursor)
	} else if changed || (msg != "" && msg != c.state.LastError) {
		c.Logger.Warn("sync link down", "url", c.URL, "err", msg)
	}
	if err != nil {
		c.state.LastError = msg
	}
}

func (c *Client) setCursor(cur uint64) {
	c.mu.Lock()
	c.state.Cursor = cur
	c.mu.Unlock()
}

func (c *Client) setResync(kind string, tasks int) {
	c.mu.Lock()
	c.state.Resync = &Resync{Kind: kind, Tasks: tasks, At: time.Now()}
	c.mu.Unlock()
}

func (c *Client) defaults() {
	if c.BatchSize == 0 {
		c.BatchSize = 500
	}
	if c.Window == 0 {
		c.Window = 5000
	}
	c.Window = min(c.Window, sync.MaxWindow)
	if c.PingEvery == 0 {
		c.PingEvery = 2 * time.Second
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = 500 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 15 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Dialer == nil {
		c.Dialer = &websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment}
	}
}

// Run keeps the link up until ctx ends: connect, replay, and on any break
// wait with jittered exponential backoff and connect again.
func (c *Client) Run(ctx context.Context) error {
	c.defaults()
	backoff := c.MinBackoff
	for ctx.Err() == nil {
		welcomed, err := c.session(ctx)
		if ctx.Err() != nil {
			break
		}
		c.setState(false, err)
		if welcomed && !errors.Is(err, errRefused) {
			// The cloud was reachable and the link broke: a network blip
			// or a restarting node. Come back quickly.
			backoff = c.MinBackoff
		}
		t := time.NewTimer(jitter(backoff))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(backoff*2, c.MaxBackoff)
	}
	c.setState(false, nil)
	return nil
}

func jitter(d time.Duration) time.Duration {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)/2+1))
	if err != nil {
		return d
	}
	return d/2 + time.Duration(n.Int64()) + d/4
}

// errRefused is a refusal from the cloud (bad credentials, revoked).
var errRefused = errors.New("refused by the cloud")

// session runs one connection; welcomed reports whether the handshake
// completed.
func (c *Client) session(ctx context.Context) (welcomed bool, err error) {
	err = c.connect(ctx, &welcomed)
	return welcomed, err
}

func (c *Client) connect(ctx context.Context, welcomed *bool) error {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+c.Token)
	h.Set(sync.HeaderGateway, c.GatewayID)
	conn, resp, err := c.Dialer.DialContext(ctx, c.URL, h)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return fmt.Errorf("%w: %s", errRefused, resp.Status)
		}
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	conn.SetReadLimit(sync.MaxFrameBytes)
	// Stop the session's blocking calls when ctx ends.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-sctx.Done()
		conn.Close()
	}()

	welcome, hello, err := c.handshake(ctx, conn)
	if err != nil {
		return err
	}
	*welcomed = true
	acked, sent := welcome.Cursor, welcome.Cursor
	c.setCursor(acked)
	if err := c.Gateway.OutboxAcked(ctx, acked); err != nil {
		return err
	}
	if welcome.Resync && acked < hello.Compacted {
		// The cloud lacks events the outbox no longer has.
		if err := c.sendSnapshot(ctx, conn, hello.Compacted); err != nil {
			return err
		}
		sent = hello.Compacted
	}
	if !welcome.Behind {
		c.Gateway.Learned()
	}
	c.setState(true, nil)

	// One reader goroutine; every write happens in this goroutine.
	acks := make(chan uint64, 16)
	downAcks := make(chan uint64, 16) // 0 after the final states frame: tell the cloud it learned them
	readErr := make(chan error, 1)
	deadline := 3*c.PingEvery + 10*time.Second
	conn.SetReadDeadline(time.Now().Add(deadline))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(deadline)) })
	go func() { readErr <- c.read(sctx, conn, deadline, acks, downAcks, welcome.Behind) }()

	changes, unsubscribe := c.Gateway.Subscribe()
	defer unsubscribe()
	ping := time.NewTicker(c.PingEvery)
	defer ping.Stop()
	compacted, compactedAt := acked, time.Now()
	defer func() {
		// Leave the outbox compacted up to what the cloud has.
		if acked > compacted {
			c.Gateway.OutboxAcked(context.WithoutCancel(ctx), acked)
		}
	}()
	statusDirty := true
	var lastStatus string
	var lastStatusAt time.Time
	for {
		// Send while the window has room.
		for sent-acked < uint64(c.Window) {
			n := min(c.BatchSize, c.Window-int(sent-acked))
			events, err := c.Gateway.OutboxEvents(ctx, sent, n)
			if err != nil {
				return err
			}
			if len(events) == 0 {
				break
			}
			if err := writeFrame(conn, &sync.Frame{Type: sync.FrameEvents, Events: events}); err != nil {
				return err
			}
			sent = events[len(events)-1].Seq
		}
		if statusDirty {
			// Report printers when they change, and every 30 s anyway.
			ps, err := c.Gateway.PrinterStatuses(ctx)
			if err != nil {
				return err
			}
			if key := statusKey(ps); key != lastStatus || time.Since(lastStatusAt) > 30*time.Second {
				if err := writeFrame(conn, &sync.Frame{Type: sync.FrameStatus, Printers: ps}); err != nil {
					return err
				}
				lastStatus, lastStatusAt = key, time.Now()
			}
			statusDirty = false
		}
		select {
		case <-ctx.Done():
			conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "gateway stopping"), time.Now().Add(time.Second))
			return ctx.Err()
		case err := <-readErr:
			return err
		case cur := <-acks:
			// Take every ack that is waiting; only the highest matters.
			for more := true; more; {
				select {
				case c2 := <-acks:
					cur = max(cur, c2)
				default:
					more = false
				}
			}
			if cur > acked {
				acked = cur
				c.setCursor(acked)
			}
			if sent < acked {
				sent = acked
			}
			// Compact the outbox now and then, not on every ack: each
			// compaction is a durable write on the store's disk.
			if acked-compacted >= uint64(c.BatchSize)*4 || time.Since(compactedAt) > time.Second {
				if err := c.Gateway.OutboxAcked(ctx, acked); err != nil {
					return err
				}
				compacted, compactedAt = acked, time.Now()
			}
		case seq := <-downAcks:
			f := &sync.Frame{Type: sync.FrameDownAck, Seq: seq}
			if seq == 0 {
				f = &sync.Frame{Type: sync.FrameStates, Final: true}
			}
			if err := writeFrame(conn, f); err != nil {
				return err
			}
		case <-changes:
			statusDirty = true
		case <-ping.C:
			statusDirty = time.Since(lastStatusAt) > 30*time.Second
			if acked > compacted {
				if err := c.Gateway.OutboxAcked(ctx, acked); err != nil {
					return err
				}
				compacted, compactedAt = acked, time.Now()
			}
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(5*time.Second)); err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		}
	}
}

// read handles the cloud's frames: acks go to the writer, commands and
// states are applied here (durably) and the down cursor goes to the
// writer. A gateway behind the cloud learns states until the final states
// frame; states of tasks it does not hold yet (orders sent again) wait for
// the commands that bring them.
func (c *Client) read(ctx context.Context, conn *websocket.Conn, deadline time.Duration, acks, downAcks chan<- uint64, learning bool) error {
	var pending []sync.TaskEvent
	learned := 0
	for {
		f, err := readFrame(conn)
		if err != nil {
			return err
		}
		conn.SetReadDeadline(time.Now().Add(deadline))
		switch f.Type {
		case sync.FrameAck:
			for _, d := range f.DeadLetters {
				c.Logger.Warn("the cloud set an event aside: it could not apply it", "seq", d.Seq, "reason", d.Reason)
			}
			if err := send(ctx, acks, f.Cursor); err != nil {
				return err
			}
		case sync.FrameDown:
			cur, err := c.Gateway.ApplyDown(ctx, f.Commands, f.Cursor)
			if err != nil {
				return fmt.Errorf("apply commands: %w", err)
			}
			if pending, err = c.Gateway.ApplyStates(ctx, pending); err != nil {
				return fmt.Errorf("apply the cloud's states: %w", err)
			}
			if err := send(ctx, downAcks, cur); err != nil {
				return err
			}
		case sync.FrameStates:
			if !learning {
				return fmt.Errorf("unexpected states frame")
			}
			learned += len(f.Tasks)
			if pending, err = c.Gateway.ApplyStates(ctx, append(pending, f.Tasks...)); err != nil {
				return fmt.Errorf("apply the cloud's states: %w", err)
			}
			if f.Final {
				learning = false
				c.setResync(ResyncLearned, learned)
				c.Gateway.Learned()
				if err := send(ctx, downAcks, 0); err != nil {
					return err
				}
			}
		case sync.FrameError:
			return fmt.Errorf("%w: %s", errRefused, f.Error)
		default:
			return fmt.Errorf("unexpected %s frame", f.Type)
		}
	}
}

func send(ctx context.Context, ch chan<- uint64, v uint64) error {
	select {
	case ch <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// statusKey is what a status report says, without its timestamps.
func statusKey(ps []sync.PrinterStatus) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s=%s/%t/%s;", p.ID, p.Status, p.Failover, strings.Join(p.Stations, ","))
	}
	return b.String()
}

func writeFrame(conn *websocket.Conn, f *sync.Frame) error {
	b, err := sync.Encode(f)
	if err != nil {
		return err
	}
	conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
		return fmt.Errorf("send %s: %w", f.Type, err)
	}
	return nil
}

func readFrame(conn *websocket.Conn) (*sync.Frame, error) {
	typ, b, err := conn.ReadMessage()
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if typ != websocket.TextMessage {
		return nil, fmt.Errorf("read: unexpected message type %d", typ)
	}
	return sync.Decode(b)
}
