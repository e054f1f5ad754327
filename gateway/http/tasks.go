package http

import (
	"net/http"
	"strconv"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// taskView is a task as the API shows it.
type taskView struct {
	TaskNo     string            `json:"task_no"`
	Status     storeprint.Status `json:"status"`
	PrinterID  string            `json:"printer_id"`
	Attempt    int               `json:"attempt"`
	LastError  string            `json:"last_error"`
	CreatedAt  time.Time         `json:"created_at"`
	PrintedAt  *time.Time        `json:"printed_at"`
	OrderID    string            `json:"order_id"`
	Station    string            `json:"station"`
	Reason     storeprint.Reason `json:"reason,omitempty"`
	Source     storeprint.Source `json:"source,omitempty"`
	CopyOf     string            `json:"copy_of,omitempty"`
	BackupFrom string            `json:"backup_from,omitempty"`
	Reprint    bool              `json:"reprint,omitempty"`
	NextAt     *time.Time        `json:"next_attempt_at,omitempty"`
	Table      string            `json:"table,omitempty"`
	Items      []storeprint.Item `json:"items"`
	// Word is what people read about the task: why it needs a person, or
	// where it is (GET /v1/words says it in their language).
	Word storeprint.Word `json:"word"`
	// WaitedS is how long it has waited since it was accepted, in seconds
	// (on the LAN page's board only).
	WaitedS *int64 `json:"waited_s,omitempty"`
}

func viewTask(t *gateway.Task) taskView {
	v := taskView{
		TaskNo: t.TaskNo, Status: t.Status, PrinterID: t.PrinterID, Attempt: t.Attempt,
		LastError: t.LastError, CreatedAt: t.CreatedAt, PrintedAt: t.PrintedAt, OrderID: t.OrderID,
		Station: t.Station, Reason: t.Reason, Source: t.Source, CopyOf: t.CopyOf,
		BackupFrom: t.BackupFrom, Reprint: t.Reprint, Table: t.Table, Items: t.Items,
	}
	if t.Status == storeprint.StatusRetryWait {
		n := t.NextAt
		v.NextAt = &n
	}
	v.Word = storeprint.StatusWord(t.Status)
	if t.Reason != "" && (t.Status == storeprint.StatusAttention || t.Status == storeprint.StatusFailed) {
		v.Word = storeprint.ReasonWord(t.Reason)
	}
	return v
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.TaskService.Task(r.Context(), r.PathValue("task_no"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

func (s *Server) getReceipts(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.TaskService.Receipts(r.Context(), r.PathValue("task_no"))
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []*gateway.Receipt{}
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	limit := 1000
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100000 {
			return storeprint.Errorf(storeprint.EINVALID, "limit must be a number between 1 and 100000")
		}
		limit = n
	}
	q := r.URL.Query()
	var tasks []*gateway.Task
	var err error
	if q.Has("after") {
		// A cursor over every task, in task_no order.
		if q.Get("status") != "" {
			return storeprint.Errorf(storeprint.EINVALID, "after pages through every task; it does not combine with status")
		}
		tasks, err = s.TaskService.TasksAfter(r.Context(), q.Get("after"), limit)
	} else {
		tasks, err = s.TaskService.Tasks(r.Context(), storeprint.Status(q.Get("status")), limit)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTasks(tasks))
	return nil
}

func (s *Server) retryTask(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	res, err := s.TaskService.Retry(r.Context(), r.PathValue("task_no"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": viewTask(res.Task), "changed": res.Changed, "message": res.Message})
	return nil
}

func (s *Server) reprintTask(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, false); err != nil {
		return err
	}
	t, err := s.TaskService.Reprint(r.Context(), r.PathValue("task_no"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewTask(t))
	return nil
}

func (s *Server) resolveTask(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Outcome string `json:"outcome"`
		gateway.Actor
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	t, err := s.TaskService.Resolve(r.Context(), r.PathValue("task_no"), body.Outcome, body.Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

func (s *Server) printStale(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, false); err != nil {
		return err
	}
	tasks, err := s.TaskService.PrintStale(r.Context(), r.PathValue("station"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTasks(tasks))
	return nil
}

func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "after must be a sequence number")
		}
		after = n
	}
	entries, err := s.AuditService.Audit(r.Context(), after, 1000)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []*gateway.AuditEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}
