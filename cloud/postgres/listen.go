package postgres

import (
	"context"
	"fmt"
	"log/slog"
	stdsync "sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/internal/backoff"
	"github.com/storeprint/storeprint/internal/clock"
)

// Listener delivers PostgreSQL notifications (LISTEN/NOTIFY) to
// subscribers on this node. A notification is only a wake-up: subscribers
// read the tables, which are the truth, and poll as well, so a missed
// notification delays but never loses anything.
type Listener struct {
	db  *DB
	log *slog.Logger

	mu   stdsync.Mutex
	subs map[[2]string]map[chan struct{}]struct{}
}

// NewListener returns a listener for the cloud's channels on db.
func NewListener(db *DB, log *slog.Logger) *Listener {
	return &Listener{db: db, log: log, subs: map[[2]string]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a value after a notification
// on channel with the payload.
func (l *Listener) Subscribe(channel, payload string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	k := [2]string{channel, payload}
	l.mu.Lock()
	if l.subs[k] == nil {
		l.subs[k] = map[chan struct{}]struct{}{}
	}
	l.subs[k][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs[k], ch)
		if len(l.subs[k]) == 0 {
			delete(l.subs, k)
		}
		l.mu.Unlock()
	}
}

func (l *Listener) deliver(channel, payload string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs[[2]string{channel, payload}] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// wakeAll wakes every subscriber: after a reconnect, notifications sent
// while the listener was down are unknown.
func (l *Listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, set := range l.subs {
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// listenBackoff is the wait before the listener connects again: from
// 100 ms doubling to 5 s, with the jitter every backoff of the project
// has (internal/backoff).
var listenBackoff = backoff.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second}

// Run listens until ctx ends, reconnecting with backoff.
func (l *Listener) Run(ctx context.Context) error {
	for failures := 1; ctx.Err() == nil; failures++ {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			break
		}
		l.log.Warn("notification listener reconnecting", "err", err)
		clock.Sleep(ctx, clock.Real{}, listenBackoff.Wait(failures))
	}
	return nil
}

func (l *Listener) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connect: %w", interpret(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range []string{cloud.DownstreamChannel, cloud.RevokedChannel, cloud.ReplacedChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return fmt.Errorf("listen %s: %w", ch, interpret(err))
		}
	}
	l.wakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		l.deliver(n.Channel, n.Payload)
	}
}
