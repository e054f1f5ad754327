package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

var _ cloud.Ingester = (*IngestService)(nil)

// IngestService implements cloud.Ingester.
type IngestService struct {
	db  *DB
	now func() time.Time
}

// NewIngestService returns an IngestService on db.
func NewIngestService(db *DB) *IngestService { return &IngestService{db: db, now: time.Now} }

// incarnationBlock is the span of stored seqs of one incarnation: each new
// incarnation of a gateway stores its events from the next block on.
const incarnationBlock = 1 << 40

// Ingest implements cloud.Ingester: Stage, then Finish.
func (s *IngestService) Ingest(ctx context.Context, gatewayID, storeID, incarnation string, events []sync.Event) (*cloud.IngestResult, error) {
	st, err := s.Stage(ctx, gatewayID, storeID, incarnation, events)
	if err != nil {
		return nil, err
	}
	return st.Finish(ctx)
}

var _ cloud.StagedIngester = (*IngestService)(nil)

// Stage implements cloud.StagedIngester.
//
// One transaction, a fixed number of round trips whatever the batch size.
// Stage:
//
//  1. read the incarnation's cursor (refuses an unknown or revoked
//     gateway);
//  2. drop the events at or below it (stored already: a replay) and past
//     the send window, keep the others as decoded before the transaction
//     began (one that does not decode is kept aside, made safe), copy
//     them all in (or, when one is stored already, begin again and
//     insert them with ON CONFLICT DO NOTHING) and learn which seqs are
//     new (see store).
//
// The cursor read in 1 may be behind by the batches still finishing:
// that keeps more events (they are found stored before, not new) and
// refuses more past the window, never fewer. Finish:
//
//  3. lock the incarnation's cursor row (serializes the rest of the
//     batches of one incarnation) and read it again;
//  4. lock the rows of the tasks the new events name and decide each
//     event by the rules of ingest_rules.go;
//  5. in one pipelined batch: take over the tasks of revoked owners,
//     upsert tasks and raise or resolve their alerts, insert audit
//     events, dead letters with their alerts, and the printers the tasks
//     name; then move the cursor to the highest contiguous seq stored,
//     and commit. Receipts are not copied: they are read from their
//     events (see receiptReader).
//
// Until step 3 the transaction holds no lock but on the keys of the
// events it inserted, and the holder of a cursor lock inserts no events:
// batches staged while others finish cannot deadlock with them.
func (s *IngestService) Stage(ctx context.Context, gatewayID, storeID, incarnation string, events []sync.Event) (cloud.StagedBatch, error) {
	if len(events) > cloud.MaxIngestBatch {
		return nil, storeprint.Errorf(storeprint.EINVALID, "a batch holds at most %d events, got %d", cloud.MaxIngestBatch, len(events))
	}
	st := &staged{s: s, events: len(events), gatewayID: gatewayID, storeID: storeID, incarnation: incarnation}
	dec := decodeEvents(events)
	err := st.stage(ctx, events, dec, true)
	if isUniqueViolation(err) {
		err = st.stage(ctx, events, dec, false)
	}
	if err != nil {
		return nil, st.wrap(err)
	}
	return st, nil
}

// stage begins the batch's transaction, reads the cursor and stores the
// events past it: copied in when copyIn, else inserted (see store). On
// an error the transaction is rolled back.
func (st *staged) stage(ctx context.Context, events []sync.Event, dec []decoded, copyIn bool) error {
	tx, err := st.s.db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", interpret(err))
	}
	st.tx = tx
	c, err := readCursor(ctx, tx, st.storeID, st.gatewayID, st.incarnation, false)
	if err == nil {
		st.b = newBatch(events, dec, c, st.s.now())
		if len(st.b.seqs) > 0 {
			st.items, err = st.b.store(ctx, tx, c, copyIn)
		}
	}
	if err != nil {
		st.Abort()
	}
	return err
}

// staged is a batch whose events are inserted, in its open transaction.
type staged struct {
	s                               *IngestService
	tx                              pgx.Tx
	events                          int
	gatewayID, storeID, incarnation string
	b                               *batch
	items                           []*item // the new events, in seq order
}

func (st *staged) wrap(err error) error {
	return fmt.Errorf("ingest %d events of gateway %s: %w", st.events, st.gatewayID, err)
}

// Abort implements cloud.StagedBatch.
func (st *staged) Abort() {
	_ = st.tx.Rollback(context.Background()) // after Commit: a no-op
}

