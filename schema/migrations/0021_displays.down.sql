BEGIN;
DROP INDEX IF EXISTS printers_trouble_idx;
ALTER TABLE printers DROP COLUMN IF EXISTS kind, DROP COLUMN IF EXISTS open,
    DROP COLUMN IF EXISTS shown, DROP COLUMN IF EXISTS stale;
CREATE INDEX printers_trouble_idx ON printers (store_id)
    WHERE status NOT IN ('ready', 'unknown') OR failover OR word <> '';
COMMIT;
