package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// BumpTimes implements cloud.DashboardService: for the store's tasks done
// since f.Since, the time from the order (the task's acceptance at the
// store) to its first bump on a kitchen display (the bump's audit event).
// print_tasks_status_idx finds the day's done tasks, task_events_task_idx
// their events.
func (s *DashboardService) BumpTimes(ctx context.Context, storeID string, f cloud.DashboardFilter) (*cloud.BumpTimes, error) {
	if err := readable(ctx, s.db.pool, storeID, func() error { return f.Validate(s.now()) }); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT t.station, t.created_at, min(e.at)
		FROM print_tasks t
		JOIN task_events e ON e.store_id = t.store_id AND e.task_no = t.task_no AND e.kind = $4
		WHERE t.store_id = $1 AND t.status = $2 AND t.created_at >= $3
		  AND (e.data->>'action') = $5
		GROUP BY t.station, t.task_no, t.created_at`,
		storeID, storeprint.StatusDone, f.Since, sync.KindAudit, string(storeprint.ActionBump))
	if err != nil {
		return nil, fmt.Errorf("bump times of %s: %w", storeID, interpret(err))
	}
	defer rows.Close()
	var samples []cloud.BumpSample
	for rows.Next() {
		var b cloud.BumpSample
		var bumped time.Time
		if err := rows.Scan(&b.Station, &b.Ordered, &bumped); err != nil {
			return nil, fmt.Errorf("bump times of %s: %w", storeID, interpret(err))
		}
		b.Took = max(0, bumped.Sub(b.Ordered))
		samples = append(samples, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bump times of %s: %w", storeID, interpret(err))
	}
	return cloud.NewBumpTimes(storeID, f.Since, samples), nil
}
