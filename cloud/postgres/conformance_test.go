package postgres

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/ingesttest"
	"github.com/storeprint/storeprint/sync"
)

// The PostgreSQL cloud keeps the ingest rules of the conformance suite,
// the same the in-memory cloud (cloud/cloudtest) is held to.
func TestIngestService_Conformance(t *testing.T) {
	t.Parallel()
	ingesttest.Exercise(t, func(t *testing.T) ingesttest.Cloud {
		f := setup(t)
		ctx := context.Background()
		stores := map[string]bool{}
		return ingesttest.Cloud{
			Ingester: f.ingest,
			AddGateway: func(t *testing.T, storeID string) string {
				if !stores[storeID] {
					stores[storeID] = true
					gw, _ := f.mustStore(t, "tenant-"+storeID, storeID)
					return gw.ID
				}
				gw, _, err := f.gateways.CreateGateway(adminCtx, storeID, cloud.Note{Reason: "test"})
				if err != nil {
					t.Fatal(err)
				}
				return gw.ID
			},
			Revoke: func(t *testing.T, storeID, gatewayID string) {
				if _, err := f.gateways.RevokeGateway(adminCtx, gatewayID, cloud.Note{Reason: "test"}); err != nil {
					t.Fatal(err)
				}
			},
			Task: func(t *testing.T, storeID, taskNo string) (sync.TaskEvent, bool) {
				var task sync.TaskEvent
				err := f.db.pool.QueryRow(ctx, `SELECT version, status FROM print_tasks WHERE store_id = $1 AND task_no = $2`,
					storeID, taskNo).Scan(&task.Version, &task.Status)
				if isNoRows(err) {
					return task, false
				}
				if err != nil {
					t.Fatal(err)
				}
				task.TaskNo = taskNo
				return task, true
			},
			Stored: func(t *testing.T, storeID, gatewayID, incarnation string) int {
				return f.count(t, `
					SELECT count(*) FROM task_events e
					JOIN gateway_cursors c USING (store_id, gateway_id)
					WHERE e.store_id = $1 AND e.gateway_id = $2 AND c.incarnation = $3
					  AND e.seq / $4 = c.seq_offset / $4`, storeID, gatewayID, incarnation, int64(incarnationBlock))
			},
		}
	})
}
