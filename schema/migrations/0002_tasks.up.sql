-- Tasks, the events gateways replay upstream, receipts, alerts, and the
-- downstream queue of cloud-originated orders and commands.
BEGIN;

-- Cloud-originated orders. The primary key is the idempotency key: the same
-- order_id again is a replay (same digest) or a conflict (other digest).
CREATE TABLE cloud_orders (
    store_id   text        NOT NULL REFERENCES stores (store_id),
    order_id   text        NOT NULL,
    digest     text        NOT NULL, -- gateway.Order.Digest of the body
    body       jsonb       NOT NULL,
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, order_id)
);

-- One row per task_no per store: the task as the cloud knows it. version is
-- the gateway's TaskEvent.Version; a row only moves to a higher version.
-- A cloud order's task starts at version 0 as pending_delivery.
CREATE TABLE print_tasks (
    store_id    text        NOT NULL REFERENCES stores (store_id),
    task_no     text        NOT NULL,
    order_id    text        NOT NULL,
    station     text        NOT NULL,
    printer_id  text        NOT NULL DEFAULT '',
    status      text        NOT NULL
        CHECK (status IN ('pending_delivery', 'queued', 'printing', 'retry_wait', 'done',
                          'failed', 'attention_required', 'cancelled')),
    version     bigint      NOT NULL DEFAULT 0 CHECK (version >= 0),
    attempt     integer     NOT NULL DEFAULT 0,
    last_error  text        NOT NULL DEFAULT '',
    reason      text        NOT NULL DEFAULT '',
    source      text        NOT NULL DEFAULT '',
    copy_of     text        NOT NULL DEFAULT '',
    backup_from text        NOT NULL DEFAULT '',
    gateway_id  text        NOT NULL DEFAULT '', -- the gateway that reported the current version
    created_at  timestamptz NOT NULL,
    printed_at  timestamptz,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (store_id, task_no)
);
CREATE INDEX print_tasks_status_idx ON print_tasks (store_id, status, created_at);

-- Every event a gateway replayed (task, receipt and audit kinds alike),
-- stored once per (gateway, seq). data is json, not jsonb: the bytes the
-- gateway sent, kept as sent, and cheaper to store on the busiest table.
-- No foreign key: ingest checks the gateway once per batch.
CREATE TABLE task_events (
    store_id    text        NOT NULL,
    gateway_id  text        NOT NULL,
    seq         bigint      NOT NULL CHECK (seq > 0),
    kind        text        NOT NULL,
    task_no     text        NOT NULL DEFAULT '',
    at          timestamptz NOT NULL,
    data        json        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, gateway_id, seq)
);

-- One row per step of one attempt of one task.
CREATE TABLE receipts (
    store_id       text        NOT NULL,
    task_no        text        NOT NULL,
    attempt        integer     NOT NULL,
    state          text        NOT NULL
        CHECK (state IN ('prepared', 'submitted', 'printed', 'confirmed')),
    printer_id     text        NOT NULL DEFAULT '',
    payload_sha256 text        NOT NULL DEFAULT '',
    process_id     text        NOT NULL DEFAULT '',
    job_id         text        NOT NULL DEFAULT '',
    reprint        boolean     NOT NULL DEFAULT false,
    at             timestamptz NOT NULL,
    gateway_id     text        NOT NULL,
    seq            bigint      NOT NULL, -- the event that carried it
    PRIMARY KEY (store_id, task_no, attempt, state)
);

-- Things a person must act on. Raised by ingest (a task failed or needs
-- attention), resolved when the task moves on.
CREATE TABLE alerts (
    store_id    text        NOT NULL REFERENCES stores (store_id),
    alert_id    text        NOT NULL,
    kind        text        NOT NULL,
    task_no     text        NOT NULL DEFAULT '',
    printer_id  text        NOT NULL DEFAULT '',
    message     text        NOT NULL,
    raised_at   timestamptz NOT NULL,
    resolved_at timestamptz,
    PRIMARY KEY (store_id, alert_id)
);
CREATE INDEX alerts_open_idx ON alerts (store_id, task_no) WHERE resolved_at IS NULL;

-- Downstream: per-store seq of cloud-originated orders and commands, read by
-- the sync server as "everything for store S after seq N". last_seq is
-- allocated by an upsert of the store's downstream_cursors row, which
-- stays locked until the writing transaction ends, so
-- seqs become visible in order and a reader never skips one.
CREATE TABLE downstream_cursors (
    store_id  text   NOT NULL REFERENCES stores (store_id),
    last_seq  bigint NOT NULL DEFAULT 0, -- highest seq allocated
    acked_seq bigint NOT NULL DEFAULT 0, -- highest seq the store acked as durable
    PRIMARY KEY (store_id)
);

CREATE TABLE downstream (
    store_id   text        NOT NULL REFERENCES stores (store_id),
    seq        bigint      NOT NULL CHECK (seq > 0),
    command_id text        NOT NULL, -- idempotency key of the command
    kind       text        NOT NULL CHECK (kind IN ('order', 'retry', 'reprint', 'failover_ack')),
    task_no    text        NOT NULL DEFAULT '',
    printer_id text        NOT NULL DEFAULT '',
    body       jsonb       NOT NULL,
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, seq),
    UNIQUE (store_id, command_id)
);

COMMIT;
