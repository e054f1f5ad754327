-- One live sync link per gateway credential: a new link replaces the live
-- one. The address of the link that holds the credential is kept, so the
-- replaced link can say who took its place, and every replacement is
-- kept for a while: links of one credential replacing each other from two
-- addresses mean two boxes share it (an alert for the store).
BEGIN;

ALTER TABLE gateways ADD COLUMN IF NOT EXISTS link_addr text NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS link_replacements (
    store_id   text        NOT NULL REFERENCES stores (store_id),
    gateway_id text        NOT NULL,
    at         timestamptz NOT NULL DEFAULT now(),
    old_addr   text        NOT NULL,
    new_addr   text        NOT NULL
);
CREATE INDEX IF NOT EXISTS link_replacements_gateway_idx ON link_replacements (store_id, gateway_id, at);

COMMIT;
