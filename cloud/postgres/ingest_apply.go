package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// apply writes a batch's plan in one pipelined round trip and moves the
// cursor; stored is where the batch's own seqs run on to from the cursor
// without a gap (see storedRun).
func (p *plan) apply(ctx context.Context, tx pgx.Tx, c *cursorRow, stored int64, res *cloud.IngestResult) error {
	pb := &pgx.Batch{}
	p.queueTakeOver(pb, c)
	queueTasks(pb, c, p.sortedTasks())
	p.queueReceipts(pb, c)
	p.queueAudits(pb, c)
	p.queueDeadLetters(pb, c)
	queueCursor(pb, c, stored)
	var cur int64
	if err := sendBatch(ctx, tx, pb, &cur); err != nil {
		return err
	}
	res.Cursor = uint64(cur - c.offset)
	return nil
}

// sendBatch runs a pipelined batch whose last statement returns one value.
func sendBatch(ctx context.Context, tx pgx.Tx, pb *pgx.Batch, last any) error {
	br := tx.SendBatch(ctx, pb)
	for i := 0; i < pb.Len()-1; i++ {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("apply events: %w", interpret(err))
		}
	}
	if err := br.QueryRow().Scan(last); err != nil {
		br.Close()
		return fmt.Errorf("move cursor: %w", interpret(err))
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("apply events: %w", interpret(err))
	}
	return nil
}

// queueCursor queues the move of the cursor to the highest contiguous seq
// stored; its value is the batch's last. Every seq up to from is known to
// be stored (a batch's own run past the cursor): only the events past
// from are read to see how far the run goes on, none in the usual case.
func queueCursor(pb *pgx.Batch, c *cursorRow, from int64) {
	pb.Queue(`
		UPDATE gateway_cursors c
		SET seq = coalesce((
		        SELECT max(e.seq) FROM (
		            SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run
		            FROM task_events
		            WHERE store_id = $1 AND gateway_id = $2 AND seq > GREATEST(c.seq, $5) AND seq < $4
		        ) e
		        WHERE e.run = GREATEST(c.seq, $5)
		    ), GREATEST(c.seq, $5)),
		    updated_at = now()
		WHERE c.store_id = $1 AND c.gateway_id = $2 AND c.incarnation = $3
		RETURNING c.seq`, c.storeID, c.gatewayID, c.incarnation, blockEnd(c.offset), from)
}

// storedRun is the highest seq up to which the cursor and the batch's seqs
// (all stored once the batch's insert ran: new, or there before) leave no
// gap, in stored numbering.
func storedRun(cursor int64, seqs []int64) int64 {
	sorted := slices.Clone(seqs)
	slices.Sort(sorted)
	for _, s := range sorted {
		if s != cursor+1 {
			break
		}
		cursor = s
	}
	return cursor
}

// blockEnd is the first stored seq past an incarnation's block.
func blockEnd(offset int64) int64 { return (offset/incarnationBlock + 1) * incarnationBlock }

// queueTakeOver hands the tasks of revoked owners to this gateway, with
// one audit event and one link event for the batch.
func (p *plan) queueTakeOver(pb *pgx.Batch, c *cursorRow) {
	for from, taskNos := range p.takeover {
		pb.Queue(`UPDATE print_tasks SET gateway_id = $3, rank = 0, version = 0 WHERE store_id = $1 AND task_no = ANY($2) AND gateway_id = $4`,
			c.storeID, taskNos, c.gatewayID, from)
		after, _ := json.Marshal(map[string]any{"gateway_id": c.gatewayID, "task_nos": taskNos})
		before, _ := json.Marshal(map[string]any{"gateway_id": from})
		pb.Queue(`
			INSERT INTO audit_events (tenant_id, audit_id, store_id, source, actor, action, resource, reason, before, after, at)
			VALUES ($1, $2, $3, 'cloud', $4, $5, $6, $7, $8, $9, now())`,
			c.tenantID, "cloud:"+cloud.RandomID(16), c.storeID, "gateway:"+c.gatewayID, storeprint.ActionTakeOverTasks,
			"store/"+c.storeID, "the credential of gateway "+from+" is revoked", string(before), string(after))
		queueLinkEvent(pb, c, cloud.LinkTakeOver, int64(len(taskNos)),
			fmt.Sprintf("Gateway %s took over %d tickets of gateway %s, whose credential was revoked.", c.gatewayID, len(taskNos), from))
	}
}

