package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

var _ cloud.TaskService = (*TaskService)(nil)

// TaskService implements cloud.TaskService.
type TaskService struct {
	db *DB
}

// NewTaskService returns a TaskService on db.
func NewTaskService(db *DB) *TaskService { return &TaskService{db: db} }

const taskColumns = `t.task_no, t.order_id, t.station, t.printer_id, t.status, t.version, t.attempt,
	t.last_error, t.reason, t.source, t.copy_of, t.backup_from, t.created_at, t.printed_at, t.updated_at`

func scanTask(row pgx.Row, storeID string) (*cloud.Task, error) {
	t := &cloud.Task{StoreID: storeID, Receipts: []*cloud.Receipt{}}
	err := row.Scan(&t.TaskNo, &t.OrderID, &t.Station, &t.PrinterID, &t.Status, &t.Version, &t.Attempt,
		&t.LastError, &t.Reason, &t.Source, &t.CopyOf, &t.BackupFrom, &t.CreatedAt, &t.PrintedAt, &t.UpdatedAt)
	if err != nil {
		return nil, interpret(err)
	}
	return t, nil
}

// FindTask implements cloud.TaskService.
func (s *TaskService) FindTask(ctx context.Context, storeID, taskNo string) (*cloud.Task, error) {
	a, err := cloud.RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	q := stmt{args: []any{storeID, taskNo}}
	sql := `
		SELECT ` + taskColumns + `
		FROM print_tasks t JOIN stores s ON s.store_id = t.store_id
		WHERE t.store_id = $1 AND t.task_no = $2` + q.tenant(a, "s.tenant_id")
	t, err := scanTask(s.db.pool.QueryRow(ctx, sql, q.args...), storeID)
	if storeprint.ErrorCode(err) == storeprint.ENOTFOUND {
		// Also for another tenant's store: a 404 tells nothing.
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "task %s not found at store %s", taskNo, storeID)
	}
	if err != nil {
		return nil, fmt.Errorf("find task %s: %w", taskNo, err)
	}
	if err := s.attachReceipts(ctx, storeID, []*cloud.Task{t}); err != nil {
		return nil, err
	}
	return t, nil
}

// FindTasks implements cloud.TaskService.
func (s *TaskService) FindTasks(ctx context.Context, storeID string, f cloud.TaskFilter) ([]*cloud.Task, error) {
	if err := readable(ctx, s.db.pool, storeID, f.Validate); err != nil {
		return nil, err
	}
	// One statement per filter. Paging walks the primary key (store_id,
	// task_no); a task_no never changes, unlike created_at, which a
	// gateway's report can move back. The store's tenant was checked above.
	q := stmt{args: []any{storeID}}
	where, order := "", " ORDER BY t.created_at, t.task_no" // print_tasks_created_idx
	if f.Status != "" {
		where += " AND t.status = " + q.arg(string(f.Status))
	}
	if f.After != nil {
		where += " AND t.task_no > " + q.arg(*f.After)
		order = " ORDER BY t.task_no"
	}
	sql := `SELECT ` + taskColumns + ` FROM print_tasks t WHERE t.store_id = $1` + where + order + ` LIMIT ` + q.arg(f.Limit)
	args := q.args
	if f.Status != "" {
		// How many tasks have a status differs by orders of magnitude
		// (done against failed) and so does the best plan: planned with
		// the value each time, never cached as one generic plan.
		args = append([]any{pgx.QueryExecModeExec}, args...)
	}
	rows, err := s.db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("find tasks: %w", interpret(err))
	}
	tasks := []*cloud.Task{}
	for rows.Next() {
		t, err := scanTask(rows, storeID)
		if err != nil {
			return nil, fmt.Errorf("find tasks: %w", err)
		}
		tasks = append(tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find tasks: %w", interpret(err))
	}
	if err := s.attachReceipts(ctx, storeID, tasks); err != nil {
		return nil, err
	}
	return tasks, nil
}

// attachReceipts reads the receipts of the tasks in one round trip. The
// tasks were read with the actor's tenant scope already.
func (s *TaskService) attachReceipts(ctx context.Context, storeID string, tasks []*cloud.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	storeIDs, taskNos := make([]string, len(tasks)), make([]string, len(tasks))
	for i, t := range tasks {
		storeIDs[i], taskNos[i] = storeID, t.TaskNo
	}
	rr := newReceiptReader(storeIDs, taskNos)
	b := &pgx.Batch{}
	rr.queue(b)
	if err := s.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("find receipts: %w", interpret(err))
	}
	for i, t := range tasks {
		t.Receipts = append(t.Receipts, rr.receipts(i)...)
	}
	return nil
}
