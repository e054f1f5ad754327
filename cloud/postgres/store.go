package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.StoreService = (*StoreService)(nil)

// StoreService implements cloud.StoreService.
type StoreService struct {
	db *DB
}

// NewStoreService returns a StoreService on db.
func NewStoreService(db *DB) *StoreService { return &StoreService{db: db} }

// CreateStore implements cloud.StoreService.
func (s *StoreService) CreateStore(ctx context.Context, st *cloud.Store, note cloud.Note) (bool, error) {
	a, err := cloud.RequireAdmin(ctx)
	if err != nil {
		return false, err
	}
	if err := st.Validate(); err != nil {
		return false, err
	}
	if err := note.Validate(); err != nil {
		return false, err
	}
	var created bool
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO stores (store_id, tenant_id, name)
			SELECT $1, tenant_id, $3 FROM tenants WHERE tenant_id = $2
			ON CONFLICT (store_id) DO NOTHING
			RETURNING created_at`, st.ID, st.TenantID, st.Name).Scan(&st.CreatedAt)
		if isNoRows(err) {
			// Either the store exists or the tenant does not.
			var got cloud.Store
			err := tx.QueryRow(ctx, `SELECT tenant_id, name, created_at FROM stores WHERE store_id = $1`, st.ID).
				Scan(&got.TenantID, &got.Name, &got.CreatedAt)
			if isNoRows(err) {
				return cloud.Errorf(cloud.ENOTFOUND, "tenant %q not found", st.TenantID)
			}
			if err != nil {
				return fmt.Errorf("read store: %w", interpret(err))
			}
			if got.TenantID != st.TenantID || got.Name != st.Name {
				return cloud.Errorf(cloud.ECONFLICT, "store %q already exists with other fields", st.ID)
			}
			st.CreatedAt = got.CreatedAt
			return nil
		}
		if err != nil {
			return fmt.Errorf("insert store: %w", interpret(err))
		}
		created = true
		if _, err := tx.Exec(ctx, `INSERT INTO downstream_cursors (store_id) VALUES ($1)`, st.ID); err != nil {
			return fmt.Errorf("insert downstream cursor: %w", interpret(err))
		}
		return audit(ctx, tx, a, note, st.TenantID, st.ID, storeprint.ActionCreateStore, "store/"+st.ID, nil, st)
	})
	if err != nil {
		return false, fmt.Errorf("create store %s: %w", st.ID, err)
	}
	return created, nil
}

// FindStores implements cloud.StoreService. Four queries in one round trip.
func (s *StoreService) FindStores(ctx context.Context) ([]*cloud.StoreStatus, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	scope := tenantScope(a)
	b := &pgx.Batch{}
	b.Queue(`
		SELECT s.store_id, s.tenant_id, s.name, s.created_at
		FROM stores s
		WHERE ($1::text IS NULL OR s.tenant_id = $1)
		ORDER BY s.tenant_id, s.store_id`, scope)
	b.Queue(`
		SELECT g.store_id, g.gateway_id, g.created_at, g.revoked_at,
		       g.online AND g.revoked_at IS NULL AND g.last_seen > now() - $2::interval,
		       g.last_seen, g.version
		FROM gateways g JOIN stores s ON s.store_id = g.store_id
		WHERE ($1::text IS NULL OR s.tenant_id = $1)
		ORDER BY g.store_id, g.created_at`, scope, cloud.OnlineWindow)
	b.Queue(`
		SELECT p.store_id, p.printer_id, p.status, p.stations, p.backup, p.failover, p.updated_at
		FROM printers p JOIN stores s ON s.store_id = p.store_id
		WHERE ($1::text IS NULL OR s.tenant_id = $1)
		ORDER BY p.store_id, p.printer_id`, scope)
	b.Queue(`
		SELECT a.store_id, count(*)
		FROM alerts a JOIN stores s ON s.store_id = a.store_id
		WHERE a.resolved_at IS NULL AND ($1::text IS NULL OR s.tenant_id = $1)
		GROUP BY a.store_id`, scope)
	br := s.db.pool.SendBatch(ctx, b)
	defer br.Close()

	var out []*cloud.StoreStatus
	byID := map[string]*cloud.StoreStatus{}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("find stores: %w", interpret(err))
	}
	for rows.Next() {
		st := &cloud.StoreStatus{Gateways: []*cloud.Gateway{}, Printers: []*cloud.Printer{}}
		if err := rows.Scan(&st.ID, &st.TenantID, &st.Name, &st.CreatedAt); err != nil {
			return nil, fmt.Errorf("find stores: %w", interpret(err))
		}
		out = append(out, st)
		byID[st.ID] = st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find stores: %w", interpret(err))
	}

	rows, err = br.Query()
	if err != nil {
		return nil, fmt.Errorf("find gateways: %w", interpret(err))
	}
	for rows.Next() {
		g := &cloud.Gateway{}
		if err := rows.Scan(&g.StoreID, &g.ID, &g.CreatedAt, &g.RevokedAt, &g.Online, &g.LastSeen, &g.Version); err != nil {
			return nil, fmt.Errorf("find gateways: %w", interpret(err))
		}
		st := byID[g.StoreID]
		if st == nil {
			continue // a store created between the two reads
		}
		g.TenantID = st.TenantID
		st.Gateways = append(st.Gateways, g)
		st.Online = st.Online || g.Online
		if g.LastSeen != nil && (st.LastSeen == nil || g.LastSeen.After(*st.LastSeen)) {
			st.LastSeen = g.LastSeen
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find gateways: %w", interpret(err))
	}

	rows, err = br.Query()
	if err != nil {
		return nil, fmt.Errorf("find printers: %w", interpret(err))
	}
	for rows.Next() {
		p := &cloud.Printer{}
		var storeID string
		if err := rows.Scan(&storeID, &p.ID, &p.Status, &p.Stations, &p.Backup, &p.Failover, &p.UpdatedAt); err != nil {
			return nil, fmt.Errorf("find printers: %w", interpret(err))
		}
		if st := byID[storeID]; st != nil {
			st.Printers = append(st.Printers, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find printers: %w", interpret(err))
	}

	rows, err = br.Query()
	if err != nil {
		return nil, fmt.Errorf("count alerts: %w", interpret(err))
	}
	for rows.Next() {
		var storeID string
		var n int
		if err := rows.Scan(&storeID, &n); err != nil {
			return nil, fmt.Errorf("count alerts: %w", interpret(err))
		}
		if st := byID[storeID]; st != nil {
			st.OpenAlerts = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count alerts: %w", interpret(err))
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("find stores: %w", interpret(err))
	}
	if out == nil {
		out = []*cloud.StoreStatus{}
	}
	return out, nil
}

// FindAlerts implements cloud.StoreService.
func (s *StoreService) FindAlerts(ctx context.Context, storeID string) ([]*cloud.Alert, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := visibleStore(ctx, s.db.pool, a, storeID); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT al.alert_id, al.kind, al.task_no, al.printer_id, al.message, al.raised_at, al.resolved_at
		FROM alerts al JOIN stores s ON s.store_id = al.store_id
		WHERE al.store_id = $1 AND al.resolved_at IS NULL AND ($2::text IS NULL OR s.tenant_id = $2)
		ORDER BY al.raised_at, al.alert_id`, storeID, tenantScope(a))
	if err != nil {
		return nil, fmt.Errorf("find alerts: %w", interpret(err))
	}
	out := []*cloud.Alert{}
	for rows.Next() {
		al := &cloud.Alert{StoreID: storeID}
		if err := rows.Scan(&al.ID, &al.Kind, &al.TaskNo, &al.PrinterID, &al.Message, &al.RaisedAt, &al.ResolvedAt); err != nil {
			return nil, fmt.Errorf("find alerts: %w", interpret(err))
		}
		out = append(out, al)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find alerts: %w", interpret(err))
	}
	return out, nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// visibleStore returns ENOTFOUND unless the store exists and the actor may
// see it, and the store's tenant.
func visibleStore(ctx context.Context, q querier, a *cloud.Actor, storeID string) error {
	_, err := storeTenant(ctx, q, a, storeID)
	return err
}

func storeTenant(ctx context.Context, q querier, a *cloud.Actor, storeID string) (string, error) {
	var tenantID string
	err := q.QueryRow(ctx, `
		SELECT tenant_id FROM stores
		WHERE store_id = $1 AND ($2::text IS NULL OR tenant_id = $2)`, storeID, tenantScope(a)).Scan(&tenantID)
	if isNoRows(err) {
		return "", cloud.Errorf(cloud.ENOTFOUND, "store %q not found", storeID)
	}
	if err != nil {
		return "", fmt.Errorf("find store %s: %w", storeID, interpret(err))
	}
	return tenantID, nil
}