// queueLinkEvent queues one link event of the cursor's incarnation.
func queueLinkEvent(pb *pgx.Batch, c *cursorRow, kind string, count int64, message string) {
	pb.Queue(`
		INSERT INTO link_events (store_id, event_id, kind, gateway_id, incarnation, count, message)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.storeID, kind+":"+cloud.RandomID(12), kind, c.gatewayID, c.incarnation, count, message)
}

// queueTasks queues the upsert of task states with the alerts they raise
// or resolve, and the printers they name. A state applies over a lower
// (rank, version) of the same owner (or of no owner: a cloud order not
// yet reported); the rules decided the rest.
func queueTasks(pb *pgx.Batch, c *cursorRow, rows []*sync.TaskEvent) {
	if len(rows) == 0 {
		return
	}
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
				last_error, reason, source, copy_of, backup_from, gateway_id, rank, incarnation, created_at, printed_at, updated_at)
			SELECT $1, u.task_no, u.version, u.order_id, u.station, u.printer_id, u.status, u.attempt,
				u.last_error, u.reason, u.source, u.copy_of, u.backup_from, $2, $18, $19, u.created_at, u.printed_at, u.updated_at
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
			    rank = EXCLUDED.rank, incarnation = EXCLUDED.incarnation,
			    created_at = LEAST(t.created_at, EXCLUDED.created_at),
			    printed_at = EXCLUDED.printed_at, updated_at = EXCLUDED.updated_at
			WHERE (t.rank, t.version) < (EXCLUDED.rank, EXCLUDED.version) AND t.gateway_id IN ('', EXCLUDED.gateway_id)
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
			SELECT $1, p FROM unnest($20::text[]) AS p
			ON CONFLICT (store_id, printer_id) DO NOTHING
		)
		SELECT count(*) FROM up`,
		c.storeID, c.gatewayID, textColumn(taskNos), int8Column(versions), textColumn(orderIDs), textColumn(stations),
		textColumn(printerIDs), textColumn(statuses), int4Column(attempts), textColumn(lastErrors), textColumn(reasons),
		textColumn(sources), textColumn(copyOfs), textColumn(backups), timeColumn(createdAts), printedAts, timeColumn(updatedAts),
		c.rank, c.incarnation, textColumn(printerList))
}

