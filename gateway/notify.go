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
}

func (c *changes) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
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

// notifyingStore signals subscribers after every successful update.
type notifyingStore struct {
	Store
	c *changes
}

func (s notifyingStore) Update(ctx context.Context, fn func(Tx) error) error {
	err := s.Store.Update(ctx, fn)
	if err == nil {
		s.c.signal()
	}
	return err
}
