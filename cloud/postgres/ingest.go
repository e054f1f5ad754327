package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

var _ cloud.Ingester = (*IngestService)(nil)

// IngestService implements cloud.Ingester.
type IngestService struct {
	db *DB
}

// NewIngestService returns an IngestService on db.
func NewIngestService(db *DB) *IngestService { return &IngestService{db: db} }

// Ingest implements cloud.Ingester.
//
// One transaction, a fixed number of round trips whatever the batch size:
//
//  1. lock the gateway's cursor row (serializes batches of one gateway,
//     refuses an unknown or revoked gateway);
//  2. drop the events at or below the cursor (stored already: a replay
//     stops here), insert the others with ON CONFLICT DO NOTHING and learn
//     which seqs are new;
//  3. in one pipelined batch: upsert tasks (only to a higher version) and
//     raise or resolve their alerts, insert receipts, audit events and the
//     printers the tasks name, all with ON CONFLICT DO NOTHING; then move
//     the cursor to the highest contiguous seq stored.
func (s *IngestService) Ingest(ctx context.Context, gatewayID, storeID string, events []sync.Event) (uint64, error) {
	if len(events) > cloud.MaxIngestBatch {
		return 0, cloud.Errorf(cloud.EINVALID, "a batch holds at most %d events, got %d", cloud.MaxIngestBatch, len(events))
	}
	b, err := decodeBatch(events)
	if err != nil {
		return 0, err
	}
	var cursor uint64
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		var (
			cur      int64
			revoked  bool
			tenantID string
		)
		err := tx.QueryRow(ctx, `
			SELECT c.seq, g.revoked_at IS NOT NULL, s.tenant_id
			FROM gateway_cursors c
			JOIN gateways g ON g.store_id = c.store_id AND g.gateway_id = c.gateway_id
			JOIN stores s ON s.store_id = c.store_id
			WHERE c.store_id = $1 AND c.gateway_id = $2
			FOR UPDATE OF c`, storeID, gatewayID).Scan(&cur, &revoked, &tenantID)
		if isNoRows(err) {
			return cloud.Errorf(cloud.EUNAUTHORIZED, "gateway %q is not a gateway of store %q", gatewayID, storeID)
		}
		if err != nil {
			return fmt.Errorf("lock cursor: %w", interpret(err))
		}
		if revoked {
			return cloud.Errorf(cloud.EUNAUTHORIZED, "gateway %q is revoked", gatewayID)
		}
		cursor = uint64(cur)
		// Every seq up to the cursor is stored: a replay ends here.
		b.dropThrough(cur)
		if len(b.seqs) == 0 {
			return nil
		}

		rows, err := tx.Query(ctx, `
			INSERT INTO task_events (store_id, gateway_id, seq, kind, task_no, at, data)
			SELECT $1, $2, u.seq, u.kind, u.task_no, u.at, u.data::json
			FROM unnest($3::bigint[], $4::text[], $5::text[], $6::timestamptz[], $7::text[]) AS u(seq, kind, task_no, at, data)
			ON CONFLICT (store_id, gateway_id, seq) DO NOTHING
			RETURNING seq`, storeID, gatewayID, b.seqs, b.kinds, b.taskNos, b.ats, b.datas)
		if err != nil {
			return fmt.Errorf("store events: %w", interpret(err))
		}
		fresh, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("store events: %w", interpret(err))
		}
		if len(fresh) == 0 {
			return nil // stored before, out of order: the cursor stands
		}
		isNew := make(map[int64]bool, len(fresh))
		for _, seq := range fresh {
			isNew[seq] = true
		}

		pb := &pgx.Batch{}
		b.queueTasks(pb, storeID, gatewayID, isNew)
		b.queueReceipts(pb, storeID, gatewayID, isNew)
		b.queueAudits(pb, tenantID, storeID, gatewayID, isNew)
		pb.Queue(`
			UPDATE gateway_cursors c
			SET seq = coalesce((
			        SELECT max(e.seq) FROM (
			            SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run
			            FROM task_events
			            WHERE store_id = $1 AND gateway_id = $2 AND seq > c.seq
			        ) e
			        WHERE e.run = c.seq
			    ), c.seq),
			    updated_at = now()
			WHERE c.store_id = $1 AND c.gateway_id = $2
			RETURNING c.seq`, storeID, gatewayID)
		br := tx.SendBatch(ctx, pb)
		for i := 0; i < pb.Len()-1; i++ {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return fmt.Errorf("apply events: %w", interpret(err))
			}
		}
		if err := br.QueryRow().Scan(&cur); err != nil {
			br.Close()
			return fmt.Errorf("move cursor: %w", interpret(err))
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("apply events: %w", interpret(err))
		}
		cursor = uint64(cur)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("ingest %d events of gateway %s: %w", len(events), gatewayID, err)
	}
	return cursor, nil
}

