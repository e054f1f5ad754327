-- HQ at chain scale: alerts that end, indexes for the lists' orders, and
-- one dashboard answer per scope shared by every viewer on every node.
-- IF NOT EXISTS on the indexes: on a large live database an operator may
-- build them first with CREATE INDEX CONCURRENTLY.
BEGIN;

-- An alert ends when its task leaves the state (resolved_at), and stops
-- asking for a person once one acknowledged it or once it is older than
-- the cloud's alert_ttl (expired, decided when read: the TTL is a flag).
ALTER TABLE alerts
    ADD COLUMN IF NOT EXISTS acknowledged_at timestamptz,
    ADD COLUMN IF NOT EXISTS acknowledged_by text NOT NULL DEFAULT ''; -- the person who acknowledged it

-- The cross-store queue: alerts that need a person, and those a person
-- has taken on, oldest first. Each is a range of today's on raised_at.
DROP INDEX IF EXISTS alerts_open_raised_idx;
CREATE INDEX IF NOT EXISTS alerts_unacked_raised_idx ON alerts (raised_at)
    WHERE resolved_at IS NULL AND acknowledged_at IS NULL;
CREATE INDEX IF NOT EXISTS alerts_acked_raised_idx ON alerts (raised_at)
    WHERE resolved_at IS NULL AND acknowledged_at IS NOT NULL;

-- A store's tasks in the task list's order.
CREATE INDEX IF NOT EXISTS print_tasks_created_idx ON print_tasks (store_id, created_at, task_no);

-- The audit list, newest first: a tenant's, and every tenant's for the
-- admin.
CREATE INDEX IF NOT EXISTS audit_events_tenant_at_idx ON audit_events (tenant_id, at, audit_id);
CREATE INDEX IF NOT EXISTS audit_events_at_idx ON audit_events (at, audit_id);

-- The dashboard's computed answer per scope (tenant_id, '' for the admin's
-- view of every tenant) and filter, read by every node; one node at a time
-- computes it again once it is older than the dashboard's maximum age. A
-- cache: unlogged (lost in a crash, computed again), the body stored
-- uncompressed.
CREATE UNLOGGED TABLE IF NOT EXISTS dashboard_answers (
    tenant_id   text        NOT NULL,
    key         text        NOT NULL, -- the filter: since and limit
    computed_at timestamptz NOT NULL,
    body        bytea       NOT NULL, -- the answer as JSON
    PRIMARY KEY (tenant_id, key)
);
ALTER TABLE dashboard_answers ALTER COLUMN body SET STORAGE EXTERNAL;

COMMIT;
