package cloud

import (
	"context"

	"github.com/storeprint/storeprint/sync"
)

// MaxIngestBatch bounds the events of one Ingest call.
const MaxIngestBatch = 10000

// Ingester takes the events a gateway replays upstream.
type Ingester interface {
	// Ingest stores a batch of a gateway's events in one transaction and
	// returns the highest contiguous seq stored for that gateway: the
	// cursor the sync link acks. It is idempotent: events already stored
	// are skipped, so a replayed batch changes nothing and returns the
	// same cursor. A task's state only moves to a higher version; receipts
	// and audit events are stored once. An unknown or revoked gateway, or
	// one of another store, is refused (EUNAUTHORIZED); a malformed event
	// refuses the whole batch (EINVALID naming its seq).
	Ingest(ctx context.Context, gatewayID, storeID string, events []sync.Event) (cursor uint64, err error)
}
