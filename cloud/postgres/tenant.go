package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.TenantService = (*TenantService)(nil)

// TenantService implements cloud.TenantService.
type TenantService struct {
	db *DB
}

// NewTenantService returns a TenantService on db.
func NewTenantService(db *DB) *TenantService { return &TenantService{db: db} }

// CreateTenant implements cloud.TenantService.
func (s *TenantService) CreateTenant(ctx context.Context, t *cloud.Tenant, note cloud.Note) (bool, error) {
	a, err := requireAdmin(ctx, t, note)
	if err != nil {
		return false, err
	}
	var created bool
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO tenants (tenant_id, name) VALUES ($1, $2)
			ON CONFLICT (tenant_id) DO NOTHING
			RETURNING created_at`, t.ID, t.Name).Scan(&t.CreatedAt)
		if isNoRows(err) {
			var name string
			if err := tx.QueryRow(ctx, `SELECT name, created_at FROM tenants WHERE tenant_id = $1`, t.ID).Scan(&name, &t.CreatedAt); err != nil {
				return fmt.Errorf("read tenant: %w", interpret(err))
			}
			if name != t.Name {
				return storeprint.Errorf(storeprint.ECONFLICT, "tenant %q already exists with another name", t.ID)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("insert tenant: %w", interpret(err))
		}
		created = true
		return audit(ctx, tx, a, note, t.ID, "", storeprint.ActionCreateTenant, "tenant/"+t.ID, nil, t)
	})
	if err != nil {
		return false, fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	return created, nil
}

// CreateTenantToken implements cloud.TenantService.
func (s *TenantService) CreateTenantToken(ctx context.Context, tenantID string, note cloud.Note) (*cloud.TenantToken, error) {
	a, err := requireAdmin(ctx, note)
	if err != nil {
		return nil, err
	}
	token, tokenID := cloud.NewTenantToken(tenantID)
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			INSERT INTO tenant_tokens (tenant_id, token_id, token_hash, created_by)
			SELECT tenant_id, $2, $3, $4 FROM tenants WHERE tenant_id = $1`,
			tenantID, tokenID, cloud.HashToken(token), a.String())
		if err != nil {
			return fmt.Errorf("insert token: %w", interpret(err))
		}
		if tag.RowsAffected() == 0 {
			return storeprint.Errorf(storeprint.ENOTFOUND, "tenant %q not found", tenantID)
		}
		// The audit event names the token by its id, never its secret.
		return audit(ctx, tx, a, note, tenantID, "", storeprint.ActionCreateTenantToken,
			"tenant/"+tenantID+"/token/"+tokenID, nil, map[string]string{"tenant_id": tenantID, "token_id": tokenID})
	})
	if err != nil {
		return nil, fmt.Errorf("create token for tenant %s: %w", tenantID, err)
	}
	return &cloud.TenantToken{TenantID: tenantID, TokenID: tokenID, Token: token}, nil
}

// AuthenticateTenant implements cloud.TenantService.
func (s *TenantService) AuthenticateTenant(ctx context.Context, token string) (*cloud.Actor, error) {
	tenantID, ok := cloud.ParseTenantToken(token)
	if !ok {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid token")
	}
	// The row is found by the hash of a 256-bit secret: comparing in the
	// index leaks nothing useful about the secret.
	var tokenID string
	err := s.db.pool.QueryRow(ctx, `
		SELECT token_id FROM tenant_tokens
		WHERE tenant_id = $1 AND token_hash = $2 AND revoked_at IS NULL`,
		tenantID, cloud.HashToken(token)).Scan(&tokenID)
	if isNoRows(err) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid token")
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate tenant token: %w", interpret(err))
	}
	return &cloud.Actor{Kind: cloud.ActorTenant, TenantID: tenantID, TokenID: tokenID}, nil
}
