package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// The way down a link: the store's commands sent to its gateway, and the
// link cut when the gateway is revoked or its credential's link replaced
// elsewhere.

// watch sends the store's commands after the gateway's cursor and cuts the
// link as soon as its gateway is revoked, woken by notifications or the
// fallback poll.
func (l *link) watch(ctx context.Context, after uint64) error {
	s := l.s
	var commands, revoked, replaced <-chan struct{}
	if s.Notifier != nil {
		ch, unsubscribe := s.Notifier.Subscribe(cloud.DownstreamChannel, l.gw.StoreID)
		defer unsubscribe()
		commands = ch
		ch2, unsubscribe2 := s.Notifier.Subscribe(cloud.RevokedChannel, l.gw.ID)
		defer unsubscribe2()
		revoked = ch2
		ch3, unsubscribe3 := s.Notifier.Subscribe(cloud.ReplacedChannel, l.id)
		defer unsubscribe3()
		replaced = ch3
	}
	poll := time.NewTicker(s.Poll)
	defer poll.Stop()
	// Once subscribed, look once: a revocation between the handshake's
	// check and the subscription notified nobody.
	checkRevoked := true
	for {
		if checkRevoked {
			gone, err := s.Gateways.IsRevoked(ctx, l.gw.StoreID, l.gw.ID)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				l.log.Warn("check revocation", "err", err)
			} else if gone {
				l.log.Warn("gateway revoked: closing its link")
				return l.fail("gateway revoked")
			}
			if by, err := l.replacedElsewhere(ctx); ctx.Err() != nil {
				return ctx.Err()
			} else if err != nil {
				l.log.Warn("check the credential's live link", "err", err)
			} else if by != nil {
				return l.closeReplaced(*by)
			}
		}
		var err error
		if after, err = l.sendCommands(ctx, after); err != nil {
			return err
		}
		checkRevoked = false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-commands:
		case <-revoked:
			checkRevoked = true
		case <-replaced:
			checkRevoked = true
		case by := <-l.replaced:
			return l.closeReplaced(by)
		case <-poll.C:
			checkRevoked = true
		}
	}
}

// replacedElsewhere returns the link that replaced this one, on another
// node, or nil while this one is its credential's live link.
func (l *link) replacedElsewhere(ctx context.Context) (*replacedBy, error) {
	cur, err := l.s.Gateways.CurrentLink(ctx, l.gw.StoreID, l.gw.ID)
	if err != nil || cur.LinkID == "" || cur.LinkID == l.id {
		return nil, err
	}
	return &replacedBy{addr: cur.Addr, shared: cur.Shared}, nil
}

// sendCommands sends every command after seq and returns the last sent.
func (l *link) sendCommands(ctx context.Context, after uint64) (uint64, error) {
	s := l.s
	for {
		cmds, err := s.Commands.Downstream(ctx, l.gw.StoreID, after, cloud.DefaultDownstreamLimit)
		if err != nil {
			return after, fmt.Errorf("read commands: %w", err)
		}
		if len(cmds) == 0 {
			return after, nil
		}
		f, err := downFrame(cmds)
		if err != nil {
			return after, err
		}
		if err := l.write(f); err != nil {
			return after, err
		}
		after = cmds[len(cmds)-1].Seq
	}
}

// downFrame is commands as a down frame.
func downFrame(cmds []*cloud.Command) (*sync.Frame, error) {
	f := &sync.Frame{Type: sync.FrameDown}
	for _, c := range cmds {
		sc := sync.Command{Seq: c.Seq, ID: c.ID, Kind: c.Kind, TaskNo: c.TaskNo, PrinterID: c.PrinterID,
			DeviceID: c.DeviceID, Operator: c.Operator, Reason: c.Reason, CreatedAt: c.CreatedAt}
		if sc.Operator == "" {
			sc.Operator = c.CreatedBy
		}
		if c.Order != nil {
			b, err := json.Marshal(c.Order)
			if err != nil {
				return nil, err
			}
			sc.Order = b
		}
		f.Commands = append(f.Commands, sc)
	}
	return f, nil
}
