package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	stdsync "sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/internal/backoff"
	"github.com/storeprint/storeprint/internal/clock"
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
	Dialer    *websocket.Dialer // NewDialer() when nil
	// Clock tells the time and makes the link's timers: the reconnect
	// backoff, pings, the status report and compaction intervals
	// (clock.Real{} when nil). Socket deadlines are the network's and
	// always run on the system clock.
	Clock clock.Clock
	// Cluster, when set, is the store's cluster as this node sees it:
	// each status report carries it (nil for a gateway that runs alone).
	// The report is read when the gateway signals a change and at least
	// every statusEvery.
	Cluster func() *sync.ClusterStatus

	BatchSize  int           // events per frame; default DefaultBatchSize
	Window     int           // events sent and not yet acknowledged; default 10000
	PingEvery  time.Duration // default 2s
	MinBackoff time.Duration // default 500ms; doubles with every failure, ±20% jitter (internal/backoff)
	MaxBackoff time.Duration // default 15s
	// ReplacedWait is the wait, ±20%, after the cloud closed the link
	// because a newer link of the same credential replaced it (another
	// box holds the credential): long enough for two boxes not to take
	// turns too fast, short enough for the one left to come back soon
	// once the other stops. Default 5s.
	ReplacedWait time.Duration
	// OnChange, when set, is called after the state shown to people
	// changes (up or down, the cursor, a resync), outside the client's
	// lock: the LAN page's live updates follow the link with it.
	OnChange func()

	mu    stdsync.Mutex
	state State
}

// State is the link as shown to people.
type State struct {
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
	Cursor    uint64    `json:"cursor"` // highest seq the cloud acknowledged
	LastError string    `json:"last_error,omitempty"`
	// CredentialShared: the cloud said the gateway's credential is in
	// use on more than one box (its links replaced each other from two
	// addresses), at the last welcome or closing of the link.
	CredentialShared bool   `json:"credential_shared"`
	Incarnation      string `json:"incarnation"`
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
	defer c.changed()
	defer c.mu.Unlock()
	changed := c.state.Connected != connected
	if changed {
		c.state.Since = c.Clock.Now()
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

func (c *Client) setShared(shared bool) {
	c.mu.Lock()
	changed := c.state.CredentialShared != shared
	c.state.CredentialShared = shared
	c.mu.Unlock()
	if changed {
		if shared {
			c.Logger.Error("the cloud says this gateway's credential is in use on more than one box: " +
				"its links replace each other; keep the credential on one box")
		}
		c.changed()
	}
}

// closedBy is the error of the cloud's error frame: errReplaced when a
// newer link of the credential replaced this one, errRefused otherwise.
func (c *Client) closedBy(f *sync.Frame) error {
	if f.CredentialShared {
		c.setShared(true)
	}
	if f.Code == sync.ErrorReplaced {
		return fmt.Errorf("%w: %s", errReplaced, f.Error)
	}
	return fmt.Errorf("%w: %s", errRefused, f.Error)
}

func (c *Client) setCursor(cur uint64) {
	c.mu.Lock()
	moved := c.state.Cursor != cur
	c.state.Cursor = cur
	c.mu.Unlock()
	if moved {
		c.changed()
	}
}

func (c *Client) setResync(kind string, tasks int) {
	c.mu.Lock()
	c.state.Resync = &Resync{Kind: kind, Tasks: tasks, At: c.Clock.Now()}
	c.mu.Unlock()
	c.changed()
}

func (c *Client) changed() {
	if c.OnChange != nil {
		c.OnChange()
	}
}

func (c *Client) defaults() {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Window == 0 {
		c.Window = 10000
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
	if c.ReplacedWait == 0 {
		c.ReplacedWait = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Dialer == nil {
		c.Dialer = NewDialer()
	}
}

// DefaultBatchSize is the events a frame carries by default, about 600
// KiB of a gateway's events: the cloud stores a frame's events in one
// transaction, whose round trips, cursor and task locks it pays once
// for them all, and a gateway back with a backlog is cleared in few.
const DefaultBatchSize = 2000

// WriteBufferSize is the most of a message the default dialer's links
// write at once, in one websocket frame and one write to the socket: an
// events frame of the default 2,000 events goes out in a few writes, not
// in one for every 4 KiB (the websocket package's default), each of
// which the cloud reads with a header of its own.
const WriteBufferSize = 64 << 10

// writeBuffers holds the default dialer's write buffers between messages:
// a link holds one only while it writes.
var writeBuffers stdsync.Pool

// NewDialer returns the dialer a Client uses when its Dialer is nil: a
// 10 s handshake, the environment's proxy, and writes of up to
// WriteBufferSize.
func NewDialer() *websocket.Dialer {
	return &websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment,
		WriteBufferSize: WriteBufferSize, WriteBufferPool: &writeBuffers}
}

// Run keeps the link up until ctx ends: connect, replay, and on any break
// wait with jittered exponential backoff and connect again.
func (c *Client) Run(ctx context.Context) error {
	c.defaults()
	b := backoff.Backoff{Min: c.MinBackoff, Max: c.MaxBackoff}
	failures := 0
	for ctx.Err() == nil {
		welcomed, err := c.session(ctx)
		if ctx.Err() != nil {
			break
		}
		c.setState(false, err)
		if errors.Is(err, errReplaced) {
			failures = 0
			clock.Sleep(ctx, c.Clock, backoff.Jitter(c.ReplacedWait, backoff.DefaultJitter))
			continue
		}
		if welcomed && !errors.Is(err, errRefused) {
			// The cloud was reachable and the link broke: a network blip
			// or a restarting node. Come back quickly.
			failures = 0
		}
		failures++
		clock.Sleep(ctx, c.Clock, b.Wait(failures))
	}
	c.setState(false, nil)
	return nil
}

// errRefused is a refusal from the cloud (bad credentials, revoked).
var errRefused = errors.New("refused by the cloud")

// errReplaced is the cloud closing the link for a newer link of the same
// credential.
var errReplaced = errors.New("closed by the cloud")
