package cloud

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

// MaxNameLen bounds tenant and store names, in characters.
const MaxNameLen = 200

// Tenant is one chain: its stores, tokens and audit trail.
type Tenant struct {
	ID        string    `json:"tenant_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks the tenant's fields.
func (t *Tenant) Validate() error {
	if err := validID("tenant_id", t.ID); err != nil {
		return err
	}
	return validName(t.Name)
}

// TenantToken is a tenant's API credential. Token is the secret, shown once
// when the token is created and never stored.
type TenantToken struct {
	TenantID string `json:"tenant_id"`
	TokenID  string `json:"token_id"`
	Token    string `json:"token"`
}

// TenantTokenInfo is a tenant token as HQ lists it: never its secret.
type TenantTokenInfo struct {
	TenantID  string     `json:"tenant_id"`
	TokenID   string     `json:"token_id"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// Note is what a person says about an admin action; it goes into the
// action's audit event.
type Note struct {
	Reason   string `json:"reason,omitempty"`   // why
	Operator string `json:"operator,omitempty"` // the person, when the caller names one
}

// Limits on a note.
const (
	MaxReasonLen   = 500
	MaxOperatorLen = 100
)

// Validate checks the note's length and characters.
func (n Note) Validate() error {
	if err := checkText("reason", n.Reason, MaxReasonLen); err != nil {
		return err
	}
	return checkText("operator", n.Operator, MaxOperatorLen)
}

// TenantService manages tenants and their tokens. Admin only, except
// AuthenticateTenant.
type TenantService interface {
	// CreateTenant creates a tenant. The same tenant again (same id and
	// name) changes nothing and reports created false; the same id with
	// another name is ECONFLICT.
	CreateTenant(ctx context.Context, t *Tenant, note Note) (created bool, err error)

	// CreateTenantToken issues a new token for the tenant; only its hash is
	// kept.
	CreateTenantToken(ctx context.Context, tenantID string, note Note) (*TenantToken, error)

	// FindTenantTokens lists a tenant's tokens, revoked ones included,
	// oldest first.
	FindTenantTokens(ctx context.Context, tenantID string) ([]*TenantTokenInfo, error)

	// RevokeTenantToken revokes a token at once, audited; it is refused
	// from the commit on. Revoking a revoked token is ECONFLICT.
	RevokeTenantToken(ctx context.Context, tenantID, tokenID string, note Note) (*TenantTokenInfo, error)

	// AuthenticateTenant returns the actor of a tenant token, or
	// EUNAUTHORIZED.
	AuthenticateTenant(ctx context.Context, token string) (*Actor, error)
}

func validID(field, s string) error {
	if s == "" {
		return storeprint.Errorf(storeprint.EINVALID, "%s is required", field)
	}
	if !storeprint.ValidID(s) {
		return storeprint.Errorf(storeprint.EINVALID, "%s %q must be 1-64 characters of letters, digits, '-', '_' or '.', and not \".\" or \"..\"", field, s)
	}
	return nil
}

func validName(s string) error {
	if s == "" {
		return storeprint.Errorf(storeprint.EINVALID, "name is required")
	}
	return checkText("name", s, MaxNameLen)
}

func checkText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return storeprint.Errorf(storeprint.EINVALID, "%s is not valid UTF-8", field)
	}
	if utf8.RuneCountInString(s) > max {
		return storeprint.Errorf(storeprint.EINVALID, "%s is longer than %d characters", field, max)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return storeprint.Errorf(storeprint.EINVALID, "%s contains a control character", field)
		}
		if storeprint.IsBidiControl(r) {
			return storeprint.Errorf(storeprint.EINVALID, "%s contains the bidirectional control character U+%04X, which would reorder what people read", field, r)
		}
	}
	return nil
}