// Finish implements cloud.StagedBatch.
func (st *staged) Finish(ctx context.Context) (*cloud.IngestResult, error) {
	defer st.Abort()
	res := &cloud.IngestResult{}
	if err := st.finish(ctx, res); err != nil {
		return nil, st.wrap(err)
	}
	if err := st.tx.Commit(ctx); err != nil {
		return nil, st.wrap(fmt.Errorf("commit: %w", interpret(err)))
	}
	return res, nil
}

func (st *staged) finish(ctx context.Context, res *cloud.IngestResult) error {
	tx := st.tx
	c, err := readCursor(ctx, tx, st.storeID, st.gatewayID, st.incarnation, true)
	if err != nil {
		return err
	}
	res.Cursor = c.wire()
	if len(st.items) == 0 {
		return nil // none new: stored before, out of order; the cursor stands
	}
	held, err := lockTasks(ctx, tx, st.storeID, itemTaskNos(st.items))
	if err != nil {
		return err
	}
	p := c.planEvents(st.items, held)
	res.DeadLetters = p.deadLetters()
	return p.apply(ctx, tx, c, storedRun(c.seq, st.b.seqs), res)
}

// cursorRow is one incarnation's cursor, locked for a batch.
type cursorRow struct {
	storeID, gatewayID, incarnation, tenantID string
	seq, offset, rank                         int64 // seq in stored numbering
}

// wire is the cursor in the gateway's numbering.
func (c *cursorRow) wire() uint64 { return uint64(c.seq - c.offset) }

func lockCursor(ctx context.Context, tx pgx.Tx, storeID, gatewayID, incarnation string) (*cursorRow, error) {
	return readCursor(ctx, tx, storeID, gatewayID, incarnation, true)
}

// readCursor reads an incarnation's cursor, locking its row if lock.
func readCursor(ctx context.Context, tx pgx.Tx, storeID, gatewayID, incarnation string, lock bool) (*cursorRow, error) {
	c := &cursorRow{storeID: storeID, gatewayID: gatewayID, incarnation: incarnation}
	var revoked bool
	sql := `
		SELECT c.seq, c.seq_offset, c.rank, g.revoked_at IS NOT NULL, s.tenant_id
		FROM gateway_cursors c
		JOIN gateways g ON g.store_id = c.store_id AND g.gateway_id = c.gateway_id
		JOIN stores s ON s.store_id = c.store_id
		WHERE c.store_id = $1 AND c.gateway_id = $2 AND c.incarnation = $3`
	if lock {
		sql += `
		FOR UPDATE OF c`
	}
	err := tx.QueryRow(ctx, sql, storeID, gatewayID, incarnation).Scan(&c.seq, &c.offset, &c.rank, &revoked, &c.tenantID)
	if isNoRows(err) {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q of store %q has no link open for incarnation %q", gatewayID, storeID, incarnation)
	}
	if err != nil {
		return nil, fmt.Errorf("lock cursor: %w", interpret(err))
	}
	if revoked {
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "gateway %q is revoked", gatewayID)
	}
	return c, nil
}

// eventColumns are the columns a batch writes of task_events.
var eventColumns = []string{"store_id", "gateway_id", "seq", "kind", "task_no", "at", "data"}

// store inserts the batch's events and returns the items that were new.
//
// The events at or below the cursor were dropped already: those left
// were never stored, but for one stored past a gap in an earlier batch,
// or by another link of the incarnation in a transaction of its own (a
// link replaced while its batch was in flight). So they are copied in
// (copyIn): COPY does about half an INSERT's work per row (the heap
// written a page at a time, no arbiter check before each row). An event
// stored already fails the copy with a unique violation (once the other
// transaction committed, if it had not), which ends the transaction:
// Stage begins it again, reads the cursor again, and the batch goes in
// through INSERT ... ON CONFLICT DO NOTHING (copyIn false), which learns
// which seqs are new. Either way each (store, gateway, seq) is stored
// once. No savepoint: the usual batch pays for no subtransaction and
// its two round trips.
func (b *batch) store(ctx context.Context, tx pgx.Tx, c *cursorRow, copyIn bool) ([]*item, error) {
	if !copyIn {
		return b.insert(ctx, tx, c)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"task_events"}, eventColumns, &eventRows{b: b, c: c, i: -1}); err != nil {
		if isUniqueViolation(err) {
			return nil, err // Stage tries again by insert
		}
		return nil, fmt.Errorf("store events: %w", interpret(err))
	}
	return b.fresh(b.seqs), nil
}