// batch is a decoded, validated batch in column form.
type batch struct {
	// Every event, for task_events.
	seqs    []int64
	kinds   []string
	taskNos []string
	ats     []time.Time
	datas   []string

	tasks    []taskRow
	receipts []receiptRow
	audits   []auditRow
}

type taskRow struct {
	seq int64
	ev  sync.TaskEvent
}

type receiptRow struct {
	seq int64
	ev  sync.ReceiptEvent
}

type auditRow struct {
	seq int64
	ev  sync.AuditEvent
}

// decodeBatch checks every event; one bad event refuses the batch, naming
// its seq, before anything is written.
func decodeBatch(events []sync.Event) (*batch, error) {
	b := &batch{}
	seen := make(map[uint64]bool, len(events))
	for i := range events {
		ev := &events[i]
		if seen[ev.Seq] {
			return nil, cloud.Errorf(cloud.EINVALID, "event %d: seq appears twice in the batch", ev.Seq)
		}
		seen[ev.Seq] = true
		d, err := sync.DecodeEvent(ev)
		if err != nil {
			return nil, cloud.Errorf(cloud.EINVALID, "events[%d]: %v", i, err)
		}
		data := ev.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		seq := int64(ev.Seq)
		taskNo := ev.TaskNo
		switch {
		case d.Task != nil:
			taskNo = d.Task.TaskNo
			b.tasks = append(b.tasks, taskRow{seq, *d.Task})
		case d.Receipt != nil:
			taskNo = d.Receipt.TaskNo
			b.receipts = append(b.receipts, receiptRow{seq, *d.Receipt})
		case d.Audit != nil:
			b.audits = append(b.audits, auditRow{seq, *d.Audit})
		}
		b.seqs = append(b.seqs, seq)
		b.kinds = append(b.kinds, ev.Kind)
		b.taskNos = append(b.taskNos, taskNo)
		b.ats = append(b.ats, ev.At)
		b.datas = append(b.datas, string(data))
	}
	return b, nil
}

// dropThrough removes the events with seq up to cursor from the event
// columns: they are stored already. Only new events are applied, and the
// task, receipt and audit rows are looked up by seq, so they stay.
func (b *batch) dropThrough(cursor int64) {
	n := 0
	for i, seq := range b.seqs {
		if seq <= cursor {
			continue
		}
		b.seqs[n], b.kinds[n], b.taskNos[n], b.ats[n], b.datas[n] = seq, b.kinds[i], b.taskNos[i], b.ats[i], b.datas[i]
		n++
	}
	b.seqs, b.kinds, b.taskNos, b.ats, b.datas = b.seqs[:n], b.kinds[:n], b.taskNos[:n], b.ats[:n], b.datas[:n]
}

