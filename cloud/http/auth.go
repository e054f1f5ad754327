package http

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/internal/authlimit"
)

// authenticate puts the request's actor in its context, or answers 401 or
// 403, before h runs. The token is checked first: a valid one is served
// whatever other requests from its address sent. Bad tokens are counted
// per client address and logged without the token; past the limit a bad
// token is answered 429 with Retry-After instead of 401.
func (s *Server) authenticate(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := s.actor(r)
		if err != nil {
			if storeprint.ErrorCode(err) == storeprint.EUNAUTHORIZED && r.Header.Get("Authorization") != "" {
				addr := authlimit.Addr(r)
				wait := s.badTokens.Wait(addr)
				limited := s.badTokens.Fail(addr)
				s.Logger.Warn("bad token", "addr", addr, "method", r.Method, "path", r.URL.Path, "rate_limited", limited || wait > 0)
				if wait > 0 {
					w.Header().Set("Retry-After", authlimit.RetryAfter(wait))
					err = storeprint.Errorf(storeprint.ETOOMANY, "too many bad tokens from %s; try again in %ss", addr, authlimit.RetryAfter(wait))
				}
			}
			s.writeError(w, r, err)
			return
		}
		r = r.WithContext(cloud.NewContextWithActor(r.Context(), a))
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) actor(r *http.Request) (*cloud.Actor, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "missing bearer token: send Authorization: Bearer <token>")
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "the Authorization header must be \"Bearer <token>\"")
	}
	// Compare hashes so that the time taken says nothing about the token.
	sum := sha256.Sum256([]byte(token))
	if s.adminHash != nil && subtle.ConstantTimeCompare(sum[:], s.adminHash) == 1 {
		return &cloud.Actor{Kind: cloud.ActorAdmin}, nil
	}
	switch {
	case strings.HasPrefix(token, cloud.TenantTokenPrefix):
		return s.TenantService.AuthenticateTenant(r.Context(), token)
	case strings.HasPrefix(token, cloud.GatewayTokenPrefix):
		return nil, storeprint.Errorf(storeprint.EFORBIDDEN, "a gateway token is only accepted on the sync link")
	}
	return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid token")
}