// eventRows is a batch's events as rows of eventColumns, for COPY. Its
// one row points into the batch's columns: pgx encodes each row before
// it asks for the next, and nothing is copied or boxed a row.
type eventRows struct {
	b   *batch
	c   *cursorRow
	i   int
	row []any
}

func (r *eventRows) Next() bool {
	r.i++
	return r.i < len(r.b.seqs)
}

func (r *eventRows) Values() ([]any, error) {
	b, i := r.b, r.i
	if r.row == nil {
		r.row = make([]any, len(eventColumns))
		r.row[0], r.row[1] = &r.c.storeID, &r.c.gatewayID
	}
	r.row[2], r.row[3], r.row[4], r.row[5], r.row[6] = &b.seqs[i], &b.kinds[i], &b.taskNos[i], &b.ats[i], &b.datas[i]
	return r.row, nil
}

func (r *eventRows) Err() error { return nil }

// insert inserts the batch's events, skipping those stored already, and
// returns the items that were new.
func (b *batch) insert(ctx context.Context, tx pgx.Tx, c *cursorRow) ([]*item, error) {
	rows, err := tx.Query(ctx, `
		INSERT INTO task_events (store_id, gateway_id, seq, kind, task_no, at, data)
		SELECT $1, $2, u.seq, u.kind, u.task_no, u.at, u.data::json
		FROM unnest($3::bigint[], $4::text[], $5::text[], $6::timestamptz[], $7::text[]) AS u(seq, kind, task_no, at, data)
		ON CONFLICT (store_id, gateway_id, seq) DO NOTHING
		RETURNING seq`, c.storeID, c.gatewayID, int8Column(b.seqs), textColumn(b.kinds), textColumn(b.taskNos), timeColumn(b.ats), textColumn(b.datas))
	if err != nil {
		return nil, fmt.Errorf("store events: %w", interpret(err))
	}
	fresh, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store events: %w", interpret(err))
	}
	return b.fresh(fresh), nil
}

// itemTaskNos lists the tasks the decoded task and receipt events name.
func itemTaskNos(items []*item) []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		no := ""
		switch {
		case it.d.Task != nil:
			no = it.d.Task.TaskNo
		case it.d.Receipt != nil:
			no = it.d.Receipt.TaskNo
		}
		if no != "" && !seen[no] {
			seen[no] = true
			out = append(out, no)
		}
	}
	return out
}

// lockTasks locks the rows of the named tasks (in task_no order, bytewise)
// and returns what the rules need of them.
//
// Each task is one lookup by the full primary key, a lateral subquery per
// task_no: a filter "task_no = ANY(...)" over the store's rows is planned
// from statistics, and before the table's first ANALYZE (a new
// deployment, a store's first backlog) that plan reads every task of the
// store for each batch. Planned each time with the batch's values, never
// as a cached generic plan made while the table was small.
func lockTasks(ctx context.Context, tx pgx.Tx, storeID string, taskNos []string) (map[string]*heldTask, error) {
	held := make(map[string]*heldTask, len(taskNos))
	if len(taskNos) == 0 {
		return held, nil
	}
	taskNos = slices.Clone(taskNos)
	slices.Sort(taskNos)
	rows, err := tx.Query(ctx, `
		SELECT t.task_no, t.rank, t.version, t.status, t.gateway_id,
		       t.gateway_id <> '' AND (g.gateway_id IS NULL OR g.revoked_at IS NOT NULL)
		FROM unnest($2::text[]) AS n(task_no)
		CROSS JOIN LATERAL (
		    SELECT t.task_no, t.rank, t.version, t.status, t.gateway_id FROM print_tasks t
		    WHERE t.store_id = $1 AND t.task_no = n.task_no
		    FOR UPDATE
		) t
		LEFT JOIN gateways g ON g.store_id = $1 AND g.gateway_id = t.gateway_id`, pgx.QueryExecModeExec, storeID, taskNos)
	if err != nil {
		return nil, fmt.Errorf("lock tasks: %w", interpret(err))
	}
	defer rows.Close()
	for rows.Next() {
		var no string
		h := &heldTask{}
		if err := rows.Scan(&no, &h.rank, &h.version, &h.status, &h.owner, &h.ownerGone); err != nil {
			return nil, fmt.Errorf("lock tasks: %w", interpret(err))
		}
		h.status = heldStatus(h.status)
		held[no] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lock tasks: %w", interpret(err))
	}
	return held, nil
}
