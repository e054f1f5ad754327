package postgres

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// A task's receipts are kept where they first arrived, and each is stored
// once:
//
//   - a gateway's receipt events in task_events, as every event is: ingest
//     writes no second row for them. An event ingest refused is a dead
//     letter and no receipt;
//   - the receipts table holds the rest: the receipts of snapshots,
//     CloudPRNT printers' steps, and the gateways' receipts stored by
//     earlier versions of the cloud.
//
// receiptReader reads both for a set of tasks. The first of each step (a
// task's attempt and state) counts, as the table's key had it: the table's
// row, else the event that arrived first.
type receiptReader struct {
	storeIDs, taskNos []string
	got               [][]readReceipt // by task, in the order the tasks were given
}

// readReceipt is one receipt as read, with what orders it among those of
// its step.
type readReceipt struct {
	r *cloud.Receipt
	// events: when the event arrived and its stored seq; the table's rows
	// come first.
	event      bool
	receivedAt time.Time
	gatewayID  string
	seq        int64
}

// newReceiptReader reads the receipts of the tasks storeIDs[i], taskNos[i].
func newReceiptReader(storeIDs, taskNos []string) *receiptReader {
	return &receiptReader{storeIDs: storeIDs, taskNos: taskNos, got: make([][]readReceipt, len(taskNos))}
}

// queue queues the reads on b: both sides in one round trip.
func (rr *receiptReader) queue(b *pgx.Batch) {
	b.Queue(`
		SELECT u.i, r.attempt, r.state, r.printer_id, r.payload_sha256, r.process_id, r.job_id, r.reprint, r.at
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(store_id, task_no, i)
		JOIN receipts r ON r.store_id = u.store_id AND r.task_no = u.task_no`,
		rr.storeIDs, rr.taskNos).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var i int
			r := &cloud.Receipt{}
			if err := rows.Scan(&i, &r.Attempt, &r.State, &r.PrinterID, &r.PayloadSHA256, &r.ProcessID, &r.JobID, &r.Reprint, &r.At); err != nil {
				return err
			}
			rr.got[i-1] = append(rr.got[i-1], readReceipt{r: r})
		}
		return rows.Err()
	})
	// task_events_task_idx finds a task's events.
	b.Queue(`
		SELECT u.i, e.gateway_id, e.seq, e.at, e.received_at, e.data::text
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(store_id, task_no, i)
		JOIN task_events e ON e.store_id = u.store_id AND e.task_no = u.task_no AND e.task_no <> ''
		WHERE e.kind = $3
		  AND NOT EXISTS (SELECT 1 FROM dead_letters d WHERE d.store_id = e.store_id AND d.gateway_id = e.gateway_id AND d.seq = e.seq)`,
		rr.storeIDs, rr.taskNos, sync.KindReceipt).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var i int
			var data string
			var at time.Time
			g := readReceipt{event: true}
			if err := rows.Scan(&i, &g.gatewayID, &g.seq, &at, &g.receivedAt, &data); err != nil {
				return err
			}
			if r, ok := eventReceipt(rr.taskNos[i-1], data, at); ok {
				g.r = &cloud.Receipt{Attempt: r.Attempt, State: r.State, PrinterID: r.PrinterID, PayloadSHA256: r.PayloadSHA256,
					ProcessID: r.ProcessID, JobID: r.JobID, Reprint: r.Reprint, ConfirmedBy: r.ConfirmedBy, At: r.At}
				rr.got[i-1] = append(rr.got[i-1], g)
			}
		}
		return rows.Err()
	})
}

// eventReceipt is a stored receipt event of task taskNo decoded as ingest
// decoded it (sync.DecodeEvent: the same reader and checks, the event's
// time where the data has none), its time in the database's precision.
// The seq given is not the event's (stored numbering runs past the
// wire's); DecodeEvent only checks its range.
func eventReceipt(taskNo, data string, at time.Time) (*sync.ReceiptEvent, bool) {
	d, err := sync.DecodeEvent(&sync.Event{Seq: 1, Kind: sync.KindReceipt, TaskNo: taskNo, At: at, Data: json.RawMessage(data)})
	if err != nil || d.Receipt == nil {
		return nil, false
	}
	r := d.Receipt
	r.At = r.At.Truncate(time.Microsecond).In(at.Location())
	return r, true
}

// receipts returns task i's receipts, one per step, in the order a person
// reads them: by attempt, then time, then step.
func (rr *receiptReader) receipts(i int) []*cloud.Receipt {
	got := rr.got[i]
	slices.SortStableFunc(got, func(a, b readReceipt) int {
		if a.event != b.event {
			if a.event {
				return 1
			}
			return -1
		}
		return cmp.Or(a.receivedAt.Compare(b.receivedAt), cmp.Compare(a.seq, b.seq), cmp.Compare(a.gatewayID, b.gatewayID))
	})
	type step struct {
		attempt int
		state   storeprint.ReceiptState
	}
	seen := make(map[step]bool, len(got))
	out := make([]*cloud.Receipt, 0, len(got))
	for _, g := range got {
		k := step{g.r.Attempt, g.r.State}
		if !seen[k] {
			seen[k] = true
			out = append(out, g.r)
		}
	}
	slices.SortStableFunc(out, func(a, b *cloud.Receipt) int {
		return cmp.Or(cmp.Compare(a.Attempt, b.Attempt), a.At.Compare(b.At), cmp.Compare(stepOrder(a.State), stepOrder(b.State)))
	})
	return out
}

// stepOrder places a receipt's state among the steps of an attempt, in
// the vocabulary's order (not_sent after the four); a state it does not
// know comes last.
func stepOrder(s storeprint.ReceiptState) int {
	if i := slices.Index(storeprint.ReceiptStates, s); i >= 0 {
		return i
	}
	return len(storeprint.ReceiptStates)
}
