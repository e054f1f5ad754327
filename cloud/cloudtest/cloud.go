package cloudtest

import (
	"time"

	"context"
	stdsync "sync"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

var (
	_ cloud.Ingester       = (*Cloud)(nil)
	_ cloud.CommandService = (*Cloud)(nil)
	_ cloud.GatewayService = (*Cloud)(nil)
)

// Cloud is the in-memory cloud. The zero value is not usable: call New.
type Cloud struct {
	mu       stdsync.Mutex
	changed  chan struct{} // closed and replaced after every change
	gate     chan struct{} // while not nil, Ingest waits for it to close
	gateways map[string]*gateway
	stores   map[string]*store
	subs     map[[2]string]map[chan struct{}]struct{}
}

// gateway is one gateway credential and what its links did.
type gateway struct {
	cloud.Gateway
	tokenHash    string
	linkID       string
	linkAddr     string
	linkHolder   cloud.LinkHolder
	replacements []time.Time // when a live link was replaced, with the addresses in replacedFrom
	replacedFrom map[string]bool
	links        int // links opened (Touch online)
	incarnations map[string]*incarnation
}

// incarnation is one data dir of a gateway: its events in the cloud's
// numbering (stored = sent + offset) and the cursor over them.
type incarnation struct {
	offset   uint64
	cursor   uint64                // stored numbering
	stored   map[uint64]sync.Event // by stored seq
	arrived  []sync.Event          // new events as they arrived, as sent
	replayed int                   // events received again
	learn    []string              // tasks it must learn, until it says it learned them
	learned  bool                  // it said so at least once
	snapshot int                   // tasks of the snapshots it sent
	rank     int64                 // higher: newer; its task states win
}

// store is a store's printers and downstream queue.
type store struct {
	printers  map[string]*cloud.Printer
	reports   int
	tasks     map[string]heldTask
	ranks     int64 // the highest rank an incarnation of its gateways took
	commands  []*cloud.Command
	downAcked uint64
}

// New returns an empty cloud.
func New() *Cloud {
	return &Cloud{
		changed:  make(chan struct{}),
		gateways: map[string]*gateway{},
		stores:   map[string]*store{},
		subs:     map[[2]string]map[chan struct{}]struct{}{},
	}
}

// Wait returns once cond holds, checking it after every change of the
// cloud, or ctx's error when ctx ends first. cond may call the cloud's
// methods.
func (c *Cloud) Wait(ctx context.Context, cond func() bool) error {
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// signal wakes Wait; c.mu is held.
func (c *Cloud) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Hold makes every Ingest wait, without storing anything, until release
// is called: the events a gateway sends meanwhile are in flight.
func (c *Cloud) Hold() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gate := make(chan struct{})
	c.gate = gate
	var once stdsync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.gate == gate {
				c.gate = nil
			}
			close(gate)
		})
	}
}

// Subscribe implements sync/server's Notifier: the channel receives a
// value after a command is queued for the store (cloud.DownstreamChannel
// with the store id) or the gateway is revoked (cloud.RevokedChannel with
// the gateway id).
func (c *Cloud) Subscribe(channel, payload string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	k := [2]string{channel, payload}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs[k] == nil {
		c.subs[k] = map[chan struct{}]struct{}{}
	}
	c.subs[k][ch] = struct{}{}
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.subs[k], ch)
	}
}

// notify delivers a notification; c.mu is held.
func (c *Cloud) notify(channel, payload string) {
	for ch := range c.subs[[2]string{channel, payload}] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (c *Cloud) store(storeID string) *store {
	s := c.stores[storeID]
	if s == nil {
		s = &store{printers: map[string]*cloud.Printer{}, tasks: map[string]heldTask{}}
		c.stores[storeID] = s
	}
	return s
}
