package cloudtest_test

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/cloudtest"
	"github.com/storeprint/storeprint/cloud/ingesttest"
	"github.com/storeprint/storeprint/sync"
)

// The in-memory cloud keeps the ingest rules the PostgreSQL one keeps.
func TestCloud_Conformance(t *testing.T) {
	t.Parallel()
	ingesttest.Exercise(t, func(t *testing.T) ingesttest.Cloud {
		c := cloudtest.New()
		return ingesttest.Cloud{
			Ingester: c,
			AddGateway: func(t *testing.T, storeID string) string {
				gw, _, err := c.CreateGateway(context.Background(), storeID, cloud.Note{})
				if err != nil {
					t.Fatal(err)
				}
				return gw.ID
			},
			Revoke: func(t *testing.T, storeID, gatewayID string) {
				if _, err := c.RevokeGateway(context.Background(), gatewayID, cloud.Note{}); err != nil {
					t.Fatal(err)
				}
			},
			Task: func(t *testing.T, storeID, taskNo string) (sync.TaskEvent, bool) {
				return c.Task(storeID, taskNo)
			},
			Stored: func(t *testing.T, storeID, gatewayID, incarnation string) int {
				return len(c.Link(gatewayID, incarnation).Events)
			},
		}
	})
}
