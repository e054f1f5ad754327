package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// GET /v1/stores?limit=N&after=STORE_ID: a page of stores in store_id
// order, at most limit and at most cloud.MaxStoresPageBytes of JSON (a
// page holds one store at least). When more follow, a Link header names
// the next page: rel="next", after the page's last store.
func (s *Server) handleFindStores(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	f := cloud.StoreFilter{After: r.URL.Query().Get("after"), Limit: limit}
	stores, more, err := s.StoreService.FindStores(r.Context(), f)
	if err != nil {
		return err
	}
	var buf, item bytes.Buffer
	enc := json.NewEncoder(&item)
	enc.SetEscapeHTML(false)
	buf.WriteByte('[')
	n := 0
	for _, st := range stores {
		item.Reset()
		if err := enc.Encode(st); err != nil {
			return fmt.Errorf("encode store %s: %w", st.ID, err)
		}
		b := bytes.TrimSuffix(item.Bytes(), []byte("\n"))
		if n > 0 && buf.Len()+1+len(b)+2 > cloud.MaxStoresPageBytes {
			more = true
			break
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
		n++
	}
	buf.WriteString("]\n")
	if more {
		next := url.Values{"after": {stores[n-1].ID}}
		if limit > 0 {
			next.Set("limit", strconv.Itoa(limit))
		}
		w.Header().Set("Link", "</v1/stores?"+next.Encode()+`>; rel="next"`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes()) // the client went away: nothing to do
	return nil
}

// POST /v1/stores/{store_id}/orders: a storeprint.Order, the POS API's body
// and idempotency rules. 201 when accepted, 200 with the same body for a
// replay, 409 for the same order_id with other content.
func (s *Server) handleCreateOrder(w http.ResponseWriter, r *http.Request) error {
	var o storeprint.Order
	if err := decode(w, r, &o, false); err != nil {
		return err
	}
	res, created, err := s.OrderService.CreateOrder(r.Context(), r.PathValue("store_id"), &o)
	if err != nil {
		return err
	}
	if created {
		s.metrics.orders.WithLabelValues("created").Inc()
	} else {
		s.metrics.orders.WithLabelValues("replayed").Inc()
	}
	writeJSON(w, createdStatus(created), res)
	return nil
}

// GET /v1/stores/{store_id}/orders/{order_id}: a cloud order's body as
// accepted, to post again (a replay) where it did not arrive.
func (s *Server) handleFindOrder(w http.ResponseWriter, r *http.Request) error {
	o, err := s.OrderService.FindOrder(r.Context(), r.PathValue("store_id"), r.PathValue("order_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

// GET /v1/stores/{store_id}/tasks/{task_no}
func (s *Server) handleFindTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.TaskService.FindTask(r.Context(), r.PathValue("store_id"), r.PathValue("task_no"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// GET /v1/stores/{store_id}/tasks?status=S&limit=N&after=TASK_NO: with
// after (empty for the first page), in task_no order after it.
func (s *Server) handleFindTasks(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := cloud.TaskFilter{Status: storeprint.Status(q.Get("status")), Limit: limit}
	if q.Has("after") {
		after := q.Get("after")
		f.After = &after
	}
	tasks, err := s.TaskService.FindTasks(r.Context(), r.PathValue("store_id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tasks)
	return nil
}

// POST /v1/stores/{store_id}/tasks/{task_no}/retry,
// POST /v1/stores/{store_id}/tasks/{task_no}/reprint and
// POST /v1/stores/{store_id}/printers/{printer_id}/failover/ack and
// DELETE /v1/stores/{store_id}/devices/{device_id}, each
// {"reason","operator","command_id"}: queue a command for the store's
// gateway, audited. 202 when queued, 200 for a replay of a command_id.
func (s *Server) handleCommand(kind storeprint.CommandKind) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			CommandID string `json:"command_id"`
			cloud.Note
		}
		if err := decode(w, r, &req, true); err != nil {
			return err
		}
		c, created, err := s.CommandService.Submit(r.Context(), r.PathValue("store_id"), &cloud.CommandRequest{
			ID: req.CommandID, Kind: kind, TaskNo: r.PathValue("task_no"), PrinterID: r.PathValue("printer_id"),
			DeviceID: r.PathValue("device_id"), Note: req.Note,
		})
		if err != nil {
			return err
		}
		status := http.StatusOK
		if created {
			status = http.StatusAccepted
			s.metrics.commands.WithLabelValues(string(kind)).Inc()
		}
		writeJSON(w, status, c)
		return nil
	}
}

// GET /v1/stores/{store_id}/devices: the devices paired at the store, as
// its audit trail tells.
func (s *Server) handleFindDevices(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.DeviceService.FindDevices(r.Context(), r.PathValue("store_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ds)
	return nil
}

// GET /v1/stores/{store_id}/alerts?history=true&limit=N: the current
// alerts (open and acknowledged) oldest first; with history, every alert
// newest first.
func (s *Server) handleFindAlerts(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	f := cloud.AlertFilter{Limit: limit}
	if v := r.URL.Query().Get("history"); v != "" {
		if f.History, err = strconv.ParseBool(v); err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "history must be true or false, got %q", v)
		}
	}
	alerts, err := s.StoreService.FindAlerts(r.Context(), r.PathValue("store_id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, alerts)
	return nil
}

// GET /v1/stores/{store_id}/link: every incarnation of the store's
// gateways with its cursor, the recent link events (data reset,
// resynchronised, restored behind the cloud, tasks taken over, events set
// aside) and the dead letters.
func (s *Server) handleFindLink(w http.ResponseWriter, r *http.Request) error {
	l, err := s.LinkService.FindLink(r.Context(), r.PathValue("store_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

// POST /v1/stores/{store_id}/alerts/{alert_id}/ack {"operator","reason"}:
// a person takes the alert on, audited; 200 with the alert, also when it
// was acknowledged before.
func (s *Server) handleAcknowledgeAlert(w http.ResponseWriter, r *http.Request) error {
	var note cloud.Note
	if err := decode(w, r, &note, false); err != nil {
		return err
	}
	al, err := s.StoreService.AcknowledgeAlert(r.Context(), r.PathValue("store_id"), r.PathValue("alert_id"), note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, al)
	return nil
}

// GET /v1/audit?tenant_id=T&store_id=S&limit=N, newest first.
func (s *Server) handleFindAudit(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	events, err := s.AuditService.FindAuditEvents(r.Context(), cloud.AuditFilter{
		TenantID: q.Get("tenant_id"), StoreID: q.Get("store_id"), Limit: limit,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, events)
	return nil
}

func queryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, storeprint.Errorf(storeprint.EINVALID, "%s must be a positive number, got %q", name, v)
	}
	return n, nil
}
