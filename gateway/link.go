package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

// The gateway's side of the sync link (see sync/client): its outbox, the
// commands the cloud sends down, and the printer states it reports.

// Meta names.
const (
	metaAcked      = "sync_acked"  // highest seq the cloud stored
	metaDownCursor = "down_cursor" // highest downstream command seq applied
	metaCompacted  = "compacted"   // outbox removed up to here
	// MetaIncarnation holds the data dir's incarnation: a random number the
	// store writes when it creates a data dir (never again), which tells
	// the cloud that this data started afresh. A data dir made before
	// incarnations has none.
	MetaIncarnation = "incarnation"
)

// Incarnation is the text form of an incarnation number ("" for none).
func Incarnation(v uint64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("%016x", v)
}

// Hello says what the store's data is, for the link's hello.
func (g *Gateway) Hello(ctx context.Context) (sync.Hello, error) {
	var h sync.Hello
	err := g.store.View(ctx, func(tx ReadTx) error {
		inc, err := tx.Meta(MetaIncarnation)
		if err != nil {
			return err
		}
		h.Incarnation = Incarnation(inc)
		if h.LastSeq, err = tx.LastEventSeq(); err != nil {
			return err
		}
		if h.Compacted, err = tx.Meta(metaCompacted); err != nil {
			return err
		}
		h.DownCursor, err = tx.Meta(metaDownCursor)
		return err
	})
	return h, err
}

// Snapshot returns up to limit tasks in task_no order after the given one,
// with the receipts of their attempts, for a cloud that is behind.
func (g *Gateway) Snapshot(ctx context.Context, after string, limit int) ([]sync.TaskEvent, []sync.ReceiptEvent, error) {
	var tasks []sync.TaskEvent
	var receipts []sync.ReceiptEvent
	err := g.store.View(ctx, func(tx ReadTx) error {
		ts, err := tx.TasksAfter(after, limit)
		if err != nil {
			return err
		}
		for _, t := range ts {
			tasks = append(tasks, t.Event())
			rs, err := tx.Receipts(t.TaskNo)
			if err != nil {
				return err
			}
			for _, r := range rs {
				receipts = append(receipts, r.Event())
			}
		}
		return nil
	})
	return tasks, receipts, err
}

// compactChunk bounds the outbox entries removed in one transaction.
const compactChunk = 1000

// OutboxEvents returns up to limit outbox events after seq, in order.
func (g *Gateway) OutboxEvents(ctx context.Context, after uint64, limit int) ([]sync.Event, error) {
	var out []sync.Event
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		out, err = tx.Outbox(after, limit)
		return err
	})
	return out, err
}

