-- Star CloudPRNT printers that poll the cloud for a store without a
-- gateway (/v1/cloudprnt/{store_id}). Each prints the cloud orders of its
-- stations (all of the store's when none), with the same print_tasks,
-- receipts and alerts as a gateway's printers.
BEGIN;

CREATE TABLE cloudprnt_printers (
    store_id         text        NOT NULL REFERENCES stores (store_id),
    printer_id       text        NOT NULL,
    mac              text        NOT NULL, -- lower case, colons: 00:11:62:1d:9a:b7
    token_hash       bytea       NOT NULL, -- the printer's own token (its CloudPRNT password), hashed
    stations         text[]      NOT NULL DEFAULT '{}',
    confirm_timeout_ms bigint    NOT NULL DEFAULT 30000 CHECK (confirm_timeout_ms > 0),
    status_code      text        NOT NULL DEFAULT '', -- of its last poll
    last_poll        timestamptz,
    created_by       text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, printer_id),
    UNIQUE (store_id, mac)
);

-- The next ticket of a store: its open tasks, oldest first.
CREATE INDEX IF NOT EXISTS print_tasks_open_idx ON print_tasks (store_id, created_at)
    WHERE status IN ('pending_delivery', 'queued', 'retry_wait', 'printing');

COMMIT;
