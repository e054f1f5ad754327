package http

import (
	"net/http"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) error {
	var o storeprint.Order
	if err := decode(w, r, &o, false); err != nil {
		return err
	}
	res, created, err := s.OrderService.AcceptOrder(r.Context(), &o, storeprint.SourcePOS)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
	return nil
}

func (s *Server) getOrder(w http.ResponseWriter, r *http.Request) error {
	o, err := s.OrderService.Order(r.Context(), r.PathValue("order_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) voidOrder(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	res, err := s.OrderService.Void(r.Context(), r.PathValue("order_id"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
