-- The sync link across a replaced gateway, a wiped or restored data dir and
-- a restored database: cursors per gateway and incarnation, task versions
-- ordered by incarnation first, one owner per task, events the cloud could
-- not apply kept aside, and what happened on the link, for the dashboard.
BEGIN;

-- One cursor per incarnation of a gateway (a data dir's random id; '' for
-- one made before incarnations). Events are stored under seq + seq_offset:
-- each new incarnation of a gateway starts a block of 2^40 seqs of its
-- own, and a gateway found behind the cloud (its data dir restored from an
-- older copy) has its offset moved on, so nothing it sends again is taken
-- for an event stored already. seq is in stored numbering. rank orders the
-- incarnations of a store's gateways: a task's state from a higher rank
-- wins, whatever its version.
ALTER TABLE gateway_cursors ADD COLUMN incarnation text NOT NULL DEFAULT '';
ALTER TABLE gateway_cursors ADD COLUMN seq_offset bigint NOT NULL DEFAULT 0 CHECK (seq_offset >= 0);
ALTER TABLE gateway_cursors ADD COLUMN rank bigint NOT NULL DEFAULT 0 CHECK (rank >= 0);
ALTER TABLE gateway_cursors ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
-- A gateway found behind learns the cloud's state of the tasks changed in
-- (learn_from, learn_to], stored numbering; both 0 once it said it learned.
ALTER TABLE gateway_cursors ADD COLUMN learn_from bigint NOT NULL DEFAULT 0;
ALTER TABLE gateway_cursors ADD COLUMN learn_to bigint NOT NULL DEFAULT 0;
ALTER TABLE gateway_cursors DROP CONSTRAINT gateway_cursors_pkey;
ALTER TABLE gateway_cursors ADD PRIMARY KEY (store_id, gateway_id, incarnation);

-- gateway_id is now the task's owner: the gateway that first reported it
-- (another gateway of the store takes it over only once the owner's
-- credential is revoked). rank is the rank of the incarnation that
-- reported the current version.
ALTER TABLE print_tasks ADD COLUMN rank bigint NOT NULL DEFAULT 0;
ALTER TABLE print_tasks ADD COLUMN incarnation text NOT NULL DEFAULT '';

-- Events stored (in task_events, so the cursor moves past them) but not
-- applied, with the reason. data is the event's data as text, made safe
-- for PostgreSQL (a NUL or invalid UTF-8 is what sends many of them here).
CREATE TABLE dead_letters (
    store_id    text        NOT NULL REFERENCES stores (store_id),
    gateway_id  text        NOT NULL,
    seq         bigint      NOT NULL, -- stored numbering, as in task_events
    incarnation text        NOT NULL DEFAULT '',
    wire_seq    bigint      NOT NULL, -- the seq the gateway sent
    kind        text        NOT NULL DEFAULT '',
    task_no     text        NOT NULL DEFAULT '',
    reason      text        NOT NULL,
    data        text        NOT NULL DEFAULT '',
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, gateway_id, seq)
);

-- What happened on a store's link that people should know of: data reset,
-- resynchronised, restored behind the cloud, tasks taken over, events
-- dead-lettered.
CREATE TABLE link_events (
    store_id    text        NOT NULL REFERENCES stores (store_id),
    event_id    text        NOT NULL,
    kind        text        NOT NULL
        CHECK (kind IN ('gateway_reset', 'resynchronised', 'gateway_behind', 'take_over', 'dead_letter')),
    gateway_id  text        NOT NULL,
    incarnation text        NOT NULL DEFAULT '',
    count       bigint      NOT NULL DEFAULT 0, -- tasks or events concerned
    message     text        NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, event_id)
);
CREATE INDEX link_events_at_idx ON link_events (at);
CREATE INDEX link_events_store_idx ON link_events (store_id, at);

COMMIT;
