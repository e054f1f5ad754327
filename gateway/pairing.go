package gateway

import (
	"strings"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint"
)

// Pairing rules.
const (
	PairingCodeDigits = 6
	PairingCodeTTL    = 10 * time.Minute
	// PairingMaxWrong is how many wrong codes from one address bar that
	// address from every code that was live while they were tried: a code
	// cannot be guessed by trying more of the million, and the wrong codes
	// of one address end nobody else's pairing.
	PairingMaxWrong = 10
	// pairingMaxAddrs bounds the addresses a code counts wrong tries of;
	// past it the code dies, as every code did after PairingMaxWrong.
	pairingMaxAddrs = 256
	// PairingMaxLive bounds the codes waiting at once.
	PairingMaxLive = 20
)

// PairingCode lets one new device pair, once, within PairingCodeTTL.
type PairingCode struct {
	Code      string          `json:"code"`
	Role      storeprint.Role `json:"role"`
	Name      string          `json:"name,omitempty"`    // the device's name, unless it gives its own
	Display   string          `json:"display,omitempty"` // role display: the screen it is
	ExpiresAt time.Time       `json:"expires_at"`
	CreatedBy string          `json:"-"` // who issued it
	wrong     map[string]int  // wrong codes tried from each address while it was live
}

// Pairing holds the pairing codes waiting to be used. They live in memory
// only: a restart ends them, and a person issues a new one.
type Pairing struct {
	now   func() time.Time
	mu    stdsync.Mutex
	codes map[string]*PairingCode
}

// NewPairing returns an empty set of codes on the clock now.
func NewPairing(now func() time.Time) *Pairing {
	if now == nil {
		now = time.Now
	}
	return &Pairing{now: now, codes: map[string]*PairingCode{}}
}

// MayPair reports whether a token of role by may issue a code for a device
// of role want: an admin any role, staff POS devices only.
func MayPair(by, want storeprint.Role) error {
	if !want.Valid() {
		return storeprint.Errorf(storeprint.EINVALID, "role %q is not one of %s", want, storeprint.RoleList())
	}
	switch {
	case by == storeprint.RoleAdmin:
		return nil
	case by == storeprint.RoleStaff && (want == storeprint.RolePOS || want == storeprint.RoleDisplay):
		return nil
	case by == storeprint.RoleStaff:
		return storeprint.Errorf(storeprint.EFORBIDDEN, "a staff token may pair pos and display devices only; pairing a %s device needs an admin token", want)
	}
	return storeprint.Errorf(storeprint.EFORBIDDEN, "pairing a device needs a staff or admin token")
}

// Create issues a new code for a device of the role. name may be empty:
// the device names itself when it pairs.
func (p *Pairing) Create(role storeprint.Role, name, by string) (*PairingCode, error) {
	return p.CreateFor(role, name, "", by)
}

// CreateFor is Create for a device of role display, bound to the display
// (checked by Gateway.CheckPairing).
func (p *Pairing) CreateFor(role storeprint.Role, name, display, by string) (*PairingCode, error) {
	if !role.Valid() {
		return nil, storeprint.Errorf(storeprint.EINVALID, "role %q is not one of %s", role, storeprint.RoleList())
	}
	if name != "" {
		if err := checkDeviceName(name); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.expire(now)
	if len(p.codes) >= PairingMaxLive {
		return nil, storeprint.Errorf(storeprint.ECONFLICT, "%d pairing codes are waiting already; use one or wait until they expire", len(p.codes))
	}
	c := &PairingCode{Role: role, Name: name, Display: display, ExpiresAt: now.Add(PairingCodeTTL).UTC(), CreatedBy: by}
	for {
		c.Code = storeprint.RandomDigits(PairingCodeDigits)
		if p.codes[c.Code] == nil {
			break
		}
	}
	p.codes[c.Code] = c
	out := *c
	return &out, nil
}

// Redeem uses a code up for a device at address from. A wrong, used or
// expired code is EUNAUTHORIZED and counts against from on every live
// code; after PairingMaxWrong wrong tries from one address, that address
// cannot use the codes that were live meanwhile (EUNAUTHORIZED, the same
// answer), and they still pair devices elsewhere.
func (p *Pairing) Redeem(code, from string) (*PairingCode, error) {
	code = strings.TrimSpace(code)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(p.now())
	c := p.codes[code]
	if c == nil || len(code) != PairingCodeDigits || c.wrong[from] >= PairingMaxWrong {
		for k, live := range p.codes {
			if live.wrong == nil {
				live.wrong = map[string]int{}
			}
			if _, ok := live.wrong[from]; !ok && len(live.wrong) >= pairingMaxAddrs {
				delete(p.codes, k)
				continue
			}
			live.wrong[from]++
		}
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "wrong, used or expired pairing code")
	}
	delete(p.codes, code)
	return c, nil
}

// Live returns how many codes wait to be used.
func (p *Pairing) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(p.now())
	return len(p.codes)
}

func (p *Pairing) expire(now time.Time) {
	for k, c := range p.codes {
		if !now.Before(c.ExpiresAt) {
			delete(p.codes, k)
		}
	}
}