// queueTasks queues the upsert of the newest version of every task among
// the new events, with the alerts it raises or resolves, and the printers
// it names.
func (b *batch) queueTasks(pb *pgx.Batch, storeID, gatewayID string, isNew map[int64]bool) {
	latest := map[string]int{}
	var rows []*sync.TaskEvent
	for i := range b.tasks {
		tr := &b.tasks[i]
		if !isNew[tr.seq] {
			continue
		}
		// ON CONFLICT DO UPDATE may touch a row once per statement: keep
		// only the highest version of each task.
		if j, ok := latest[tr.ev.TaskNo]; ok {
			if rows[j].Version < tr.ev.Version {
				rows[j] = &tr.ev
			}
			continue
		}
		latest[tr.ev.TaskNo] = len(rows)
		rows = append(rows, &tr.ev)
	}
	if len(rows) == 0 {
		return
	}
	// Rows locked in one order: two gateways of a store cannot deadlock.
	sort.Slice(rows, func(i, j int) bool { return rows[i].TaskNo < rows[j].TaskNo })
	n := len(rows)
	var (
		taskNos, orderIDs, stations, printerIDs, statuses = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		lastErrors, reasons, sources, copyOfs, backups    = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		versions                                          = make([]int64, n)
		attempts                                          = make([]int32, n)
		createdAts, updatedAts                            = make([]time.Time, n), make([]time.Time, n)
		printedAts                                        = make([]pgtype.Timestamptz, n)
	)
	printers := map[string]bool{}
	var printerList []string
	for i, t := range rows {
		taskNos[i], orderIDs[i], stations[i], printerIDs[i], statuses[i] = t.TaskNo, t.OrderID, t.Station, t.PrinterID, string(t.Status)
		lastErrors[i], reasons[i], sources[i], copyOfs[i], backups[i] = t.LastError, string(t.Reason), string(t.Source), t.CopyOf, t.BackupFrom
		versions[i], attempts[i] = int64(t.Version), int32(t.Attempt)
		createdAts[i], updatedAts[i] = t.CreatedAt, t.UpdatedAt
		if t.PrintedAt != nil {
			printedAts[i] = pgtype.Timestamptz{Time: *t.PrintedAt, Valid: true}
		}
		if storeprint.ValidID(t.PrinterID) && !printers[t.PrinterID] {
			printers[t.PrinterID] = true
			printerList = append(printerList, t.PrinterID)
		}
	}
	// raised and resolved see the table as it was before this statement:
	// resolved closes the task's earlier open alerts, raised adds the one
	// for its new state, if any.
	pb.Queue(`
		WITH up AS (
			INSERT INTO print_tasks AS t (store_id, task_no, version, order_id, station, printer_id, status, attempt,
				last_error, reason, source, copy_of, backup_from, gateway_id, created_at, printed_at, updated_at)
			SELECT $1, u.task_no, u.version, u.order_id, u.station, u.printer_id, u.status, u.attempt,
				u.last_error, u.reason, u.source, u.copy_of, u.backup_from, $2, u.created_at, u.printed_at, u.updated_at
			FROM unnest($3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[],
				$10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::timestamptz[], $16::timestamptz[], $17::timestamptz[])
				AS u(task_no, version, order_id, station, printer_id, status, attempt,
				     last_error, reason, source, copy_of, backup_from, created_at, printed_at, updated_at)
			ON CONFLICT (store_id, task_no) DO UPDATE
			SET version = EXCLUDED.version, order_id = EXCLUDED.order_id, station = EXCLUDED.station,
			    printer_id = EXCLUDED.printer_id, status = EXCLUDED.status, attempt = EXCLUDED.attempt,
			    last_error = EXCLUDED.last_error, reason = EXCLUDED.reason,
			    source = CASE WHEN EXCLUDED.source = '' THEN t.source ELSE EXCLUDED.source END,
			    copy_of = EXCLUDED.copy_of, backup_from = EXCLUDED.backup_from, gateway_id = EXCLUDED.gateway_id,
			    created_at = LEAST(t.created_at, EXCLUDED.created_at),
			    printed_at = EXCLUDED.printed_at, updated_at = EXCLUDED.updated_at
			WHERE t.version < EXCLUDED.version
			RETURNING t.task_no, t.status, t.attempt, t.printer_id, t.last_error, t.reason, t.updated_at,
			          t.task_no || ':' || t.status || ':' || t.attempt AS alert_id
		), raised AS (
			INSERT INTO alerts (store_id, alert_id, kind, task_no, printer_id, message, raised_at)
			SELECT $1, up.alert_id, up.status, up.task_no, up.printer_id,
			       CASE up.status
			           WHEN 'failed' THEN 'task ' || up.task_no || ' failed: ' || up.last_error
			           ELSE 'task ' || up.task_no || ' needs a person (' || coalesce(nullif(up.reason, ''), 'uncertain') || ')'
			       END,
			       up.updated_at
			FROM up WHERE up.status IN ('failed', 'attention_required')
			ON CONFLICT (store_id, alert_id) DO NOTHING
		), resolved AS (
			UPDATE alerts a SET resolved_at = up.updated_at
			FROM up
			WHERE a.store_id = $1 AND a.task_no = up.task_no AND a.resolved_at IS NULL AND a.alert_id <> up.alert_id
		), seen AS (
			INSERT INTO printers (store_id, printer_id)
			SELECT $1, p FROM unnest($18::text[]) AS p
			ON CONFLICT (store_id, printer_id) DO NOTHING
		)
		SELECT count(*) FROM up`,
		storeID, gatewayID, taskNos, versions, orderIDs, stations, printerIDs, statuses, attempts,
		lastErrors, reasons, sources, copyOfs, backups, createdAts, printedAts, updatedAts, printerList)
}

