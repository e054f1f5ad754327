package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
)

// Device is a POS terminal, tablet or browser paired with the gateway. Its
// token is shown once, when it pairs; the store keeps only its SHA-256.
type Device struct {
	ID          string          `json:"device_id"`
	Name        string          `json:"name"`
	Role        storeprint.Role `json:"role"`
	Display     string          `json:"display,omitempty"` // role display: the screen it is
	TokenSHA256 string          `json:"token_sha256"`
	CreatedAt   time.Time       `json:"created_at"`
	CreatedBy   string          `json:"created_by"`             // who issued the pairing code
	LastUsedAt  *time.Time      `json:"last_used_at,omitempty"` // to the minute
}

// DeviceTokenPrefix starts every device token, so a token found in a log
// or a paste says what it is.
const DeviceTokenPrefix = "spd1."

// MaxDeviceNameLen bounds a device's name, in characters.
const MaxDeviceNameLen = 64

// Principal is who a request's token stands for: an admin token of the
// config, or a paired device.
type Principal struct {
	Role     storeprint.Role
	DeviceID string // empty for a config token
	Name     string
	Display  string // role display: the only display it may see
}

// String names the principal in the audit log: "admin" for a config token,
// "device:<id>" for a device.
func (p *Principal) String() string {
	if p == nil {
		return "anonymous"
	}
	if p.DeviceID == "" {
		return "admin"
	}
	return "device:" + p.DeviceID
}

// HashToken is how a device token is stored and looked up: its SHA-256 in
// hex.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Now is the gateway's wall clock (Options.Now).
func (g *Gateway) Now() time.Time { return g.now() }

// deviceSnapshot is what the audit log, and through it HQ, keeps of a
// device: never its token or hash.
func deviceSnapshot(d *Device) string {
	return snapshot(map[string]any{
		"device_id": d.ID, "name": d.Name, "role": d.Role, "display": d.Display, "created_at": d.CreatedAt,
	})
}

func checkDeviceName(name string) error {
	if strings.TrimSpace(name) == "" {
		return storeprint.Errorf(storeprint.EINVALID, "name is required: what the device is called (\"counter 1\", \"kitchen tablet\")")
	}
	return storeprint.CheckText("name", name, MaxDeviceNameLen)
}

// AddDevice pairs a new device: it stores the device with the hash of a new
// token and audits it in one transaction, and returns the token, which is
// not kept anywhere.
func (g *Gateway) AddDevice(ctx context.Context, role storeprint.Role, name string, a Actor) (*Device, string, error) {
	return g.AddDisplayDevice(ctx, role, name, "", a)
}

// AddDisplayDevice is AddDevice for a device of role display, bound to
// one display.
func (g *Gateway) AddDisplayDevice(ctx context.Context, role storeprint.Role, name, display string, a Actor) (*Device, string, error) {
	if !role.Valid() {
		return nil, "", storeprint.Errorf(storeprint.EINVALID, "role %q is not one of %s", role, storeprint.RoleList())
	}
	if err := g.checkDisplayRole(role, display); err != nil {
		return nil, "", err
	}
	if err := checkDeviceName(name); err != nil {
		return nil, "", err
	}
	if err := a.validate(); err != nil {
		return nil, "", err
	}
	token := DeviceTokenPrefix + randomString(32)
	d := &Device{
		ID: "dev-" + storeprint.RandomHex(8), Name: name, Role: role, Display: display, TokenSHA256: HashToken(token),
		CreatedAt: g.now().UTC(), CreatedBy: a.Operator,
	}
	err := g.store.Update(ctx, func(tx Tx) error {
		if err := tx.PutDevice(d); err != nil {
			return err
		}
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionDevicePair, Operator: a.Operator, Reason: a.Reason, After: deviceSnapshot(d),
		})
	})
	if err != nil {
		return nil, "", err
	}
	return d, token, nil
}

// Devices lists the paired devices, oldest first.
func (g *Gateway) Devices(ctx context.Context) ([]*Device, error) {
	var out []*Device
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		out, err = tx.Devices()
		return err
	})
	return out, err
}

