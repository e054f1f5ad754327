package gateway

import (
	"context"
	stdsync "sync"
)

// changes fans out "something changed" to subscribers (the LAN page's live
// updates). A subscriber sees at least one signal after every change.
type changes struct {
	mu   stdsync.Mutex
	subs map[chan struct{}]struct{}
	gen  uint64 // grows with every change
}

func (c *changes) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
}

// Subscribe returns a channel that receives a value after changes to tasks,
// printers or failovers, and a function that ends the subscription.
func (g *Gateway) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	g.changes.mu.Lock()
	if g.changes.subs == nil {
		g.changes.subs = map[chan struct{}]struct{}{}
	}
	g.changes.subs[ch] = struct{}{}
	g.changes.mu.Unlock()
	return ch, func() {
		g.changes.mu.Lock()
		delete(g.changes.subs, ch)
		g.changes.mu.Unlock()
	}
}

// Generation grows by one with every change subscribers are told of: a
// snapshot read at one generation is current until it moves.
func (g *Gateway) Generation() uint64 {
	g.changes.mu.Lock()
	defer g.changes.mu.Unlock()
	return g.changes.gen
}

// notifyingStore signals subscribers after every successful update and
// after a write that failed for storage trouble.
type notifyingStore struct {
	Store
	c *changes
}

func (s notifyingStore) Update(ctx context.Context, fn func(Tx) error) error {
	err := s.Store.Update(ctx, fn)
	if err == nil || ErrorCode(err) == EUNAVAILABLE {
		s.c.signal() // a change, or storage trouble people must see
	}
	return err
}
