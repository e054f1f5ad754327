package postgres

import (
	"context"
	"fmt"

	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.AuditService = (*AuditService)(nil)

// AuditService implements cloud.AuditService. The adapter only ever
// inserts audit events; the database refuses updates and deletes.
type AuditService struct {
	db *DB
}

// NewAuditService returns an AuditService on db.
func NewAuditService(db *DB) *AuditService { return &AuditService{db: db} }

// FindAuditEvents implements cloud.AuditService.
func (s *AuditService) FindAuditEvents(ctx context.Context, f cloud.AuditFilter) ([]*cloud.AuditEvent, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if f.Limit < 0 || f.Limit > cloud.MaxAuditLimit {
		return nil, cloud.Errorf(cloud.EINVALID, "limit must be between 1 and %d", cloud.MaxAuditLimit)
	}
	if f.Limit == 0 {
		f.Limit = cloud.DefaultAuditLimit
	}
	tenant := tenantScope(a)
	if tenant == nil && f.TenantID != "" {
		tenant = &f.TenantID
	} else if tenant != nil && f.TenantID != "" && f.TenantID != *tenant {
		return []*cloud.AuditEvent{}, nil // another tenant's trail: nothing to see
	}
	var store *string
	if f.StoreID != "" {
		store = &f.StoreID
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT tenant_id, audit_id, coalesce(store_id, ''), source, actor, operator, action, resource, reason,
		       before, after, at
		FROM audit_events
		WHERE ($1::text IS NULL OR tenant_id = $1) AND ($2::text IS NULL OR store_id = $2)
		ORDER BY at DESC, audit_id
		LIMIT $3`, tenant, store, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("find audit events: %w", interpret(err))
	}
	out := []*cloud.AuditEvent{}
	for rows.Next() {
		e := &cloud.AuditEvent{}
		var before, after []byte
		if err := rows.Scan(&e.TenantID, &e.ID, &e.StoreID, &e.Source, &e.Actor, &e.Operator, &e.Action,
			&e.Resource, &e.Reason, &before, &after, &e.At); err != nil {
			return nil, fmt.Errorf("find audit events: %w", interpret(err))
		}
		e.Before, e.After = rawJSON(before), rawJSON(after)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find audit events: %w", interpret(err))
	}
	return out, nil
}

// rawJSON turns a NULL jsonb into JSON null.
func rawJSON(b []byte) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}
