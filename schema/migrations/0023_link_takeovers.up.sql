-- A store on a cluster of gateway nodes moves its sync link to another
-- node at each takeover. The live link keeps what its hello said: the
-- cluster node it comes from, the term in which that node leads, and the
-- store's incarnation. A replacement from another member of the store's
-- cluster, with the same incarnation and a later term, is a takeover: it
-- is kept, but it does not count towards gateway_credential_shared.
BEGIN;

ALTER TABLE gateways
    ADD COLUMN IF NOT EXISTS link_node text NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS link_term bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS link_incarnation text NOT NULL DEFAULT '';
ALTER TABLE link_replacements ADD COLUMN IF NOT EXISTS takeover boolean NOT NULL DEFAULT false;

COMMIT;
