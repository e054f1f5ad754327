package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.LinkService = (*LinkService)(nil)

// LinkService implements cloud.LinkService.
type LinkService struct {
	db *DB
}

// NewLinkService returns a LinkService on db.
func NewLinkService(db *DB) *LinkService { return &LinkService{db: db} }

// FindLink implements cloud.LinkService, in one round trip after the
// store's visibility check.
func (s *LinkService) FindLink(ctx context.Context, storeID string) (*cloud.StoreLink, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := visibleStore(ctx, s.db.pool, a, storeID); err != nil {
		return nil, err
	}
	l := &cloud.StoreLink{StoreID: storeID, Incarnations: []*cloud.Incarnation{}, Events: []*cloud.LinkEvent{}, DeadLetters: []*cloud.DeadLetter{}}
	b := &pgx.Batch{}
	b.Queue(`
		SELECT c.gateway_id, c.incarnation, c.seq - c.seq_offset, c.rank, g.revoked_at IS NOT NULL, c.created_at, c.updated_at
		FROM gateway_cursors c JOIN gateways g ON g.store_id = c.store_id AND g.gateway_id = c.gateway_id
		WHERE c.store_id = $1 AND NOT (c.incarnation = '' AND c.seq = c.seq_offset) -- the unused first cursor of a gateway
		ORDER BY c.rank DESC, c.created_at DESC`, storeID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			i := &cloud.Incarnation{}
			if err := rows.Scan(&i.GatewayID, &i.Incarnation, &i.Cursor, &i.Rank, &i.Revoked, &i.CreatedAt, &i.UpdatedAt); err != nil {
				return err
			}
			l.Incarnations = append(l.Incarnations, i)
		}
		return rows.Err()
	})
	b.Queue(linkEventsSQL+` WHERE e.store_id = $1 ORDER BY e.at DESC, e.event_id LIMIT $2`, storeID, cloud.MaxLinkList).
		Query(func(rows pgx.Rows) error {
			var err error
			l.Events, err = scanLinkEvents(rows)
			return err
		})
	b.Queue(`
		SELECT gateway_id, incarnation, wire_seq, kind, task_no, reason, data, received_at
		FROM dead_letters WHERE store_id = $1
		ORDER BY received_at DESC, seq DESC LIMIT $2`, storeID, cloud.MaxLinkList).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			d := &cloud.DeadLetter{}
			if err := rows.Scan(&d.GatewayID, &d.Incarnation, &d.Seq, &d.Kind, &d.TaskNo, &d.Reason, &d.Data, &d.ReceivedAt); err != nil {
				return err
			}
			l.DeadLetters = append(l.DeadLetters, d)
		}
		return rows.Err()
	})
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("read the link of store %s: %w", storeID, interpret(err))
	}
	return l, nil
}

// linkEventsSQL selects link events with their store's name, as
// scanLinkEvents reads them.
const linkEventsSQL = `
	SELECT e.store_id, s.name, e.event_id, e.kind, e.gateway_id, e.incarnation, e.count, e.message, e.at
	FROM link_events e JOIN stores s ON s.store_id = e.store_id`

func scanLinkEvents(rows pgx.Rows) ([]*cloud.LinkEvent, error) {
	out := []*cloud.LinkEvent{}
	for rows.Next() {
		e := &cloud.LinkEvent{}
		if err := rows.Scan(&e.StoreID, &e.StoreName, &e.ID, &e.Kind, &e.GatewayID, &e.Incarnation, &e.Count, &e.Message, &e.At); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