// queueReceipts queues the insert of the accepted receipts.
func (p *plan) queueReceipts(pb *pgx.Batch, c *cursorRow) {
	if len(p.receipts) == 0 {
		return
	}
	var (
		taskNos, states, printerIDs, sums, processIDs, jobIDs []string
		attempts                                              []int32
		reprints                                              []bool
		ats                                                   []time.Time
		seqs                                                  []int64
	)
	for _, r := range p.receipts {
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
	pb.Queue(`
		INSERT INTO receipts (store_id, task_no, attempt, state, printer_id, payload_sha256, process_id, job_id,
			reprint, at, gateway_id, seq)
		SELECT $1, u.task_no, u.attempt, u.state, u.printer_id, u.sum, u.process_id, u.job_id, u.reprint, u.at, $2, u.seq
		FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[],
			$11::timestamptz[], $12::bigint[])
			AS u(task_no, attempt, state, printer_id, sum, process_id, job_id, reprint, at, seq)
		ON CONFLICT (store_id, task_no, attempt, state) DO NOTHING`,
		c.storeID, c.gatewayID, textColumn(taskNos), int4Column(attempts), textColumn(states), textColumn(printerIDs),
		textColumn(sums), textColumn(processIDs), textColumn(jobIDs), reprints, timeColumn(ats), int8Column(seqs))
}

// queueAudits queues the insert of the new audit events. A gateway's audit
// id is unique within one incarnation and timeline, so the stored id names
// the gateway and, past its first data dir, the event that carried it.
func (p *plan) queueAudits(pb *pgx.Batch, c *cursorRow) {
	if len(p.audits) == 0 {
		return
	}
	var (
		ids, operators, actions, resources, reasons []string
		befores, afters                             []pgtype.Text
		ats                                         []time.Time
	)
	for _, a := range p.audits {
		resource := "store/" + c.storeID
		if a.ev.TaskNo != "" {
			resource = "task/" + a.ev.TaskNo
		}
		id := "gateway:" + c.gatewayID + ":" + a.ev.ID
		if c.incarnation != "" || c.offset != 0 {
			id = "gateway:" + c.gatewayID + ":" + c.incarnation + ":" + strconv.FormatInt(a.seq, 10)
		}
		ids = append(ids, id)
		operators = append(operators, a.ev.Operator)
		actions = append(actions, string(a.ev.Action))
		resources = append(resources, resource)
		reasons = append(reasons, a.ev.Reason)
		befores = append(befores, jsonText(a.ev.Before))
		afters = append(afters, jsonText(a.ev.After))
		ats = append(ats, a.ev.At)
	}
	pb.Queue(`
		INSERT INTO audit_events (tenant_id, audit_id, store_id, source, actor, operator, action, resource, reason,
			before, after, at)
		SELECT $1, u.id, $2, 'gateway', $3, u.operator, u.action, u.resource, u.reason, u.before::jsonb, u.after::jsonb, u.at
		FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[])
			AS u(id, operator, action, resource, reason, before, after, at)
		ON CONFLICT (tenant_id, audit_id) DO NOTHING`,
		c.tenantID, c.storeID, "gateway:"+c.gatewayID, ids, operators, actions, resources, reasons, befores, afters, ats)
	p.queueRefusals(pb, c, ids)
}

// queueRefusals raises an alert for every command from HQ the store
// refused (a make-up print of a voided order's ticket, say), so that the
// person at HQ who clicked sees why nothing printed.
func (p *plan) queueRefusals(pb *pgx.Batch, c *cursorRow, ids []string) {
	var alertIDs, taskNos, messages []string
	var ats []time.Time
	for i, a := range p.audits {
		if a.ev.Action != storeprint.ActionCommandRefused {
			continue
		}
		alertIDs = append(alertIDs, "command_refused:"+ids[i])
		taskNos = append(taskNos, a.ev.TaskNo)
		messages = append(messages, "The store refused HQ's command: "+a.ev.Reason)
		ats = append(ats, a.ev.At)
	}
	if len(alertIDs) == 0 {
		return
	}
	pb.Queue(`
		INSERT INTO alerts (store_id, alert_id, kind, task_no, message, raised_at)
		SELECT $1, u.id, 'command_refused', u.task_no, u.message, u.at
		FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS u(id, task_no, message, at)
		ON CONFLICT (store_id, alert_id) DO NOTHING`,
		c.storeID, alertIDs, taskNos, messages, ats)
}

// queueDeadLetters keeps the refused events with their reasons, raises an
// alert for each (the dashboard's queue), and one link event for the batch.
func (p *plan) queueDeadLetters(pb *pgx.Batch, c *cursorRow) {
	if len(p.dead) == 0 {
		return
	}
	var (
		seqs, wires                    []int64
		kinds, taskNos, reasons, datas []string
		alertIDs, messages             []string
	)
	for _, d := range p.dead {
		it := d.it
		taskNo := it.ev.TaskNo
		switch {
		case it.d.Task != nil:
			taskNo = it.d.Task.TaskNo
		case it.d.Receipt != nil:
			taskNo = it.d.Receipt.TaskNo
		}
		if !storeprint.ValidTaskNo(taskNo) {
			taskNo = ""
		}
		reason := safeText(d.reason, 2000)
		seqs, wires = append(seqs, it.seq), append(wires, int64(it.wire))
		kinds, taskNos = append(kinds, safeText(it.ev.Kind, 64)), append(taskNos, taskNo)
		reasons, datas = append(reasons, reason), append(datas, safeText(string(it.ev.Data), maxDeadLetterData))
		alertIDs = append(alertIDs, fmt.Sprintf("dead_letter:%s:%d", c.gatewayID, it.seq))
		messages = append(messages, fmt.Sprintf("Event %d from gateway %s could not be applied: %s", it.wire, c.gatewayID, reason))
	}
	pb.Queue(`
		WITH dl AS (
			INSERT INTO dead_letters (store_id, gateway_id, seq, incarnation, wire_seq, kind, task_no, reason, data)
			SELECT $1, $2, u.seq, $3, u.wire, u.kind, u.task_no, u.reason, u.data
			FROM unnest($4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[]) AS u(seq, wire, task_no, kind, reason, data)
			ON CONFLICT (store_id, gateway_id, seq) DO NOTHING
		)
		INSERT INTO alerts (store_id, alert_id, kind, task_no, message, raised_at)
		SELECT $1, u.id, 'dead_letter', u.task_no, u.message, now()
		FROM unnest($10::text[], $6::text[], $11::text[]) AS u(id, task_no, message)
		ON CONFLICT (store_id, alert_id) DO NOTHING`,
		c.storeID, c.gatewayID, c.incarnation, seqs, wires, taskNos, kinds, reasons, datas, alertIDs, messages)
	queueLinkEvent(pb, c, cloud.LinkDeadLetter, int64(len(p.dead)),
		fmt.Sprintf("%d event(s) from gateway %s could not be applied and were set aside; the link went on past them.", len(p.dead), c.gatewayID))
}

// jsonText is a JSON value as a nullable text parameter.
func jsonText(raw json.RawMessage) pgtype.Text {
	if len(raw) == 0 {
		return pgtype.Text{}
	}
	return pgtype.Text{String: string(raw), Valid: true}
}
