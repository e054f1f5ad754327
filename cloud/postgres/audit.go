package postgres

import (
	"context"
	"fmt"

	"github.com/storeprint/storeprint"
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
		return nil, storeprint.Errorf(storeprint.EINVALID, "limit must be between 1 and %d", cloud.MaxAuditLimit)
	}
	if f.Limit == 0 {
		f.Limit = cloud.DefaultAuditLimit
	}
	// One statement per filter, each a backward range of an index:
	// audit_events_at_idx for every tenant, audit_events_tenant_at_idx for
	// one, audit_events_store_idx for a store (whose tenant the store row
	// names when the admin asks without one).
	var q stmt
	var where string
	tenant, scoped := a.TenantScope()
	switch {
	case scoped && f.TenantID != "" && f.TenantID != tenant:
		return []*cloud.AuditEvent{}, nil // another tenant's trail: nothing to see
	case !scoped && f.TenantID != "":
		tenant, scoped = f.TenantID, true
	}
	switch {
	case f.StoreID != "" && scoped:
		where = "WHERE tenant_id = " + q.arg(tenant) + " AND store_id = " + q.arg(f.StoreID)
	case f.StoreID != "":
		store := q.arg(f.StoreID)
		where = "WHERE tenant_id = (SELECT tenant_id FROM stores WHERE store_id = " + store + ") AND store_id = " + store
	case scoped:
		where = "WHERE tenant_id = " + q.arg(tenant)
	}
	sql := `
		SELECT tenant_id, audit_id, coalesce(store_id, ''), source, actor, operator, action, resource, reason,
		       before, after, at
		FROM audit_events ` + where + `
		ORDER BY at DESC, audit_id DESC
		LIMIT ` + q.arg(f.Limit)
	rows, err := s.db.pool.Query(ctx, sql, q.args...)
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
