-- The append-only audit trail: who did what, why, before and after, when.
BEGIN;

-- Keyed by tenant: admin actions on a tenant have no store. store_id is set
-- for every action on a store, its gateways, tasks and printers.
CREATE TABLE audit_events (
    tenant_id   text        NOT NULL REFERENCES tenants (tenant_id),
    audit_id    text        NOT NULL,
    store_id    text,
    source      text        NOT NULL CHECK (source IN ('cloud', 'gateway')),
    actor       text        NOT NULL, -- the credential: admin, tenant:<id>/token:<id>, gateway:<id>
    operator    text        NOT NULL DEFAULT '', -- the person, when the request names one
    action      text        NOT NULL,
    resource    text        NOT NULL,
    reason      text        NOT NULL DEFAULT '',
    before      jsonb,
    after       jsonb,
    at          timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, audit_id)
);
CREATE INDEX audit_events_store_idx ON audit_events (tenant_id, store_id, at);

-- Append-only, enforced here and not only in the application: any UPDATE,
-- DELETE or TRUNCATE raises, whoever the role (the owner included).
CREATE FUNCTION audit_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER audit_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();

-- A separate application role, where one is set up, gets INSERT and SELECT
-- only; nobody gets UPDATE, DELETE or TRUNCATE through PUBLIC.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_events FROM PUBLIC;

COMMIT;
