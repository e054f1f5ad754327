package http

import (
	"context"
	"net/http"

	"github.com/storeprint/storeprint/gateway"
)

func (s *Server) listPrinters(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.PrinterService.Printers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ps)
	return nil
}

func (s *Server) ackFailover(w http.ResponseWriter, r *http.Request) error {
	return s.failoverAction(w, r, s.PrinterService.AckFailover)
}

func (s *Server) failback(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		gateway.Actor
		Force bool `json:"force"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	f, err := s.PrinterService.Failback(r.Context(), r.PathValue("printer_id"), body.Operator, body.Reason, body.Force)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) failoverAction(w http.ResponseWriter, r *http.Request, fn func(context.Context, string, string, string) (*gateway.Failover, error)) error {
	var a gateway.Actor
	if err := decode(w, r, &a, false); err != nil {
		return err
	}
	f, err := fn(r.Context(), r.PathValue("printer_id"), a.Operator, a.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) testPage(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	t, err := s.PrinterService.TestPage(r.Context(), r.PathValue("printer_id"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewTask(t))
	return nil
}
