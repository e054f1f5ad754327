-- Indexes for the HQ dashboard and task search. None is a key: Citus
-- distributes by store_id (tenant_id for audit_events) whatever they hold.
-- IF NOT EXISTS: on a large live database an operator may build them first
-- with CREATE INDEX CONCURRENTLY, and this migration then only records it.
BEGIN;

-- Today's tickets on paper and their time to paper: an index-only range
-- per store.
CREATE INDEX IF NOT EXISTS print_tasks_printed_idx ON print_tasks (store_id, printed_at) INCLUDE (created_at)
    WHERE printed_at IS NOT NULL;

-- Search by order id or task_no across the stores a person may see.
CREATE INDEX IF NOT EXISTS print_tasks_order_idx ON print_tasks (order_id);
CREATE INDEX IF NOT EXISTS print_tasks_task_no_idx ON print_tasks (task_no);

-- A task's history: its events in seq order.
CREATE INDEX IF NOT EXISTS task_events_task_idx ON task_events (store_id, task_no, seq)
    WHERE task_no <> '';

-- The cross-store queue of open alerts, oldest first, and today's failed
-- and flagged tickets per store.
CREATE INDEX IF NOT EXISTS alerts_open_raised_idx ON alerts (raised_at) WHERE resolved_at IS NULL;
CREATE INDEX IF NOT EXISTS alerts_raised_idx ON alerts (store_id, raised_at);

-- Printers in trouble across stores.
CREATE INDEX IF NOT EXISTS printers_trouble_idx ON printers (store_id)
    WHERE status NOT IN ('ready', 'unknown') OR failover;

-- A task's audit trail (resource 'task/<task_no>').
CREATE INDEX IF NOT EXISTS audit_events_resource_idx ON audit_events (tenant_id, store_id, resource, at);

COMMIT;
