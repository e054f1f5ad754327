package http

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/authlimit"
)

// Limits of failed authentication per client address.
const (
	// BadTokenBurst bad tokens at once, then one per BadTokenEvery.
	BadTokenBurst = 10
	BadTokenEvery = time.Second
	// BadCodeBurst wrong pairing codes at once, then one per BadCodeEvery:
	// at most 5 a minute.
	BadCodeBurst = 5
	BadCodeEvery = 12 * time.Second
)

// auth requires a valid bearer token whose role allows need. The token
// is checked first: a valid one is served whatever other requests from
// its address sent. Bad tokens are counted per client address and logged
// without the token; past the limit a bad token is answered 429 with
// Retry-After instead of 401.
func (s *Server) auth(need storeprint.Role, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := authlimit.Addr(r)
		tok, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint"`)
			writeError(w, r, s.log, storeprint.Errorf(storeprint.EUNAUTHORIZED, "missing bearer token (Authorization: Bearer <token>)"))
			return
		}
		p, err := s.authenticate(r.Context(), tok)
		if storeprint.ErrorCode(err) == storeprint.EUNAUTHORIZED {
			wait := s.badTokens.Wait(addr)
			limited := s.badTokens.Fail(addr)
			s.log.Warn("bad token", "addr", addr, "method", r.Method, "path", r.URL.Path, "rate_limited", limited || wait > 0)
			if wait > 0 {
				w.Header().Set("Retry-After", authlimit.RetryAfter(wait))
				writeError(w, r, s.log, storeprint.Errorf(storeprint.ETOOMANY, "too many bad tokens from %s; try again in %s", addr, authlimit.RetryAfter(wait)+"s"))
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint", error="invalid_token"`)
		}
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		if !p.Role.Allows(need) {
			writeError(w, r, s.log, storeprint.Errorf(storeprint.EFORBIDDEN, "%s %s needs a %s token; this one is %s", r.Method, r.Pattern[strings.IndexByte(r.Pattern, ' ')+1:], need, p.Role))
			return
		}
		s.touch(r.Context(), p)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

type principalKey struct{}

// principal is the request's authenticated token.
func principal(r *http.Request) *gateway.Principal {
	p, _ := r.Context().Value(principalKey{}).(*gateway.Principal)
	return p
}

// authenticate compares the token with every admin token (as SHA-256
// hashes, in constant time), then looks it up among the devices.
func (s *Server) authenticate(ctx context.Context, tok string) (*gateway.Principal, error) {
	sum := sha256.Sum256([]byte(tok))
	match := 0
	for i := range s.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], s.tokens[i][:])
	}
	if match == 1 {
		return &gateway.Principal{Role: storeprint.RoleAdmin, Name: "admin"}, nil
	}
	d, err := s.DeviceService.AuthenticateDevice(ctx, tok)
	if err != nil {
		return nil, err
	}
	return &gateway.Principal{Role: d.Role, DeviceID: d.ID, Name: d.Name, Display: d.Display}, nil
}

// touch stores a device's last use, once a minute at most.
func (s *Server) touch(ctx context.Context, p *gateway.Principal) {
	if p.DeviceID == "" {
		return
	}
	now := s.Now()
	s.touchMu.Lock()
	last, ok := s.touched[p.DeviceID]
	if ok && now.Sub(last) < time.Minute {
		s.touchMu.Unlock()
		return
	}
	s.touched[p.DeviceID] = now
	s.touchMu.Unlock()
	if err := s.DeviceService.TouchDevice(ctx, p.DeviceID, now); err != nil {
		s.log.Warn("record the use of a device", "device_id", p.DeviceID, "err", err)
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}
