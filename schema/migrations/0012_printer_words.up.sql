-- A printer's trouble in words, as its gateway reports it: a printer that
-- cuts off while printing or does not confirm its prints answers its
-- status as ready, and is in trouble all the same.
BEGIN;
ALTER TABLE printers ADD COLUMN word text NOT NULL DEFAULT ''
    CHECK (word IN ('', 'printer.cuts_off', 'printer.no_confirm'));
DROP INDEX IF EXISTS printers_trouble_idx;
CREATE INDEX printers_trouble_idx ON printers (store_id)
    WHERE status NOT IN ('ready', 'unknown') OR failover OR word <> '';
COMMIT;
