package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.FleetService = (*FleetService)(nil)

// FleetService counts the chain for monitoring.
type FleetService struct {
	db *DB
	// AlertTTL is how long an alert nobody resolved needs a person, as on
	// the dashboard; zero means cloud.DefaultAlertTTL.
	AlertTTL time.Duration
}

// NewFleetService returns a FleetService on db.
func NewFleetService(db *DB) *FleetService { return &FleetService{db: db} }

// Fleet implements cloud.FleetService in one round trip: the stores with
// a live gateway credential and those of them online (grouped by hash:
// count(DISTINCT) would sort every store id), then the alerts that need a
// person by kind (a range of alerts_unacked_raised_idx).
func (s *FleetService) Fleet(ctx context.Context) (*cloud.Fleet, error) {
	ttl := s.AlertTTL
	if ttl <= 0 {
		ttl = cloud.DefaultAlertTTL
	}
	f := &cloud.Fleet{AlertsOpen: map[string]int64{}}
	for _, k := range cloud.AlertKinds {
		f.AlertsOpen[k] = 0
	}
	b := &pgx.Batch{}
	b.Queue(`
		SELECT now(), count(*), count(*) FILTER (WHERE s.online)
		FROM (
			SELECT g.store_id, bool_or(g.online AND g.last_seen > now() - $1::interval) AS online
			FROM gateways g WHERE g.revoked_at IS NULL
			GROUP BY g.store_id
		) s`, cloud.OnlineWindow).QueryRow(func(row pgx.Row) error {
		return row.Scan(&f.At, &f.Stores, &f.Online)
	})
	b.Queue(`
		SELECT al.kind, count(*), min(al.raised_at) FROM alerts al
		WHERE `+needsPersonSQL("now() - $1::interval")+`
		GROUP BY al.kind`, ttl).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var kind string
			var n int64
			var oldest time.Time
			if err := rows.Scan(&kind, &n, &oldest); err != nil {
				return err
			}
			f.AlertsOpen[kind] = n
			if f.OldestAlert.IsZero() || oldest.Before(f.OldestAlert) {
				f.OldestAlert = oldest
			}
		}
		return rows.Err()
	})
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("count the fleet: %w", interpret(err))
	}
	return f, nil
}
