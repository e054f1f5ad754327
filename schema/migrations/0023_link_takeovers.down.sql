BEGIN;

ALTER TABLE link_replacements DROP COLUMN IF EXISTS takeover;
ALTER TABLE gateways
    DROP COLUMN IF EXISTS link_node,
    DROP COLUMN IF EXISTS link_term,
    DROP COLUMN IF EXISTS link_incarnation;

COMMIT;
