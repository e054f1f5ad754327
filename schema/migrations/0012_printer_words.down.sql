BEGIN;
DROP INDEX IF EXISTS printers_trouble_idx;
ALTER TABLE printers DROP COLUMN word;
CREATE INDEX printers_trouble_idx ON printers (store_id)
    WHERE status NOT IN ('ready', 'unknown') OR failover;
COMMIT;