// AuthenticateDevice returns the device a token belongs to, or
// EUNAUTHORIZED. A revoked device's token is gone from the store, so it is
// refused from the moment the revocation is durable.
func (g *Gateway) AuthenticateDevice(ctx context.Context, token string) (*Device, error) {
	if !strings.HasPrefix(token, DeviceTokenPrefix) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid token")
	}
	var d *Device
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		d, err = tx.DeviceByToken(HashToken(token))
		return err
	})
	if isNotFound(err) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid token")
	}
	return d, err
}

// RevokeDevice removes a device and its token, audited. A revoked device is
// ENOTFOUND afterwards.
func (g *Gateway) RevokeDevice(ctx context.Context, deviceID string, a Actor) (*Device, error) {
	if err := storeprint.CheckID("device_id", deviceID); err != nil {
		return nil, err
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	var d *Device
	err := g.store.Update(ctx, func(tx Tx) error {
		var err error
		if d, err = tx.Device(deviceID); err != nil {
			return err
		}
		if err := tx.DeleteDevice(deviceID); err != nil {
			return err
		}
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionDeviceRevoke, Operator: a.Operator, Reason: a.Reason,
			Before: deviceSnapshot(d), After: snapshot(map[string]any{"device_id": d.ID, "revoked_at": g.now().UTC()}),
		})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// TouchDevice records that a device was seen at the given time. It writes
// nothing when the device is gone or was seen later already; the caller
// keeps the writes rare (the HTTP server: once a minute per device).
func (g *Gateway) TouchDevice(ctx context.Context, deviceID string, at time.Time) error {
	return g.store.Update(ctx, func(tx Tx) error {
		d, err := tx.Device(deviceID)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.LastUsedAt != nil && !at.After(*d.LastUsedAt) {
			return nil
		}
		at := at.UTC().Truncate(time.Second)
		d.LastUsedAt = &at
		return tx.PutDevice(d)
	})
}

// AuditPairing records that a pairing code was issued, without the code.
func (g *Gateway) AuditPairing(ctx context.Context, c *PairingCode, a Actor) error {
	if err := a.validate(); err != nil {
		return err
	}
	return g.store.Update(ctx, func(tx Tx) error {
		return tx.AppendAudit(&AuditEntry{
			Action: storeprint.ActionPairingCreate, Operator: a.Operator, Reason: a.Reason,
			After: snapshot(map[string]any{"role": c.Role, "name": c.Name, "display": c.Display, "expires_at": c.ExpiresAt}),
		})
	})
}

func randomString(n int) string {
	return base64.RawURLEncoding.EncodeToString(storeprint.RandomBytes(n))
}

// Device returns a paired device; ENOTFOUND once it is revoked.
func (g *Gateway) Device(ctx context.Context, deviceID string) (*Device, error) {
	var d *Device
	err := g.store.View(ctx, func(tx ReadTx) error {
		var err error
		d, err = tx.Device(deviceID)
		return err
	})
	return d, err
}

// checkDisplayRole checks that a device of role display names a display,
// and that no other role does.
func (g *Gateway) checkDisplayRole(role storeprint.Role, display string) error {
	switch {
	case role == storeprint.RoleDisplay && display == "":
		return storeprint.Errorf(storeprint.EINVALID, "display is required for role display: the id of the screen the device is")
	case role != storeprint.RoleDisplay && display != "":
		return storeprint.Errorf(storeprint.EINVALID, "display is only for role display")
	case display != "" && !g.isDisplay(display):
		return storeprint.Errorf(storeprint.EINVALID, "display %q is not a configured display", display)
	}
	return nil
}

// PairingDisplay checks a pairing request's role and display before a
// code is issued, and returns the display a display device will be: the
// one named, else the one its name names, else the store's only display.
func (g *Gateway) PairingDisplay(role storeprint.Role, display, name string) (string, error) {
	if role == storeprint.RoleDisplay && display == "" {
		switch {
		case g.isDisplay(name):
			display = name
		case len(g.cfg.Displays) == 1:
			display = g.cfg.Displays[0].ID
		}
	}
	return display, g.checkDisplayRole(role, display)
}
