package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// Snapshot implements cloud.Ingester: the part's task states apply
// version-forward under the ownership rule (no bound or transition check:
// a snapshot stands for every event the cloud missed), its receipts once
// each. A state or receipt that does not pass sync's checks is skipped.
func (s *IngestService) Snapshot(ctx context.Context, gatewayID, storeID, incarnation string, part *cloud.SnapshotPart) (uint64, error) {
	if len(part.Tasks) > cloud.MaxIngestBatch || len(part.Receipts) > 10*cloud.MaxIngestBatch {
		return 0, storeprint.Errorf(storeprint.EINVALID, "a snapshot frame holds at most %d tasks and %d receipts", cloud.MaxIngestBatch, 10*cloud.MaxIngestBatch)
	}
	if part.Through >= incarnationBlock {
		return 0, storeprint.Errorf(storeprint.EINVALID, "snapshot cursor %d is out of range", part.Through)
	}
	var cursor uint64
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		c, err := lockCursor(ctx, tx, storeID, gatewayID, incarnation)
		if err != nil {
			return err
		}
		tasks, receipts := checkSnapshot(part, s.now)
		held, err := lockTasks(ctx, tx, storeID, snapshotTaskNos(tasks, receipts))
		if err != nil {
			return err
		}
		p := newPlan()
		for _, t := range tasks {
			p.task(c, held, t, false)
		}
		for _, r := range receipts {
			if p.own(c, held[r.TaskNo], r.TaskNo) == "" {
				p.receipts = append(p.receipts, receiptRow{c.seq, r})
			}
		}
		pb := &pgx.Batch{}
		p.queueTakeOver(pb, c)
		queueTasks(pb, c, p.sortedTasks())
		p.queueReceipts(pb, c)
		if part.Final {
			queueResynchronised(pb, c, part)
		}
		queueCursor(pb, c, c.seq)
		var cur int64
		if err := sendBatch(ctx, tx, pb, &cur); err != nil {
			return err
		}
		cursor = uint64(cur - c.offset)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("snapshot of gateway %s: %w", gatewayID, err)
	}
	return cursor, nil
}

// queueResynchronised moves the cursor to the seq the snapshot stands for
// and records "store resynchronised".
func queueResynchronised(pb *pgx.Batch, c *cursorRow, part *cloud.SnapshotPart) {
	pb.Queue(`
		UPDATE gateway_cursors SET seq = GREATEST(seq, $4), updated_at = now()
		WHERE store_id = $1 AND gateway_id = $2 AND incarnation = $3`,
		c.storeID, c.gatewayID, c.incarnation, int64(part.Through)+c.offset)
	queueLinkEvent(pb, c, cloud.LinkResynchronised, int64(part.Total), fmt.Sprintf(
		"Store resynchronised: the cloud was missing events the gateway had already sent (its database restored from a backup?); gateway %s sent the %d tickets it holds.",
		c.gatewayID, part.Total))
}

// checkSnapshot returns the part's states and receipts that pass sync's
// checks.
func checkSnapshot(part *cloud.SnapshotPart, now func() time.Time) ([]*sync.TaskEvent, []*sync.ReceiptEvent) {
	at := now()
	var tasks []*sync.TaskEvent
	for i := range part.Tasks {
		if sync.CheckTask(&part.Tasks[i], at) == nil {
			tasks = append(tasks, &part.Tasks[i])
		}
	}
	var receipts []*sync.ReceiptEvent
	for i := range part.Receipts {
		if sync.CheckReceipt(&part.Receipts[i], at) == nil {
			receipts = append(receipts, &part.Receipts[i])
		}
	}
	return tasks, receipts
}

func snapshotTaskNos(tasks []*sync.TaskEvent, receipts []*sync.ReceiptEvent) []string {
	seen := map[string]bool{}
	var out []string
	add := func(no string) {
		if !seen[no] {
			seen[no] = true
			out = append(out, no)
		}
	}
	for _, t := range tasks {
		add(t.TaskNo)
	}
	for _, r := range receipts {
		add(r.TaskNo)
	}
	return out
}
