package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/storeprint/storeprint"
)

// holdChunk bounds the tasks held in one transaction: a store recovered
// after damage may hold thousands, more than one transaction takes.
const holdChunk = 200

// HoldRecovered moves waiting tasks to attention_required with reason
// recovered: their state may have gone backwards (data restored, repaired
// or recovered after damage), so they may have printed already and a person
// decides; a make-up print of one says REPRINT. nil taskNos holds every
// waiting task (queued, retry_wait); named tasks are held while they wait
// or are printing (an attempt the process no longer drives). The hold is
// audited as one entry naming the tasks; it returns how many were held.
func (g *Gateway) HoldRecovered(ctx context.Context, taskNos []string, cause string) (int, error) {
	named := taskNos != nil
	if !named {
		if err := g.store.View(ctx, func(tx ReadTx) error {
			for _, s := range []storeprint.Status{storeprint.StatusQueued, storeprint.StatusRetryWait} {
				ts, err := tx.ByStatus(s, 0)
				if err != nil {
					return err
				}
				for _, t := range ts {
					taskNos = append(taskNos, t.TaskNo)
				}
			}
			return nil
		}); err != nil {
			return 0, err
		}
	}
	var held []string
	for start := 0; start == 0 || start < len(taskNos); start += holdChunk {
		part := taskNos[start:min(start+holdChunk, len(taskNos))]
		last := start+holdChunk >= len(taskNos)
		var now []string
		err := g.store.Update(ctx, func(tx Tx) error {
			now = nil
			for _, no := range part {
				t, err := tx.Task(no)
				if isNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				switch {
				case t.Status == storeprint.StatusQueued, t.Status == storeprint.StatusRetryWait:
				case t.Status == storeprint.StatusPrinting && named:
				default:
					continue
				}
				t.Status, t.Reason, t.LastError = storeprint.StatusAttention, storeprint.ReasonRecovered, cause
				t.LeaseToken, t.LeaseExpires = "", time.Time{}
				if err := tx.PutTask(t); err != nil {
					return err
				}
				now = append(now, t.TaskNo)
			}
			all := append(append([]string(nil), held...), now...)
			if !last || len(all) == 0 {
				return nil
			}
			after, _ := json.Marshal(map[string]any{"status": storeprint.StatusAttention, "reason": storeprint.ReasonRecovered, "task_nos": all})
			return tx.AppendAudit(&AuditEntry{Action: storeprint.ActionHoldRecovered, Operator: "gateway", Reason: cause, After: string(after)})
		})
		if err != nil {
			return len(held), err
		}
		held = append(held, now...)
	}
	if len(held) > 0 {
		g.log.Warn("tickets held for a person: their state may have gone backwards", "tasks", len(held), "cause", cause)
	}
	return len(held), nil
}

// OutboxLost records that the outbox events up to seq are gone: lost with
// damage to the data dir, or newer than a restored backup. The link counts
// them as compacted, so a cloud that never stored them gets a snapshot of
// the tasks instead of waiting for them.
func (g *Gateway) OutboxLost(ctx context.Context, upTo uint64) error {
	return g.store.Update(ctx, func(tx Tx) error {
		from, err := tx.Meta(metaCompacted)
		if err != nil || from >= upTo {
			return err
		}
		tx.SetMeta(metaCompacted, upTo)
		return nil
	})
}
