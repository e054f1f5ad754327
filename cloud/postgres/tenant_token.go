package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// FindTenantTokens implements cloud.TenantService.
func (s *TenantService) FindTenantTokens(ctx context.Context, tenantID string) ([]*cloud.TenantTokenInfo, error) {
	if _, err := cloud.RequireAdmin(ctx); err != nil {
		return nil, err
	}
	if err := storeprint.CheckID("tenant_id", tenantID); err != nil {
		return nil, err
	}
	var exists bool
	if err := s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = $1)`, tenantID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("find tenant %s: %w", tenantID, interpret(err))
	}
	if !exists {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "tenant %q not found", tenantID)
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT tenant_id, token_id, created_by, created_at, revoked_at FROM tenant_tokens
		WHERE tenant_id = $1
		ORDER BY created_at, token_id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("find tokens of tenant %s: %w", tenantID, interpret(err))
	}
	out, err := pgx.CollectRows(rows, scanTenantToken)
	if err != nil {
		return nil, fmt.Errorf("find tokens of tenant %s: %w", tenantID, interpret(err))
	}
	if out == nil {
		out = []*cloud.TenantTokenInfo{}
	}
	return out, nil
}

func scanTenantToken(row pgx.CollectableRow) (*cloud.TenantTokenInfo, error) {
	t := &cloud.TenantTokenInfo{}
	return t, row.Scan(&t.TenantID, &t.TokenID, &t.CreatedBy, &t.CreatedAt, &t.RevokedAt)
}

// RevokeTenantToken implements cloud.TenantService. Every request
// authenticates against the table, so the token is refused from the
// commit on, on every node.
func (s *TenantService) RevokeTenantToken(ctx context.Context, tenantID, tokenID string, note cloud.Note) (*cloud.TenantTokenInfo, error) {
	a, err := cloud.RequireAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if err := storeprint.CheckID("tenant_id", tenantID); err != nil {
		return nil, err
	}
	if err := storeprint.CheckID("token_id", tokenID); err != nil {
		return nil, err
	}
	if err := note.Validate(); err != nil {
		return nil, err
	}
	var t *cloud.TenantTokenInfo
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT tenant_id, token_id, created_by, created_at, revoked_at FROM tenant_tokens
			WHERE tenant_id = $1 AND token_id = $2
			FOR UPDATE`, tenantID, tokenID)
		if err != nil {
			return fmt.Errorf("read token: %w", interpret(err))
		}
		t, err = pgx.CollectExactlyOneRow(rows, scanTenantToken)
		if isNoRows(err) {
			return storeprint.Errorf(storeprint.ENOTFOUND, "tenant %q has no token %q", tenantID, tokenID)
		}
		if err != nil {
			return fmt.Errorf("read token: %w", interpret(err))
		}
		if t.RevokedAt != nil {
			return storeprint.Errorf(storeprint.ECONFLICT, "token %q of tenant %q was revoked already at %s", tokenID, tenantID, t.RevokedAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		before := *t
		if err := tx.QueryRow(ctx, `
			UPDATE tenant_tokens SET revoked_at = now()
			WHERE tenant_id = $1 AND token_id = $2
			RETURNING revoked_at`, tenantID, tokenID).Scan(&t.RevokedAt); err != nil {
			return fmt.Errorf("revoke token: %w", interpret(err))
		}
		return audit(ctx, tx, a, note, tenantID, "", storeprint.ActionRevokeTenantToken,
			"tenant/"+tenantID+"/token/"+tokenID, before, t)
	})
	if err != nil {
		return nil, fmt.Errorf("revoke token %s of tenant %s: %w", tokenID, tenantID, err)
	}
	return t, nil
}