// OutboxAcked records that the cloud stored every event up to cursor:
// printed receipts among them become confirmed, and the entries are removed
// from the outbox. It needs no sync of its own and rides on the next
// update's: lost in a power cut, the events are sent again and the cloud,
// which has them, keeps one of each.
func (g *Gateway) OutboxAcked(ctx context.Context, cursor uint64) error {
	ctx = WithoutSync(ctx)
	for {
		more := false
		err := g.store.Update(ctx, func(tx Tx) error {
			more = false
			acked, err := tx.Meta(metaAcked)
			if err != nil {
				return err
			}
			if cursor > acked {
				tx.SetMeta(metaAcked, cursor)
			}
			from, err := tx.Meta(metaCompacted)
			if err != nil {
				return err
			}
			if from >= cursor {
				return nil
			}
			events, err := tx.Outbox(from, compactChunk)
			if err != nil {
				return err
			}
			now := g.now()
			done := cursor
			for i, e := range events {
				if e.Seq > cursor {
					break
				}
				if i == len(events)-1 && len(events) == compactChunk {
					done = e.Seq
				}
				tx.DeleteEvent(e.Seq)
				if e.Kind != sync.KindReceipt {
					continue
				}
				var re sync.ReceiptEvent
				if err := json.Unmarshal(e.Data, &re); err != nil || re.State != storeprint.ReceiptPrinted {
					continue
				}
				r, err := tx.Receipt(re.TaskNo, re.Attempt)
				if err != nil {
					if isNotFound(err) {
						continue
					}
					return err
				}
				if r.State == storeprint.ReceiptPrinted {
					r.State, r.ConfirmedAt = storeprint.ReceiptConfirmed, &now
					if err := tx.PutReceipt(r); err != nil {
						return err
					}
				}
			}
			tx.SetMeta(metaCompacted, done)
			more = done < cursor
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
}

// SyncState reports the outbox as the store last recorded it.
type SyncState struct {
	Acked uint64 `json:"acked"` // highest seq the cloud stored, as of the last compaction
	Last  uint64 `json:"last"`  // newest event written
}

// Pending returns how many events the cloud has not acknowledged, given the
// link's own cursor (which may be ahead of the last compaction).
func (s SyncState) Pending(cursor uint64) uint64 {
	if acked := max(cursor, s.Acked); s.Last > acked {
		return s.Last - acked
	}
	return 0
}

// SyncState returns the outbox's acknowledged cursor and newest seq.
func (g *Gateway) SyncState(ctx context.Context) (SyncState, error) {
	var s SyncState
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		if s.Acked, err = tx.Meta(metaAcked); err != nil {
			return err
		}
		s.Last, err = tx.LastEventSeq()
		return err
	})
	return s, err
}

// DownCursor returns the highest downstream command seq applied.
func (g *Gateway) DownCursor(ctx context.Context) (uint64, error) {
	var c uint64
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		c, err = tx.Meta(metaDownCursor)
		return err
	})
	return c, err
}

// ApplyDown applies commands from the cloud in seq order, each durably
// before the cursor moves past it, and returns the new cursor, moved to
// at least through (the cloud sends a store that lost data the commands
// it must have again, then moves it past the rest). Commands at or below
// the cursor are skipped (a replay). A command that cannot apply (unknown
// task, conflicting order) is logged and skipped; storage trouble stops
// and returns the error, so the command comes again.
func (g *Gateway) ApplyDown(ctx context.Context, cmds []sync.Command, through uint64) (uint64, error) {
	cursor, err := g.DownCursor(ctx)
	if err != nil {
		return 0, err
	}
	for _, c := range cmds {
		if c.Seq <= cursor {
			continue
		}
		if err := g.applyCommand(ctx, c); err != nil {
			switch storeprint.ErrorCode(err) {
			case storeprint.EINVALID, storeprint.ENOTFOUND, storeprint.ECONFLICT:
				// Refused for good: HQ is told why (an audit entry the link
				// replays), and the cursor moves past it.
				g.log.Warn("cloud command not applied", "seq", c.Seq, "kind", c.Kind, "task_no", c.TaskNo, "err", storeprint.ErrorMessage(err))
				if err := g.refuseCommand(ctx, c, storeprint.ErrorMessage(err)); err != nil {
					return cursor, err
				}
			default:
				return cursor, err
			}
		}
		cursor = c.Seq
	}
	if through > cursor {
		if err := g.setDownCursor(ctx, through); err != nil {
			return cursor, err
		}
		cursor = through
	}
	return cursor, nil
}

// refuseCommand records that a command from HQ was not carried out, and
// why, and moves the cursor past it, in one transaction.
func (g *Gateway) refuseCommand(ctx context.Context, c sync.Command, why string) error {
	return g.store.Update(ctx, func(tx Tx) error {
		if cur, err := tx.Meta(metaDownCursor); err != nil || cur >= c.Seq {
			return err
		}
		tx.SetMeta(metaDownCursor, c.Seq)
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionCommandRefused, Operator: hqOperator(c), Reason: why, TaskNo: c.TaskNo,
			After: snapshot(map[string]any{"command_id": c.ID, "kind": c.Kind, "seq": c.Seq, "printer_id": c.PrinterID}),
		})
	})
}

