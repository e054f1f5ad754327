package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.StoreService = (*StoreService)(nil)

// StoreService implements cloud.StoreService.
type StoreService struct {
	db  *DB
	now func() time.Time

	// AlertTTL is how long an alert nobody resolved stays current; zero
	// means cloud.DefaultAlertTTL.
	AlertTTL time.Duration
}

// NewStoreService returns a StoreService on db.
func NewStoreService(db *DB) *StoreService { return &StoreService{db: db, now: time.Now} }

func (s *StoreService) alertTTL() time.Duration {
	if s.AlertTTL <= 0 {
		return cloud.DefaultAlertTTL
	}
	return s.AlertTTL
}

// CreateStore implements cloud.StoreService.
func (s *StoreService) CreateStore(ctx context.Context, st *cloud.Store, note cloud.Note) (bool, error) {
	a, err := requireAdmin(ctx, st, note)
	if err != nil {
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
				return storeprint.Errorf(storeprint.ENOTFOUND, "tenant %q not found", st.TenantID)
			}
			if err != nil {
				return fmt.Errorf("read store: %w", interpret(err))
			}
			if got.TenantID != st.TenantID || got.Name != st.Name {
				return storeprint.Errorf(storeprint.ECONFLICT, "store %q already exists with other fields", st.ID)
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

// FindStores implements cloud.StoreService: the page of stores, then
// their gateways, printers and alert counts in one more round trip.
func (s *StoreService) FindStores(ctx context.Context, f cloud.StoreFilter) ([]*cloud.StoreStatus, bool, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	// The primary key's order for the admin, stores_tenant_idx's for a
	// tenant; one row more than the page tells whether more follow.
	var q stmt
	sql := `
		SELECT s.store_id, s.tenant_id, s.name, s.created_at
		FROM stores s
		WHERE s.store_id > ` + q.arg(f.After) + q.tenant(a, "s.tenant_id") + `
		ORDER BY s.store_id
		LIMIT ` + q.arg(f.Limit+1)
	rows, err := s.db.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return nil, false, fmt.Errorf("find stores: %w", interpret(err))
	}
	out := []*cloud.StoreStatus{}
	for rows.Next() {
		st := &cloud.StoreStatus{Gateways: []*cloud.Gateway{}, Printers: []*cloud.Printer{}}
		if err := rows.Scan(&st.ID, &st.TenantID, &st.Name, &st.CreatedAt); err != nil {
			return nil, false, fmt.Errorf("find stores: %w", interpret(err))
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("find stores: %w", interpret(err))
	}
	more := len(out) > f.Limit
	if more {
		out = out[:f.Limit]
	}
	if len(out) == 0 {
		return out, false, nil
	}
	byID := make(map[string]*cloud.StoreStatus, len(out))
	ids := make([]string, 0, len(out))
	for _, st := range out {
		byID[st.ID] = st
		ids = append(ids, st.ID)
	}
	b := &pgx.Batch{}
	queueStoreStatus(b, byID, ids, s.now().Add(-s.alertTTL()))
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, false, fmt.Errorf("find stores: %w", interpret(err))
	}
	return out, more, nil
}

// queueStoreStatus queues the reads of the gateways, printers and current
// alert counts of the stores in byID (ids: its keys), which the caller
// read with the actor's tenant scope. Alerts raised before cutoff have
// expired.
func queueStoreStatus(b *pgx.Batch, byID map[string]*cloud.StoreStatus, ids []string, cutoff time.Time) {
	b.Queue(`
		SELECT g.store_id, g.gateway_id, g.created_at, g.revoked_at,
		       g.online AND g.revoked_at IS NULL AND g.last_seen > now() - $2::interval,
		       g.last_seen, g.version, g.cluster
		FROM gateways g
		WHERE g.store_id = ANY($1)
		ORDER BY g.store_id, g.created_at`, ids, cloud.OnlineWindow).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			g := &cloud.Gateway{}
			if err := rows.Scan(&g.StoreID, &g.ID, &g.CreatedAt, &g.RevokedAt, &g.Online, &g.LastSeen, &g.Version, &g.Cluster); err != nil {
				return err
			}
			st := byID[g.StoreID]
			g.TenantID = st.TenantID
			st.Gateways = append(st.Gateways, g)
			st.Online = st.Online || g.Online
			if g.LastSeen != nil && (st.LastSeen == nil || g.LastSeen.After(*st.LastSeen)) {
				st.LastSeen = g.LastSeen
			}
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT p.store_id, p.printer_id, p.status, p.stations, p.backup, p.failover, p.word, p.updated_at,
		       p.kind, p.open, p.shown, p.stale
		FROM printers p
		WHERE p.store_id = ANY($1)
		ORDER BY p.store_id, p.printer_id`, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			p := &cloud.Printer{}
			var storeID string
			if err := rows.Scan(&storeID, &p.ID, &p.Status, &p.Stations, &p.Backup, &p.Failover, &p.Word, &p.UpdatedAt,
				&p.Kind, &p.Open, &p.Shown, &p.Stale); err != nil {
				return err
			}
			byID[storeID].Printers = append(byID[storeID].Printers, p)
		}
		return rows.Err()
	})
	// A range of alerts_raised_idx per store: the alerts since the cutoff.
	b.Queue(`
		SELECT store_id, count(*) FILTER (WHERE acknowledged_at IS NULL), count(*) FILTER (WHERE acknowledged_at IS NOT NULL)
		FROM alerts
		WHERE store_id = ANY($1) AND raised_at >= $2 AND resolved_at IS NULL
		GROUP BY store_id`, ids, cutoff).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var storeID string
			var open, acked int
			if err := rows.Scan(&storeID, &open, &acked); err != nil {
				return err
			}
			byID[storeID].OpenAlerts, byID[storeID].AcknowledgedAlerts = open, acked
		}
		return rows.Err()
	})
}

const alertColumns = `al.alert_id, al.kind, al.task_no, al.printer_id, al.message, al.raised_at,
	al.acknowledged_at, al.acknowledged_by, al.resolved_at, ` + alertPrinterKindSQL

// alertPrinterKindSQL is the kind of an alert's printer (printer or
// display), empty for an alert about none: a probe of the printers'
// primary key.
const alertPrinterKindSQL = `coalesce((SELECT pk.kind FROM printers pk
	WHERE pk.store_id = al.store_id AND pk.printer_id = al.printer_id), '')`

func (s *StoreService) scanAlert(row pgx.Row, storeID string, now time.Time) (*cloud.Alert, error) {
	al := &cloud.Alert{StoreID: storeID}
	if err := row.Scan(&al.ID, &al.Kind, &al.TaskNo, &al.PrinterID, &al.Message, &al.RaisedAt,
		&al.AcknowledgedAt, &al.AcknowledgedBy, &al.ResolvedAt, &al.PrinterKind); err != nil {
		return nil, interpret(err)
	}
	al.SetState(s.alertTTL(), now)
	return al, nil
}

// FindAlerts implements cloud.StoreService.
func (s *StoreService) FindAlerts(ctx context.Context, storeID string, f cloud.AlertFilter) ([]*cloud.Alert, error) {
	if err := readable(ctx, s.db.pool, storeID, f.Validate); err != nil {
		return nil, err
	}
	now := s.now()
	// Both are ranges of alerts_raised_idx (store_id, raised_at).
	sql := `
		SELECT ` + alertColumns + `
		FROM alerts al
		WHERE al.store_id = $1 AND al.resolved_at IS NULL AND al.raised_at >= $2
		ORDER BY al.raised_at, al.alert_id
		LIMIT $3`
	args := []any{storeID, now.Add(-s.alertTTL()), f.Limit}
	if f.History {
		sql = `
			SELECT ` + alertColumns + `
			FROM alerts al
			WHERE al.store_id = $1
			ORDER BY al.raised_at DESC, al.alert_id DESC
			LIMIT $2`
		args = []any{storeID, f.Limit}
	}
	rows, err := s.db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("find alerts: %w", interpret(err))
	}
	out := []*cloud.Alert{}
	for rows.Next() {
		al, err := s.scanAlert(rows, storeID, now)
		if err != nil {
			return nil, fmt.Errorf("find alerts: %w", err)
		}
		out = append(out, al)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find alerts: %w", interpret(err))
	}
	return out, nil
}

// AcknowledgeAlert implements cloud.StoreService. The dashboard's shared
// answers for the store's scopes go in the same transaction, so the next
// read shows the acknowledgement.
func (s *StoreService) AcknowledgeAlert(ctx context.Context, storeID, alertID string, note cloud.Note) (*cloud.Alert, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := cloud.ValidAlertID(alertID); err != nil {
		return nil, err
	}
	if err := note.Validate(); err != nil {
		return nil, err
	}
	if note.Operator == "" {
		return nil, storeprint.Errorf(storeprint.EINVALID, "operator is required: the person who acknowledges the alert")
	}
	var al *cloud.Alert
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		tenantID, err := storeTenant(ctx, tx, a, storeID)
		if err != nil {
			return err
		}
		now := s.now()
		al, err = s.scanAlert(tx.QueryRow(ctx, `
			SELECT `+alertColumns+` FROM alerts al
			WHERE al.store_id = $1 AND al.alert_id = $2
			FOR UPDATE`, storeID, alertID), storeID, now)
		if storeprint.ErrorCode(err) == storeprint.ENOTFOUND {
			return storeprint.Errorf(storeprint.ENOTFOUND, "alert %q not found at store %s", alertID, storeID)
		}
		if err != nil {
			return fmt.Errorf("read alert: %w", err)
		}
		switch {
		case al.ResolvedAt != nil:
			return storeprint.Errorf(storeprint.ECONFLICT, "alert %q is resolved already: its task moved on", alertID)
		case al.AcknowledgedAt != nil:
			return nil // acknowledged before: nothing changes, nothing to audit
		}
		before := al.State
		if err := tx.QueryRow(ctx, `
			UPDATE alerts SET acknowledged_at = now(), acknowledged_by = $3
			WHERE store_id = $1 AND alert_id = $2
			RETURNING acknowledged_at`, storeID, alertID, note.Operator).Scan(&al.AcknowledgedAt); err != nil {
			return fmt.Errorf("acknowledge alert: %w", interpret(err))
		}
		al.AcknowledgedBy = note.Operator
		al.SetState(s.alertTTL(), now)
		if err := audit(ctx, tx, a, note, tenantID, storeID, storeprint.ActionAlertAck, "alert/"+alertID,
			map[string]any{"state": before}, map[string]any{"state": al.State, "acknowledged_at": al.AcknowledgedAt}); err != nil {
			return err
		}
		return forgetDashboards(ctx, tx, tenantID)
	})
	if err != nil {
		return nil, fmt.Errorf("acknowledge alert %s at store %s: %w", alertID, storeID, err)
	}
	return al, nil
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

// readable checks what a read of one store's records checks, in this
// order: ctx carries an actor (EUNAUTHORIZED), the read's filter is valid
// (validate; EINVALID), and the actor may see the store (ENOTFOUND).
func readable(ctx context.Context, q querier, storeID string, validate func() error) error {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return err
	}
	if err := validate(); err != nil {
		return err
	}
	return visibleStore(ctx, q, a, storeID)
}

func storeTenant(ctx context.Context, q querier, a *cloud.Actor, storeID string) (string, error) {
	var tenantID string
	sq := stmt{args: []any{storeID}}
	sql := `SELECT tenant_id FROM stores WHERE store_id = $1` + sq.tenant(a, "tenant_id")
	err := q.QueryRow(ctx, sql, sq.args...).Scan(&tenantID)
	if isNoRows(err) {
		return "", storeprint.Errorf(storeprint.ENOTFOUND, "store %q not found", storeID)
	}
	if err != nil {
		return "", fmt.Errorf("find store %s: %w", storeID, interpret(err))
	}
	return tenantID, nil
}
