package http

import (
	"net/http"
	"time"

	"github.com/storeprint/storeprint/cloud"
)

// POST /v1/admin/tenants {"tenant_id","name","reason","operator"}
func (s *Server) handleCreateTenant(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		TenantID string `json:"tenant_id"`
		Name     string `json:"name"`
		cloud.Note
	}
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	t := &cloud.Tenant{ID: req.TenantID, Name: req.Name}
	created, err := s.TenantService.CreateTenant(r.Context(), t, req.Note)
	if err != nil {
		return err
	}
	writeJSON(w, createdStatus(created), t)
	return nil
}

// POST /v1/admin/tenants/{tenant_id}/tokens {"reason","operator"} → {"token"}
func (s *Server) handleCreateTenantToken(w http.ResponseWriter, r *http.Request) error {
	var note cloud.Note
	if err := decode(w, r, &note, true); err != nil {
		return err
	}
	tok, err := s.TenantService.CreateTenantToken(r.Context(), r.PathValue("tenant_id"), note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, tok)
	return nil
}

// POST /v1/admin/stores {"store_id","tenant_id","name","reason","operator"}
func (s *Server) handleCreateStore(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		StoreID  string `json:"store_id"`
		TenantID string `json:"tenant_id"`
		Name     string `json:"name"`
		cloud.Note
	}
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	st := &cloud.Store{ID: req.StoreID, TenantID: req.TenantID, Name: req.Name}
	created, err := s.StoreService.CreateStore(r.Context(), st, req.Note)
	if err != nil {
		return err
	}
	writeJSON(w, createdStatus(created), st)
	return nil
}

// POST /v1/admin/stores/{store_id}/gateways {"reason","operator"} →
// {"gateway_id","token"}: the token is shown this once.
func (s *Server) handleCreateGateway(w http.ResponseWriter, r *http.Request) error {
	var note cloud.Note
	if err := decode(w, r, &note, true); err != nil {
		return err
	}
	gw, token, err := s.GatewayService.CreateGateway(r.Context(), r.PathValue("store_id"), note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		GatewayID string `json:"gateway_id"`
		StoreID   string `json:"store_id"`
		Token     string `json:"token"`
	}{gw.ID, gw.StoreID, token})
	return nil
}

// DELETE /v1/admin/gateways/{gateway_id} with an optional body
// {"reason","operator"} (or ?reason=): revokes at once.
func (s *Server) handleRevokeGateway(w http.ResponseWriter, r *http.Request) error {
	var note cloud.Note
	if err := decode(w, r, &note, true); err != nil {
		return err
	}
	if note.Reason == "" {
		note.Reason = r.URL.Query().Get("reason")
	}
	gw, err := s.GatewayService.RevokeGateway(r.Context(), r.PathValue("gateway_id"), note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		GatewayID string     `json:"gateway_id"`
		StoreID   string     `json:"store_id"`
		RevokedAt *time.Time `json:"revoked_at"`
	}{gw.ID, gw.StoreID, gw.RevokedAt})
	return nil
}

// createdStatus is 201 for a new resource and 200 for a replay.
func createdStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// GET /v1/admin/tenants/{tenant_id}/tokens: every token of the tenant,
// each with its token_id, never its secret.
func (s *Server) handleFindTenantTokens(w http.ResponseWriter, r *http.Request) error {
	toks, err := s.TenantService.FindTenantTokens(r.Context(), r.PathValue("tenant_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toks)
	return nil
}

// DELETE /v1/admin/tenants/{tenant_id}/tokens/{token_id} with an optional
// body {"reason","operator"}: refused from this answer on, audited.
func (s *Server) handleRevokeTenantToken(w http.ResponseWriter, r *http.Request) error {
	var note cloud.Note
	if err := decode(w, r, &note, true); err != nil {
		return err
	}
	tok, err := s.TenantService.RevokeTenantToken(r.Context(), r.PathValue("tenant_id"), r.PathValue("token_id"), note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tok)
	return nil
}