// queueReceipts queues the insert of the new receipts.
func (b *batch) queueReceipts(pb *pgx.Batch, storeID, gatewayID string, isNew map[int64]bool) {
	var (
		taskNos, states, printerIDs, sums, processIDs, jobIDs []string
		attempts                                              []int32
		reprints                                              []bool
		ats                                                   []time.Time
		seqs                                                  []int64
	)
	for i := range b.receipts {
		r := &b.receipts[i]
		if !isNew[r.seq] {
			continue
		}
		taskNos = append(taskNos, r.ev.TaskNo)
		attempts = append(attempts, int32(r.ev.Attempt))
		states = append(states, string(r.ev.State))
		printerIDs = append(printerIDs, r.ev.PrinterID)
		sums = append(sums, r.ev.PayloadSHA256)
		processIDs = append(processIDs, r.ev.ProcessID)
		jobIDs = append(jobIDs, r.ev.JobID)
		reprints = append(reprints, r.ev.Reprint)
		ats = append(ats, r.ev.At)
		seqs = append(seqs, r.seq)
	}
	if len(seqs) == 0 {
		return
	}
	pb.Queue(`
		INSERT INTO receipts (store_id, task_no, attempt, state, printer_id, payload_sha256, process_id, job_id,
			reprint, at, gateway_id, seq)
		SELECT $1, u.task_no, u.attempt, u.state, u.printer_id, u.sum, u.process_id, u.job_id, u.reprint, u.at, $2, u.seq
		FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[],
			$11::timestamptz[], $12::bigint[])
			AS u(task_no, attempt, state, printer_id, sum, process_id, job_id, reprint, at, seq)
		ON CONFLICT (store_id, task_no, attempt, state) DO NOTHING`,
		storeID, gatewayID, taskNos, attempts, states, printerIDs, sums, processIDs, jobIDs, reprints, ats, seqs)
}

// queueAudits queues the insert of the new audit events. Their id is
// unique per gateway, so the stored id is prefixed with the gateway's.
func (b *batch) queueAudits(pb *pgx.Batch, tenantID, storeID, gatewayID string, isNew map[int64]bool) {
	var (
		ids, operators, actions, resources, reasons []string
		befores, afters                             []pgtype.Text
		ats                                         []time.Time
	)
	for i := range b.audits {
		a := &b.audits[i]
		if !isNew[a.seq] {
			continue
		}
		resource := "store/" + storeID
		if a.ev.TaskNo != "" {
			resource = "task/" + a.ev.TaskNo
		}
		ids = append(ids, "gateway:"+gatewayID+":"+a.ev.ID)
		operators = append(operators, a.ev.Operator)
		actions = append(actions, string(a.ev.Action))
		resources = append(resources, resource)
		reasons = append(reasons, a.ev.Reason)
		befores = append(befores, jsonText(a.ev.Before))
		afters = append(afters, jsonText(a.ev.After))
		ats = append(ats, a.ev.At)
	}
	if len(ids) == 0 {
		return
	}
	pb.Queue(`
		INSERT INTO audit_events (tenant_id, audit_id, store_id, source, actor, operator, action, resource, reason,
			before, after, at)
		SELECT $1, u.id, $2, 'gateway', $3, u.operator, u.action, u.resource, u.reason, u.before::jsonb, u.after::jsonb, u.at
		FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[])
			AS u(id, operator, action, resource, reason, before, after, at)
		ON CONFLICT (tenant_id, audit_id) DO NOTHING`,
		tenantID, storeID, "gateway:"+gatewayID, ids, operators, actions, resources, reasons, befores, afters, ats)
}

// jsonText is a JSON value as a nullable text parameter.
func jsonText(raw json.RawMessage) pgtype.Text {
	if len(raw) == 0 {
		return pgtype.Text{}
	}
	return pgtype.Text{String: string(raw), Valid: true}
}
