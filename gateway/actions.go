package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// Actor names who asks for an action and why; every action is audited.
type Actor struct {
	Operator string `json:"operator"`
	Reason   string `json:"reason"`
}

func (a Actor) validate() error {
	if strings.TrimSpace(a.Operator) == "" {
		return storeprint.Errorf(storeprint.EINVALID, "operator is required")
	}
	if err := storeprint.CheckText("operator", a.Operator, 64); err != nil {
		return err
	}
	return storeprint.CheckText("reason", a.Reason, storeprint.MaxNoteLen)
}

func snapshot(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// taskSnapshot is what the audit log keeps of a task before and after.
func taskSnapshot(t *Task) string {
	return snapshot(map[string]any{
		"status": t.Status, "attempt": t.Attempt, "printer_id": t.PrinterID,
		"reason": t.Reason, "last_error": t.LastError,
	})
}

// VoidResult lists what a void did to each task of the order.
type VoidResult struct {
	OrderID string       `json:"order_id"`
	Tasks   []TaskResult `json:"tasks"`
}

// Void cancels every task of the order whose ticket has not been
// submitted to a printer. A task whose attempt already wrote its prepared
// receipt is past the point of no return and keeps its status.
func (g *Gateway) Void(ctx context.Context, orderID string, a Actor) (*VoidResult, error) {
	if a.Operator == "" {
		a.Operator = "pos"
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	res := &VoidResult{OrderID: orderID}
	err := g.store.Update(ctx, func(tx Tx) error {
		res.Tasks = nil
		o, err := tx.Order(orderID)
		if err != nil {
			return err
		}
		before := []string{}
		nos, err := g.orderTasks(tx, o)
		if err != nil {
			return err
		}
		for _, no := range nos {
			t, err := tx.Task(no)
			if isNotFound(err) {
				continue // printed long ago and deleted by retention
			}
			if err != nil {
				return err
			}
			before = append(before, taskSnapshot(t))
			if g.cancellable(tx, t) {
				t.Status, t.LeaseToken, t.LeaseExpires = storeprint.StatusCancelled, "", time.Time{}
				t.LastError = "order voided"
				if err := tx.PutTask(t); err != nil {
					return err
				}
			}
			res.Tasks = append(res.Tasks, TaskResult{TaskNo: t.TaskNo, Station: t.Station, PrinterID: t.PrinterID, Status: t.Status})
		}
		if !o.Voided {
			o.Voided = true
			if err := tx.PutOrder(o); err != nil {
				return err
			}
		}
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionVoid, Operator: a.Operator, Reason: a.Reason,
			Before: "[" + strings.Join(before, ",") + "]", After: snapshot(res.Tasks),
		})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// orderTasks returns the task numbers of an order's tickets and of every
// copy made of them: voiding the order stops them all.
func (g *Gateway) orderTasks(tx ReadTx, o *OrderRecord) ([]string, error) {
	var out []string
	for _, no := range o.TaskNos {
		t, err := tx.Task(no)
		if err != nil {
			return nil, err
		}
		out = append(out, no)
		for n := 1; n <= t.Copies; n++ {
			out = append(out, storeprint.CopyTaskNo(no, n))
		}
	}
	return out, nil
}

// cancellable reports whether a task's ticket is known not to have reached
// a printer, so voiding can cancel it.
func (g *Gateway) cancellable(tx ReadTx, t *Task) bool {
	switch t.Status {
	case storeprint.StatusQueued, storeprint.StatusRetryWait, storeprint.StatusFailed:
		return true
	case storeprint.StatusAttention:
		return t.Reason == storeprint.ReasonStale
	case storeprint.StatusPrinting:
		// Leased but the final fence not passed: the fence will refuse.
		_, err := tx.Receipt(t.TaskNo, t.Attempt)
		return isNotFound(err)
	}
	return false
}

// RetryResult is the answer to a make-up print.
type RetryResult struct {
	Task    *Task  `json:"task"`
	Changed bool   `json:"changed"`
	Message string `json:"message"`
}

// Retry is a make-up print of a failed or attention_required task under the
// same task_no. For a done task it does nothing and says so. A ticket whose
// earlier attempt may have printed carries a REPRINT line.
func (g *Gateway) Retry(ctx context.Context, taskNo string, a Actor) (*RetryResult, error) {
	if a.Operator == "" {
		a.Operator = "pos"
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	var res *RetryResult
	var wake string
	err := g.store.Update(ctx, func(tx Tx) error {
		wake = ""
		t, err := tx.Task(taskNo)
		if err != nil {
			return err
		}
		switch t.Status {
		case storeprint.StatusDone:
			res = &RetryResult{Task: t, Message: "task is already printed; nothing to do (use reprint for a deliberate copy)"}
			return nil
		case storeprint.StatusQueued, storeprint.StatusRetryWait, storeprint.StatusPrinting:
			res = &RetryResult{Task: t, Message: "task is already waiting to print; nothing to do"}
			return nil
		case storeprint.StatusCancelled:
			return storeprint.Errorf(storeprint.ECONFLICT, "task %q was cancelled (its order was voided)", taskNo)
		}
		if err := g.checkNotVoided(tx, t); err != nil {
			return err
		}
		before := taskSnapshot(t)
		if t.Status == storeprint.StatusAttention && (t.Reason == storeprint.ReasonUncertain || t.Reason == storeprint.ReasonRecovered) {
			t.Reprint = true // the earlier attempt may have printed
		}
		t.Status, t.Reason, t.Failures, t.StaleOK = storeprint.StatusQueued, "", 0, true
		t.NextAt = g.now()
		if p := g.reroute(t); p != "" {
			wake = p
		} else {
			wake = t.PrinterID
		}
		if err := tx.PutTask(t); err != nil {
			return err
		}
		res = &RetryResult{Task: t, Changed: true, Message: "queued for a make-up print"}
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionRetry, Operator: a.Operator, Reason: a.Reason, TaskNo: taskNo,
			Before: before, After: taskSnapshot(t),
		})
	})
	if wake != "" {
		g.wake(wake)
	}
	return res, err
}

// Reprint makes a deliberate copy: a new task <task_no>_copy_<n> whose
// ticket carries REPRINT.
func (g *Gateway) Reprint(ctx context.Context, taskNo string, a Actor) (*Task, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Reason) == "" {
		return nil, storeprint.Errorf(storeprint.EINVALID, "reason is required for a copy")
	}
	var cp *Task
	err := g.store.Update(ctx, func(tx Tx) error {
		var err error
		cp, err = g.reprintTx(tx, taskNo, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	g.wake(cp.PrinterID)
	return cp, nil
}

// reprintTx makes a deliberate copy inside a transaction.
func (g *Gateway) reprintTx(tx Tx, taskNo string, a Actor) (*Task, error) {
	t, err := tx.Task(taskNo)
	if err != nil {
		return nil, err
	}
	orig := t
	if t.CopyOf != "" { // a copy of a copy is numbered from the original
		if orig, err = tx.Task(t.CopyOf); err != nil {
			return nil, err
		}
	}
	if orig.Station == "" {
		return nil, storeprint.Errorf(storeprint.EINVALID, "task %q is a test page; print a new one instead", taskNo)
	}
	if err := g.checkNotVoided(tx, orig); err != nil {
		return nil, err
	}
	before := taskSnapshot(orig)
	orig.Copies++
	if err := tx.PutTask(orig); err != nil {
		return nil, err
	}
	now := g.now()
	printer, from := g.route(orig.Station)
	cp := &Task{
		TaskNo:  storeprint.CopyTaskNo(orig.TaskNo, orig.Copies),
		OrderID: orig.OrderID, Station: orig.Station, PrinterID: printer, FirstPrinter: printer,
		BackupFrom: from, Status: storeprint.StatusQueued, Source: orig.Source, Table: orig.Table,
		Note: orig.Note, Items: orig.Items, CopyOf: orig.TaskNo, Reprint: true, StaleOK: true,
		Seq: tx.NextTaskSeq(), CreatedAt: now, NextAt: now,
	}
	if err := tx.PutTask(cp); err != nil {
		return nil, err
	}
	return cp, tx.AppendAudit(&AuditEntry{
		Action: storeprint.ActionReprint, Operator: a.Operator, Reason: a.Reason, TaskNo: orig.TaskNo,
		Before: before, After: snapshot(map[string]any{"copy": cp.TaskNo, "printer_id": cp.PrinterID}),
	})
}

// Resolve lets a person who saw the paper close an attention_required task
// as printed, without printing again.
func (g *Gateway) Resolve(ctx context.Context, taskNo, outcome string, a Actor) (*Task, error) {
	if outcome != "printed" {
		return nil, storeprint.Errorf(storeprint.EINVALID, "outcome must be \"printed\" (use retry to print again)")
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	var t *Task
	err := g.store.Update(ctx, func(tx Tx) error {
		var err error
		if t, err = tx.Task(taskNo); err != nil {
			return err
		}
		if t.Status != storeprint.StatusAttention {
			return storeprint.Errorf(storeprint.ECONFLICT, "task %q is %s; only attention_required tasks can be resolved", taskNo, t.Status)
		}
		before := taskSnapshot(t)
		now := g.now()
		t.Status, t.PrintedAt, t.Reason = storeprint.StatusDone, &now, ""
		t.LastError = "resolved by " + a.Operator
		if err := tx.PutTask(t); err != nil {
			return err
		}
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionResolve, Operator: a.Operator, Reason: a.Reason, TaskNo: taskNo,
			Before: before, After: taskSnapshot(t),
		})
	})
	return t, err
}

// PrintStale makes a make-up print of every stale ticket of a station.
func (g *Gateway) PrintStale(ctx context.Context, station string, a Actor) ([]*Task, error) {
	if g.stations[station] == nil {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "station %q not found", station)
	}
	var stale []*Task
	if err := g.store.View(ctx, func(tx ReadTx) error {
		all, err := tx.ByStatus(storeprint.StatusAttention, 0)
		for _, t := range all {
			if t.Station == station && t.Reason == storeprint.ReasonStale {
				stale = append(stale, t)
			}
		}
		return err
	}); err != nil {
		return nil, err
	}
	var out []*Task
	for _, t := range stale {
		res, err := g.Retry(ctx, t.TaskNo, a)
		if err != nil {
			return out, err
		}
		out = append(out, res.Task)
	}
	return out, nil
}

// OrderState is an order as its POS asks about it: when it was accepted
// and where each of its tickets stands.
type OrderState struct {
	OrderID    string      `json:"order_id"`
	AcceptedAt time.Time   `json:"accepted_at"`
	Voided     bool        `json:"voided,omitempty"`
	Tasks      []OrderTask `json:"tasks"`
}

// OrderTask is one ticket of an order: a station's, or a copy of one.
type OrderTask struct {
	TaskNo    string            `json:"task_no"`
	Station   string            `json:"station"`
	PrinterID string            `json:"printer_id"`
	Status    storeprint.Status `json:"status"`
	PrintedAt *time.Time        `json:"printed_at"`
}

// Order returns an order's tickets and their states, copies after the
// ticket they copy; ENOTFOUND for an order the gateway does not know.
// Tickets retention deleted are left out.
func (g *Gateway) Order(ctx context.Context, orderID string) (*OrderState, error) {
	var out *OrderState
	err := g.store.View(ctx, func(tx ReadTx) error {
		o, err := tx.Order(orderID)
		if err != nil {
			return err
		}
		out = &OrderState{OrderID: o.OrderID, AcceptedAt: o.CreatedAt, Voided: o.Voided, Tasks: []OrderTask{}}
		for _, no := range o.TaskNos {
			t, err := tx.Task(no)
			if isNotFound(err) {
				continue // printed long ago and deleted by retention
			}
			if err != nil {
				return err
			}
			nos := []string{no}
			for n := 1; n <= t.Copies; n++ {
				nos = append(nos, storeprint.CopyTaskNo(no, n))
			}
			for _, no := range nos {
				t, err := tx.Task(no)
				if isNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				out.Tasks = append(out.Tasks, OrderTask{TaskNo: t.TaskNo, Station: t.Station, PrinterID: t.PrinterID, Status: t.Status, PrintedAt: t.PrintedAt})
			}
		}
		return nil
	})
	return out, err
}
