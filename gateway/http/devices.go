package http

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/authlimit"
)

// deviceView is a device as the API shows it: never its token or hash.
type deviceView struct {
	ID         string          `json:"device_id"`
	Name       string          `json:"name"`
	Role       storeprint.Role `json:"role"`
	Display    string          `json:"display,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	CreatedBy  string          `json:"created_by"`
	LastUsedAt *time.Time      `json:"last_used_at"`
}

func viewDevice(d *gateway.Device) deviceView {
	return deviceView{ID: d.ID, Name: d.Name, Role: d.Role, Display: d.Display, CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy, LastUsedAt: d.LastUsedAt}
}

// GET /v1/me: who the token is, what it may do, and how to trust the
// gateway.
func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"role": p.Role, "device_id": p.DeviceID, "name": p.Name, "store_id": s.Config.StoreID,
		"tls_fingerprint": s.tlsPrint,
	})
	return nil
}

// operator is the person of an action, or else the principal.
func operator(r *http.Request, a gateway.Actor) gateway.Actor {
	if strings.TrimSpace(a.Operator) == "" {
		a.Operator = principal(r).String()
	}
	return a
}

// POST /v1/pairing {"role","name","operator","reason"} → 201 {"code",
// "expires_at",...}: a code a new device pairs with, once, within 10
// minutes, and a QR code of the gateway's URL with it.
func (s *Server) createPairing(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Role    storeprint.Role `json:"role"`
		Name    string          `json:"name"`
		Display string          `json:"display"` // role display: the screen the device is
		gateway.Actor
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if body.Role == "" {
		return storeprint.Errorf(storeprint.EINVALID, "role is required (%s)", storeprint.RoleList())
	}
	p := principal(r)
	if err := gateway.MayPair(p.Role, body.Role); err != nil {
		return err
	}
	display, err := s.DeviceService.PairingDisplay(body.Role, body.Display, body.Name)
	if err != nil {
		return err
	}
	body.Display = display
	a := operator(r, body.Actor)
	c, err := s.pairing.CreateFor(body.Role, body.Name, body.Display, a.Operator)
	if err != nil {
		return err
	}
	if err := s.DeviceService.AuditPairing(r.Context(), c, a); err != nil {
		return err
	}
	scheme := "http"
	if s.tlsConfig != nil {
		scheme = "https"
	}
	// The address the person's own browser reached the gateway at: the one
	// the new device can reach it at too.
	url := scheme + "://" + r.Host + "/?pair=" + c.Code
	if c.Display != "" {
		url = scheme + "://" + r.Host + "/kds/" + c.Display + "?pair=" + c.Code
	}
	png, err := qrcode.Encode(url, qrcode.Medium, 256)
	if err != nil {
		return fmt.Errorf("make QR code: %w", err)
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"code": c.Code, "role": c.Role, "name": c.Name, "display": c.Display, "expires_at": c.ExpiresAt, "url": url,
		"qr_png":          "data:image/png;base64," + base64.StdEncoding.EncodeToString(png),
		"tls_fingerprint": s.tlsPrint,
	})
	return nil
}

// POST /v1/pair {"code","name"}, without a token → 201 {"device_id","role",
// "name","token"}: the token is shown this once. Wrong codes are limited
// per client address.
func (s *Server) pair(w http.ResponseWriter, r *http.Request) error {
	addr := authlimit.Addr(r)
	if d := s.badCodes.Wait(addr); d > 0 {
		w.Header().Set("Retry-After", authlimit.RetryAfter(d))
		return storeprint.Errorf(storeprint.ETOOMANY, "too many wrong pairing codes from %s; try again in %ss", addr, authlimit.RetryAfter(d))
	}
	// No text/plain, form or other body a page of another origin can
	// send without asking first: a pairing code comes as JSON only.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return storeprint.Errorf(storeprint.EINVALID, "POST /v1/pair takes Content-Type: application/json")
	}
	var body struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if body.Code == "" {
		return storeprint.Errorf(storeprint.EINVALID, "code is required: the six digits shown on the LAN page")
	}
	if body.Name != "" {
		if err := storeprint.CheckText("name", body.Name, gateway.MaxDeviceNameLen); err != nil {
			return err
		}
	}
	c, err := s.pairing.Redeem(body.Code, addr)
	if err != nil {
		limited := s.badCodes.Fail(addr)
		s.log.Warn("wrong pairing code", "addr", addr, "rate_limited", limited)
		return err
	}
	name := strings.TrimSpace(body.Name)
	if name == "" {
		name = c.Name
	}
	if name == "" {
		name = string(c.Role) + " device"
	}
	d, token, err := s.DeviceService.AddDisplayDevice(r.Context(), c.Role, name, c.Display, gateway.Actor{Operator: c.CreatedBy, Reason: "paired from " + addr})
	if err != nil {
		return err
	}
	s.log.Info("device paired", "device_id", d.ID, "role", d.Role, "addr", addr)
	writeJSON(w, http.StatusCreated, map[string]any{
		"device_id": d.ID, "role": d.Role, "name": d.Name, "display": d.Display, "token": token, "tls_fingerprint": s.tlsPrint,
	})
	return nil
}

// GET /v1/devices
func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.DeviceService.Devices(r.Context())
	if err != nil {
		return err
	}
	out := make([]deviceView, 0, len(ds))
	for _, d := range ds {
		out = append(out, viewDevice(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// DELETE /v1/devices/{device_id} with an optional {"operator","reason"}:
// the device's token is refused from the answer on.
func (s *Server) revokeDevice(w http.ResponseWriter, r *http.Request) error {
	var a gateway.Actor
	if err := decode(w, r, &a, true); err != nil {
		return err
	}
	d, err := s.DeviceService.RevokeDevice(r.Context(), r.PathValue("device_id"), operator(r, a))
	if err != nil {
		return err
	}
	s.log.Info("device revoked", "device_id", d.ID, "by", principal(r).String())
	writeJSON(w, http.StatusOK, viewDevice(d))
	return nil
}
