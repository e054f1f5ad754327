package gateway

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/storeprint/storeprint/sync"
)

// Event returns the task's state as replayed to the cloud.
func (t *Task) Event() sync.TaskEvent {
	return sync.TaskEvent{
		TaskNo: t.TaskNo, Version: t.Version, OrderID: t.OrderID, Station: t.Station,
		PrinterID: t.PrinterID, Status: t.Status, Attempt: t.Attempt,
		LastError: t.LastError, Reason: t.Reason, Source: t.Source, CopyOf: t.CopyOf,
		BackupFrom: t.BackupFrom, CreatedAt: t.CreatedAt, PrintedAt: t.PrintedAt, UpdatedAt: t.UpdatedAt,
	}
}

// Event returns the receipt's latest step as replayed to the cloud.
func (r *Receipt) Event() sync.ReceiptEvent {
	at := r.PreparedAt
	for _, t := range []*time.Time{r.SubmittedAt, r.PrintedAt, r.ConfirmedAt} {
		if t != nil && t.After(at) {
			at = *t
		}
	}
	return sync.ReceiptEvent{
		TaskNo: r.TaskNo, Attempt: r.Attempt, State: r.State, PrinterID: r.PrinterID,
		PayloadSHA256: r.PayloadSHA256, ProcessID: r.ProcessID, JobID: r.JobID,
		Reprint: r.Reprint, ConfirmedBy: r.ConfirmedBy, At: at,
	}
}

// Event returns the audit entry as replayed to the cloud.
func (a *AuditEntry) Event() sync.AuditEvent {
	ev := sync.AuditEvent{
		ID: strconv.FormatUint(a.Seq, 10), Action: a.Action, Operator: a.Operator,
		Reason: a.Reason, TaskNo: a.TaskNo, At: a.At,
	}
	if a.Before != "" {
		ev.Before = rawJSON(a.Before)
	}
	if a.After != "" {
		ev.After = rawJSON(a.After)
	}
	return ev
}

// rawJSON keeps s if it is JSON, else quotes it as a JSON string.
func rawJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s) // a string always marshals
	return b
}
