package http

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// GET /v1/dashboard?since=RFC3339&limit=N: the stores the token sees (in
// trouble first, at most limit), the printers in trouble and the open
// alerts across them, and each store's counts since the start of the
// viewer's day.
func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	f := cloud.DashboardFilter{Limit: limit}
	if v := r.URL.Query().Get("since"); v != "" {
		f.Since, err = time.Parse(time.RFC3339, v)
		if err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "since must be an RFC 3339 time such as 2026-09-23T00:00:00+08:00, got %q", v)
		}
	}
	d, err := s.DashboardService.Dashboard(r.Context(), f)
	if err != nil {
		return err
	}
	// A shared answer carries its JSON: written as is, not encoded again.
	b, err := d.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode dashboard: %w", err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n')) // the client went away: nothing to do
	return nil
}

// GET /v1/search?q=Q&store_id=S&limit=N: tasks whose order id or task_no
// is q, newest first, each with its receipts, events and audit trail.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	search := cloud.TaskSearch{Query: q.Get("q"), StoreID: q.Get("store_id"), Limit: limit}
	tasks, err := s.DashboardService.SearchTasks(r.Context(), search)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Query string               `json:"q"`
		Tasks []*cloud.TaskHistory `json:"tasks"`
	}{search.Query, tasks})
	return nil
}

// GET /v1/stores/{store_id}/bump-times?since=RFC3339: per station of the
// store's kitchen displays, the median and 90th percentile time from order
// to bump of the orders since the start of the viewer's day, and per hour.
func (s *Server) handleBumpTimes(w http.ResponseWriter, r *http.Request) error {
	var f cloud.DashboardFilter
	if v := r.URL.Query().Get("since"); v != "" {
		var err error
		f.Since, err = time.Parse(time.RFC3339, v)
		if err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "since must be an RFC 3339 time such as 2026-09-23T00:00:00+08:00, got %q", v)
		}
	}
	b, err := s.DashboardService.BumpTimes(r.Context(), r.PathValue("store_id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}
