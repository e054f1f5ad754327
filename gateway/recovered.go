package gateway

import (
	"context"
	"encoding/json"

	"github.com/storeprint/storeprint"
)

// HoldRecovered moves waiting tasks (queued, retry_wait) to
// attention_required with reason recovered: their state may have gone
// backwards (data restored or recovered after damage), so they may have
// printed already and a person decides. nil taskNos holds every waiting
// task. The hold is audited as one entry; it returns how many were held.
func (g *Gateway) HoldRecovered(ctx context.Context, taskNos []string, cause string) (int, error) {
	var held []string
	err := g.store.Update(ctx, func(tx Tx) error {
		held = nil
		tasks, err := waitingTasks(tx, taskNos)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			t.Status, t.Reason, t.LastError = storeprint.StatusAttention, storeprint.ReasonRecovered, cause
			if err := tx.PutTask(t); err != nil {
				return err
			}
			held = append(held, t.TaskNo)
		}
		if len(held) == 0 {
			return nil
		}
		after, _ := json.Marshal(map[string]any{"status": storeprint.StatusAttention, "reason": storeprint.ReasonRecovered, "task_nos": held})
		return tx.AppendAudit(&AuditEntry{Action: storeprint.ActionHoldRecovered, Operator: "gateway", Reason: cause, After: string(after)})
	})
	if err == nil && len(held) > 0 {
		g.log.Warn("tickets held for a person: their state may have gone backwards", "tasks", len(held), "cause", cause)
	}
	return len(held), err
}

// waitingTasks returns the named tasks that wait to print, or every one.
func waitingTasks(tx ReadTx, taskNos []string) ([]*Task, error) {
	if taskNos == nil {
		queued, err := tx.ByStatus(storeprint.StatusQueued, 0)
		if err != nil {
			return nil, err
		}
		waiting, err := tx.ByStatus(storeprint.StatusRetryWait, 0)
		return append(queued, waiting...), err
	}
	var out []*Task
	for _, no := range taskNos {
		t, err := tx.Task(no)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if t.Status == storeprint.StatusQueued || t.Status == storeprint.StatusRetryWait {
			out = append(out, t)
		}
	}
	return out, nil
}
