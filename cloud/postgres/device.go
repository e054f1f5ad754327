package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.DeviceService = (*DeviceService)(nil)

// DeviceService implements cloud.DeviceService from the store's audit
// trail: the gateway audits every pairing and revocation, and the sync
// link replays them; no table of their own.
type DeviceService struct {
	db *DB
}

// NewDeviceService returns a DeviceService on db.
func NewDeviceService(db *DB) *DeviceService { return &DeviceService{db: db} }

// FindDevices implements cloud.DeviceService.
func (s *DeviceService) FindDevices(ctx context.Context, storeID string) ([]*cloud.Device, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := storeprint.CheckID("store_id", storeID); err != nil {
		return nil, err
	}
	tenantID, err := storeTenant(ctx, s.db.pool, a, storeID)
	if err != nil {
		return nil, err
	}
	return storeDevices(ctx, s.db.pool, tenantID, storeID)
}

// rowsQuerier is a pool or a transaction.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// storeDevices folds the store's device audit events, oldest first, into
// its devices.
func storeDevices(ctx context.Context, q rowsQuerier, tenantID, storeID string) ([]*cloud.Device, error) {
	rows, err := q.Query(ctx, `
		SELECT action, coalesce(before, 'null'::jsonb), coalesce(after, 'null'::jsonb), at FROM audit_events
		WHERE tenant_id = $1 AND store_id = $2 AND source = 'gateway' AND action = ANY($3)
		ORDER BY at, audit_id`, tenantID, storeID, []string{string(storeprint.ActionDevicePair), string(storeprint.ActionDeviceRevoke)})
	if err != nil {
		return nil, fmt.Errorf("find devices of store %s: %w", storeID, interpret(err))
	}
	defer rows.Close()
	var out []*cloud.Device
	byID := map[string]*cloud.Device{}
	for rows.Next() {
		var (
			action        string
			before, after []byte
			at            time.Time
		)
		if err := rows.Scan(&action, &before, &after, &at); err != nil {
			return nil, fmt.Errorf("find devices of store %s: %w", storeID, interpret(err))
		}
		var d struct {
			ID        string          `json:"device_id"`
			Name      string          `json:"name"`
			Role      storeprint.Role `json:"role"`
			CreatedAt time.Time       `json:"created_at"`
			RevokedAt *time.Time      `json:"revoked_at"`
		}
		switch storeprint.AuditAction(action) {
		case storeprint.ActionDevicePair:
			if json.Unmarshal(after, &d) != nil || d.ID == "" || byID[d.ID] != nil {
				continue // not a device the gateway described: nothing to show
			}
			dev := &cloud.Device{StoreID: storeID, ID: d.ID, Name: d.Name, Role: d.Role, CreatedAt: d.CreatedAt}
			if dev.CreatedAt.IsZero() {
				dev.CreatedAt = at
			}
			byID[d.ID] = dev
			out = append(out, dev)
		case storeprint.ActionDeviceRevoke:
			if json.Unmarshal(before, &d) != nil || byID[d.ID] == nil {
				continue
			}
			_ = json.Unmarshal(after, &d) // revoked_at, when the gateway wrote it
			rev := at
			if d.RevokedAt != nil {
				rev = *d.RevokedAt
			}
			byID[d.ID].RevokedAt = &rev
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find devices of store %s: %w", storeID, interpret(err))
	}
	if out == nil {
		out = []*cloud.Device{}
	}
	return out, nil
}
