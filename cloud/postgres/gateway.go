package postgres

import (
	"cmp"
	"context"
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.GatewayService = (*GatewayService)(nil)

// GatewayService implements cloud.GatewayService.
type GatewayService struct {
	db *DB
}

// NewGatewayService returns a GatewayService on db.
func NewGatewayService(db *DB) *GatewayService { return &GatewayService{db: db} }

// CreateGateway implements cloud.GatewayService.
func (s *GatewayService) CreateGateway(ctx context.Context, storeID string, note cloud.Note) (*cloud.Gateway, string, error) {
	a, err := requireAdmin(ctx, note)
	if err != nil {
		return nil, "", err
	}
	gw := &cloud.Gateway{ID: "gw-" + cloud.RandomID(16), StoreID: storeID}
	token := cloud.NewGatewayToken(storeID)
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		tenantID, err := storeTenant(ctx, tx, a, storeID)
		if err != nil {
			return err
		}
		gw.TenantID = tenantID
		if err := tx.QueryRow(ctx, `
			INSERT INTO gateways (store_id, gateway_id, token_hash) VALUES ($1, $2, $3)
			RETURNING created_at`, storeID, gw.ID, cloud.HashToken(token)).Scan(&gw.CreatedAt); err != nil {
			return fmt.Errorf("insert gateway: %w", interpret(err))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO gateway_cursors (store_id, gateway_id) VALUES ($1, $2)`, storeID, gw.ID); err != nil {
			return fmt.Errorf("insert gateway cursor: %w", interpret(err))
		}
		return audit(ctx, tx, a, note, tenantID, storeID, storeprint.ActionCreateGateway, "gateway/"+gw.ID, nil,
			map[string]string{"gateway_id": gw.ID, "store_id": storeID})
	})
	if err != nil {
		return nil, "", fmt.Errorf("create gateway for store %s: %w", storeID, err)
	}
	return gw, token, nil
}

// RevokeGateway implements cloud.GatewayService.
func (s *GatewayService) RevokeGateway(ctx context.Context, gatewayID string, note cloud.Note) (*cloud.Gateway, error) {
	a, err := requireAdmin(ctx, note)
	if err != nil {
		return nil, err
	}
	var gw *cloud.Gateway
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		// Look-up by gateway_id alone: admin only, and rare.
		rows, err := tx.Query(ctx, `
			SELECT g.store_id, s.tenant_id, g.created_at, g.revoked_at, g.last_seen, g.version
			FROM gateways g JOIN stores s ON s.store_id = g.store_id
			WHERE g.gateway_id = $1
			FOR UPDATE OF g`, gatewayID)
		if err != nil {
			return fmt.Errorf("find gateway: %w", interpret(err))
		}
		found, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cloud.Gateway, error) {
			g := &cloud.Gateway{ID: gatewayID}
			return g, row.Scan(&g.StoreID, &g.TenantID, &g.CreatedAt, &g.RevokedAt, &g.LastSeen, &g.Version)
		})
		if err != nil {
			return fmt.Errorf("find gateway: %w", interpret(err))
		}
		switch len(found) {
		case 0:
			return storeprint.Errorf(storeprint.ENOTFOUND, "gateway %q not found", gatewayID)
		case 1:
		default:
			return storeprint.Errorf(storeprint.ECONFLICT, "gateway id %q is used by %d stores; revoke it through its store", gatewayID, len(found))
		}
		gw = found[0]
		if gw.RevokedAt != nil {
			return nil // already revoked: nothing changes, nothing to audit
		}
		var at time.Time
		if err := tx.QueryRow(ctx, `
			UPDATE gateways SET revoked_at = now(), online = false
			WHERE store_id = $1 AND gateway_id = $2
			RETURNING revoked_at`, gw.StoreID, gw.ID).Scan(&at); err != nil {
			return fmt.Errorf("revoke gateway: %w", interpret(err))
		}
		gw.RevokedAt = &at
		if err := audit(ctx, tx, a, note, gw.TenantID, gw.StoreID, storeprint.ActionRevokeGateway, "gateway/"+gw.ID,
			map[string]any{"revoked_at": nil}, map[string]any{"revoked_at": at}); err != nil {
			return err
		}
		return notify(ctx, tx, cloud.RevokedChannel, gw.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("revoke gateway %s: %w", gatewayID, err)
	}
	return gw, nil
}

// Authenticate implements cloud.GatewayService.
func (s *GatewayService) Authenticate(ctx context.Context, gatewayID, token string) (*cloud.Gateway, error) {
	storeID, ok := cloud.ParseGatewayToken(token)
	if !ok || !storeprint.ValidID(gatewayID) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid gateway credentials")
	}
	gw := &cloud.Gateway{ID: gatewayID, StoreID: storeID}
	var hash []byte
	err := s.db.pool.QueryRow(ctx, `
		SELECT s.tenant_id, g.token_hash, g.created_at, g.revoked_at, g.last_seen, g.version
		FROM gateways g JOIN stores s ON s.store_id = g.store_id
		WHERE g.store_id = $1 AND g.gateway_id = $2`, storeID, gatewayID).
		Scan(&gw.TenantID, &hash, &gw.CreatedAt, &gw.RevokedAt, &gw.LastSeen, &gw.Version)
	if isNoRows(err) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid gateway credentials")
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate gateway %s: %w", gatewayID, interpret(err))
	}
	if subtle.ConstantTimeCompare(hash, cloud.HashToken(token)) != 1 {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "invalid gateway credentials")
	}
	if gw.RevokedAt != nil {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q is revoked", gatewayID)
	}
	return gw, nil
}

// IsRevoked implements cloud.GatewayService. An unknown gateway counts as
// revoked: the caller cuts the link either way.
func (s *GatewayService) IsRevoked(ctx context.Context, storeID, gatewayID string) (bool, error) {
	var revoked bool
	err := s.db.pool.QueryRow(ctx, `
		SELECT revoked_at IS NOT NULL FROM gateways WHERE store_id = $1 AND gateway_id = $2`,
		storeID, gatewayID).Scan(&revoked)
	if isNoRows(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("check gateway %s: %w", gatewayID, interpret(err))
	}
	return revoked, nil
}

// Touch implements cloud.GatewayService.
func (s *GatewayService) Touch(ctx context.Context, storeID, gatewayID string, p cloud.Presence) error {
	if !p.Online {
		// Only the link that set online may clear it: a late disconnect of
		// an old link must not hide the new one.
		if _, err := s.db.pool.Exec(ctx, `
			UPDATE gateways SET online = false, last_seen = now()
			WHERE store_id = $1 AND gateway_id = $2 AND link_id = $3`, storeID, gatewayID, p.LinkID); err != nil {
			return fmt.Errorf("touch gateway %s: %w", gatewayID, interpret(err))
		}
		return nil
	}
	tag, err := s.db.pool.Exec(ctx, `
		UPDATE gateways
		SET online = true, link_id = $3, link_addr = $5, last_seen = now(),
		    version = CASE WHEN $4 = '' THEN version ELSE $4 END
		WHERE store_id = $1 AND gateway_id = $2 AND revoked_at IS NULL`,
		storeID, gatewayID, p.LinkID, p.Version, p.Addr)
	if err != nil {
		return fmt.Errorf("touch gateway %s: %w", gatewayID, interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q is unknown or revoked", gatewayID, storeID)
	}
	return nil
}

// Connect implements cloud.GatewayService: in one transaction, the
// gateway's row takes the new link (locked, so two links connecting at
// once are ordered), the replaced link is notified, the replacement is
// kept for cloud.SharedWindow, and the alert is raised once the
// replacements say two boxes hold the credential. A replacement that is
// a takeover in the store's cluster (cloud.Takeover, against the cluster
// the gateway last reported) is kept and does not count.
func (s *GatewayService) Connect(ctx context.Context, storeID, gatewayID string, p cloud.Presence) (cloud.LinkStart, error) {
	var st cloud.LinkStart
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		var oldLink, oldAddr string
		var old cloud.LinkHolder
		var wasOnline bool
		var cluster *cloud.Cluster
		err := tx.QueryRow(ctx, `
			UPDATE gateways g
			SET online = true, link_id = $3, link_addr = $5, last_seen = now(),
			    version = CASE WHEN $4 = '' THEN g.version ELSE $4 END,
			    link_node = $6, link_term = $7, link_incarnation = $8
			FROM (SELECT link_id, link_addr, online, link_node, link_term, link_incarnation, cluster FROM gateways
			      WHERE store_id = $1 AND gateway_id = $2 AND revoked_at IS NULL FOR UPDATE) o
			WHERE g.store_id = $1 AND g.gateway_id = $2
			RETURNING o.link_id, o.link_addr, o.online, o.link_node, o.link_term, o.link_incarnation, o.cluster`,
			storeID, gatewayID, p.LinkID, p.Version, p.Addr, p.Holder.Node, int64(p.Holder.Term), p.Holder.Incarnation).
			Scan(&oldLink, &oldAddr, &wasOnline, &old.Node, &old.Term, &old.Incarnation, &cluster)
		if isNoRows(err) {
			return storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q is unknown or revoked", gatewayID, storeID)
		}
		if err != nil {
			return fmt.Errorf("record link: %w", interpret(err))
		}
		if wasOnline && oldLink != "" && oldLink != p.LinkID {
			st.Replaced, st.ReplacedAddr = oldLink, oldAddr
			if err := notify(ctx, tx, cloud.ReplacedChannel, oldLink); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `
				DELETE FROM link_replacements WHERE store_id = $1 AND gateway_id = $2 AND at < now() - make_interval(secs => $3)`, storeID, gatewayID, cloud.SharedWindow.Seconds()); err != nil {
				return fmt.Errorf("forget old link replacements: %w", interpret(err))
			}
			if _, err := tx.Exec(ctx, `
				INSERT INTO link_replacements (store_id, gateway_id, old_addr, new_addr, takeover) VALUES ($1, $2, $3, $4, $5)`,
				storeID, gatewayID, oldAddr, p.Addr, cloud.Takeover(cluster, old, p.Holder)); err != nil {
				return fmt.Errorf("record link replacement: %w", interpret(err))
			}
		}
		n, addrs, err := replacements(ctx, tx, storeID, gatewayID)
		if err != nil {
			return err
		}
		st.Shared = shared(n, addrs)
		if !st.Shared || st.Replaced == "" {
			return nil
		}
		msg := fmt.Sprintf("Gateway %s's credential is in use on more than one box: its sync links replaced each other %d times in the last %s, from %s. "+
			"Keep it on one box: stop the other, or create a gateway credential for it and revoke this one.",
			gatewayID, n, cloud.SharedWindow, strings.Join(addrs[:min(len(addrs), 5)], ", "))
		return raiseAlert(ctx, tx, storeID, cloud.AlertCredentialShared+":"+gatewayID, cloud.AlertCredentialShared, msg)
	})
	if err != nil {
		return st, fmt.Errorf("connect gateway %s: %w", gatewayID, err)
	}
	return st, nil
}

// replacements counts the gateway's link replacements within
// cloud.SharedWindow, takeovers aside, and the addresses they came from.
func replacements(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, storeID, gatewayID string) (n int, addrs []string, err error) {
	if err := q.QueryRow(ctx, `
		SELECT count(*) / 2, coalesce(array_agg(DISTINCT a ORDER BY a) FILTER (WHERE a <> ''), '{}')
		FROM link_replacements r, LATERAL (VALUES (r.old_addr), (r.new_addr)) v(a)
		WHERE r.store_id = $1 AND r.gateway_id = $2 AND r.at >= now() - make_interval(secs => $3) AND NOT r.takeover`,
		storeID, gatewayID, cloud.SharedWindow.Seconds()).Scan(&n, &addrs); err != nil {
		return 0, nil, fmt.Errorf("count link replacements: %w", interpret(err))
	}
	return n, addrs, nil
}

// shared reports whether replacements say two boxes hold a credential.
func shared(n int, addrs []string) bool { return n > cloud.SharedReplacements && len(addrs) >= 2 }

// CurrentLink implements cloud.GatewayService.
func (s *GatewayService) CurrentLink(ctx context.Context, storeID, gatewayID string) (cloud.CurrentLink, error) {
	var cur cloud.CurrentLink
	err := s.db.pool.QueryRow(ctx, `
		SELECT link_id, link_addr FROM gateways WHERE store_id = $1 AND gateway_id = $2`,
		storeID, gatewayID).Scan(&cur.LinkID, &cur.Addr)
	if isNoRows(err) {
		return cur, nil
	}
	if err != nil {
		return cur, fmt.Errorf("read link of gateway %s: %w", gatewayID, interpret(err))
	}
	n, addrs, err := replacements(ctx, s.db.pool, storeID, gatewayID)
	if err != nil {
		return cur, err
	}
	cur.Shared = shared(n, addrs)
	return cur, nil
}

// Seen implements cloud.GatewayService: one statement for a node's links,
// in slices of presenceSlice rows, each in primary-key order so that two
// nodes' writes cannot deadlock.
func (s *GatewayService) Seen(ctx context.Context, links []cloud.LinkSeen) error {
	links = slices.Clone(links)
	slices.SortFunc(links, func(a, b cloud.LinkSeen) int {
		return cmp.Or(cmp.Compare(a.StoreID, b.StoreID), cmp.Compare(a.GatewayID, b.GatewayID))
	})
	for len(links) > 0 {
		part := links[:min(len(links), presenceSlice)]
		links = links[len(part):]
		stores, gateways, linkIDs := make([]string, len(part)), make([]string, len(part)), make([]string, len(part))
		ages := make([]float64, len(part))
		for i, l := range part {
			stores[i], gateways[i], linkIDs[i], ages[i] = l.StoreID, l.GatewayID, l.LinkID, max(l.Age, 0).Seconds()
		}
		if _, err := s.db.pool.Exec(ctx, `
			UPDATE gateways g
			SET last_seen = greatest(g.last_seen, now() - make_interval(secs => u.age))
			FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) AS u(store_id, gateway_id, link_id, age)
			WHERE g.store_id = u.store_id AND g.gateway_id = u.gateway_id AND g.link_id = u.link_id
			  AND g.online AND g.revoked_at IS NULL`, stores, gateways, linkIDs, ages); err != nil {
			return fmt.Errorf("record %d links seen: %w", len(part), interpret(err))
		}
	}
	return nil
}

// presenceSlice bounds the rows of one presence statement.
const presenceSlice = 1000

// UpdatePrinters implements cloud.GatewayService.
func (s *GatewayService) UpdatePrinters(ctx context.Context, storeID, gatewayID string, printers []*cloud.Printer) error {
	var ids, statuses, stations, backups, words, kinds []string
	var failovers []bool
	var opens, shown, stale []int32
	for _, p := range printers {
		if err := p.Validate(); err != nil {
			return err
		}
		ids = append(ids, p.ID)
		statuses = append(statuses, string(p.Status))
		stations = append(stations, strings.Join(p.Stations, ",")) // station names hold no comma
		backups = append(backups, p.Backup)
		failovers = append(failovers, p.Failover)
		words = append(words, string(p.Word))
		kinds = append(kinds, string(p.Kind))
		opens, shown, stale = append(opens, int32(p.Open)), append(shown, int32(p.Shown)), append(stale, int32(p.Stale))
	}
	// One statement: refuse a revoked gateway or one of another store, and
	// upsert every printer.
	var ok bool
	err := s.db.pool.QueryRow(ctx, `
		WITH gw AS (
			SELECT 1 FROM gateways WHERE store_id = $1 AND gateway_id = $2 AND revoked_at IS NULL
		), up AS (
			INSERT INTO printers (store_id, printer_id, status, stations, backup, failover, word, kind, open, shown, stale, updated_at)
			SELECT $1, u.id, u.status, string_to_array(u.stations, ','), u.backup, u.failover, u.word, u.kind, u.open, u.shown, u.stale, now()
			FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::text[], $9::text[], $10::int[], $11::int[], $12::int[])
				AS u(id, status, stations, backup, failover, word, kind, open, shown, stale)
			WHERE EXISTS (SELECT 1 FROM gw)
			ON CONFLICT (store_id, printer_id) DO UPDATE
			SET status = EXCLUDED.status, stations = EXCLUDED.stations, backup = EXCLUDED.backup,
			    failover = EXCLUDED.failover, word = EXCLUDED.word, kind = EXCLUDED.kind,
			    open = EXCLUDED.open, shown = EXCLUDED.shown, stale = EXCLUDED.stale, updated_at = EXCLUDED.updated_at
		)
		SELECT EXISTS (SELECT 1 FROM gw)`, storeID, gatewayID, ids, statuses, stations, backups, failovers, words,
		kinds, opens, shown, stale).Scan(&ok)
	if err != nil {
		return fmt.Errorf("update printers of store %s: %w", storeID, interpret(err))
	}
	if !ok {
		return storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q is unknown or revoked", gatewayID, storeID)
	}
	return nil
}

// UpdateCluster implements cloud.GatewayService: in one transaction, the
// gateway's row keeps the cluster, an alert of kind
// cloud.AlertClusterNodeDown (id cluster_node_down:<node id>) is opened
// for each member down, unless it is open already, and those of members
// no longer down are resolved.
func (s *GatewayService) UpdateCluster(ctx context.Context, storeID, gatewayID string, c *cloud.Cluster) error {
	if err := c.Validate(); err != nil {
		return err
	}
	var down, ids []string
	for _, m := range c.Members {
		if m.State == cloud.ClusterMemberDown {
			down = append(down, m.NodeID)
			ids = append(ids, cloud.AlertClusterNodeDown+":"+m.NodeID)
		}
	}
	if ids == nil {
		ids = []string{}
	}
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE gateways SET cluster = $3
			WHERE store_id = $1 AND gateway_id = $2 AND revoked_at IS NULL`, storeID, gatewayID, c)
		if err != nil {
			return fmt.Errorf("record cluster: %w", interpret(err))
		}
		if tag.RowsAffected() == 0 {
			return storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q is unknown or revoked", gatewayID, storeID)
		}
		for i, node := range down {
			msg := fmt.Sprintf("Node %s of the store's cluster is down or cut off (as its leader %s sees it, term %d): "+
				"the store runs on the others, with one loss fewer to spare. Bring it back, or replace it.", node, c.NodeID, c.Term)
			if err := raiseAlert(ctx, tx, storeID, ids[i], cloud.AlertClusterNodeDown, msg); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `
			UPDATE alerts SET resolved_at = now()
			WHERE store_id = $1 AND kind = $2 AND resolved_at IS NULL AND NOT (alert_id = ANY($3))`,
			storeID, cloud.AlertClusterNodeDown, ids); err != nil {
			return fmt.Errorf("resolve %s alerts: %w", cloud.AlertClusterNodeDown, interpret(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update cluster of store %s: %w", storeID, err)
	}
	return nil
}

// raiseAlert raises the store's alert alertID, of a kind about the store
// as a whole (no task, no printer). One still open is left as it is,
// unless it was raised more than cloud.DefaultAlertTTL ago and so no
// longer asks for a person: that one, like one resolved, is raised again
// with msg, unacknowledged.
func raiseAlert(ctx context.Context, tx pgx.Tx, storeID, alertID, kind, msg string) error {
	if _, err := tx.Exec(ctx, `
		INSERT INTO alerts (store_id, alert_id, kind, message, raised_at)
		VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (store_id, alert_id) DO UPDATE
		SET message = EXCLUDED.message, raised_at = now(), resolved_at = NULL,
		    acknowledged_at = NULL, acknowledged_by = ''
		WHERE alerts.resolved_at IS NOT NULL OR alerts.raised_at < now() - $5::interval`,
		storeID, alertID, kind, msg, fmt.Sprintf("%d seconds", int(cloud.DefaultAlertTTL.Seconds()))); err != nil {
		return fmt.Errorf("raise %s alert: %w", kind, interpret(err))
	}
	return nil
}
