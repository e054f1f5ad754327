package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// holdChunk bounds the tasks held in one transaction.
const holdChunk = 200

// HoldRecovered holds tasks whose state may have gone backwards (after
// damage to the data dir, a restore or a repair) for a person: each moves
// to attention_required with reason recovered and the cause in words, and
// prints only when someone asks for it (with a REPRINT line) or says that
// it printed. taskNos nil means every waiting task (queued, retry_wait);
// named tasks are held if they are still open (queued, retry_wait,
// printing). One audit entry records the hold. It returns how many tasks
// it held.
func (g *Gateway) HoldRecovered(ctx context.Context, taskNos []string, cause string) (int, error) {
	if taskNos == nil {
		err := g.store.View(ctx, func(tx ReadTx) error {
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
		})
		if err != nil {
			return 0, err
		}
	}
	cause = strings.TrimSpace(cause)
	if cause == "" {
		cause = "the gateway's data was recovered"
	}
	held := 0
	for start := 0; start == 0 || start < len(taskNos); start += holdChunk {
		part := taskNos[start:min(start+holdChunk, len(taskNos))]
		last := start+holdChunk >= len(taskNos)
		n := 0
		err := g.store.Update(ctx, func(tx Tx) error {
			n = 0
			for _, no := range part {
				t, err := tx.Task(no)
				if isNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				if !t.Status.Open() {
					continue
				}
				t.Status, t.Reason, t.LastError = storeprint.StatusAttention, storeprint.ReasonRecovered, cause
				t.LeaseToken, t.LeaseExpires = "", time.Time{}
				if err := tx.PutTask(t); err != nil {
					return err
				}
				n++
			}
			if !last {
				return nil
			}
			return tx.AppendAudit(&AuditEntry{
				Action: storeprint.ActionHoldRecovered, Operator: "gateway", Reason: cause,
				After: snapshot(map[string]any{"held": held + n}),
			})
		})
		if err != nil {
			return held, err
		}
		held += n
	}
	if held > 0 {
		g.log.Warn("tasks held for a person: their state may have gone backwards", "tasks", held, "cause", cause)
	}
	return held, nil
}