func (g *Gateway) setDownCursor(ctx context.Context, seq uint64) error {
	return g.store.Update(ctx, func(tx Tx) error {
		if cur, err := tx.Meta(metaDownCursor); err != nil || cur >= seq {
			return err
		}
		tx.SetMeta(metaDownCursor, seq)
		return nil
	})
}

func (g *Gateway) applyCommand(ctx context.Context, c sync.Command) error {
	a := Actor{Operator: hqOperator(c), Reason: c.Reason}
	switch c.Kind {
	case storeprint.CommandOrder:
		var o storeprint.Order
		if err := json.Unmarshal(c.Order, &o); err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "cloud order %d: %v", c.Seq, err)
		}
		// Accepting is idempotent by order_id, so a replay after a crash
		// between accepting and moving the cursor prints nothing twice.
		if _, _, err := g.AcceptOrder(ctx, &o, storeprint.SourceCloud); err != nil {
			return err
		}
		return g.setDownCursor(ctx, c.Seq)
	case storeprint.CommandRetry:
		// A make-up print of a done task is a no-op: replays are harmless.
		if _, err := g.Retry(ctx, c.TaskNo, a); err != nil {
			return err
		}
		return g.setDownCursor(ctx, c.Seq)
	case storeprint.CommandFailoverAck:
		if _, err := g.AckFailover(ctx, c.PrinterID, a.Operator, a.Reason); err != nil {
			return err
		}
		return g.setDownCursor(ctx, c.Seq)
	case storeprint.CommandDeviceRevoke:
		// A device already gone is ENOTFOUND: logged and skipped.
		if _, err := g.RevokeDevice(ctx, c.DeviceID, a); err != nil {
			return err
		}
		return g.setDownCursor(ctx, c.Seq)
	case storeprint.CommandReprint:
		// A copy is not idempotent: make it and move the cursor in one
		// transaction.
		var cp *Task
		err := g.store.Update(ctx, func(tx Tx) error {
			if cur, err := tx.Meta(metaDownCursor); err != nil || cur >= c.Seq {
				return err
			}
			var err error
			if cp, err = g.reprintTx(tx, c.TaskNo, a); err != nil {
				return err
			}
			tx.SetMeta(metaDownCursor, c.Seq)
			return nil
		})
		if err == nil && cp != nil {
			g.wake(cp.PrinterID)
		}
		return err
	}
	return storeprint.Errorf(storeprint.EINVALID, "unknown cloud command %q", c.Kind)
}

// PrinterStatuses returns the printers as the sync link reports them.
func (g *Gateway) PrinterStatuses(ctx context.Context) ([]sync.PrinterStatus, error) {
	ps, err := g.Printers(ctx)
	if err != nil {
		return nil, err
	}
	now := g.now()
	out := make([]sync.PrinterStatus, 0, len(ps))
	for _, p := range ps {
		s := sync.PrinterStatus{ID: p.ID, Status: p.Status, Stations: p.Stations, Backup: p.Backup, At: now}
		if p.CheckedAt != nil {
			s.At = *p.CheckedAt
		}
		s.Failover = p.Failover != nil && p.Failover.Active
		if p.InTrouble {
			s.Word = p.Word
		}
		out = append(out, s)
	}
	return append(out, g.displayStatuses(ctx)...), nil
}

// hqOperator names the person at HQ behind a command, as the store's audit
// log writes it: "hq:<name>", at most 64 characters.
func hqOperator(c sync.Command) string {
	op := "hq"
	if name := strings.TrimSpace(c.Operator); name != "" {
		op += ":" + name
	}
	if r := []rune(op); len(r) > storeprint.MaxOperatorLen {
		op = string(r[:storeprint.MaxOperatorLen])
	}
	return op
}
