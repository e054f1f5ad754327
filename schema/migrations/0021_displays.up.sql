-- Kitchen displays beside the printers: a gateway reports its screens in
-- the same list as its printers (ready while a screen speaks, offline
-- while it is silent), with the tickets each holds that nobody bumped:
-- all of them, those on the screen, and those past their station's
-- stale_after. Rows from before are printers.
BEGIN;
ALTER TABLE printers
    ADD COLUMN kind text NOT NULL DEFAULT 'printer' CONSTRAINT printers_kind_check CHECK (kind IN ('printer', 'display')),
    ADD COLUMN open integer NOT NULL DEFAULT 0 CHECK (open >= 0),
    ADD COLUMN shown integer NOT NULL DEFAULT 0 CHECK (shown >= 0),
    ADD COLUMN stale integer NOT NULL DEFAULT 0 CHECK (stale >= 0);
-- A display with stale tickets is in trouble too.
DROP INDEX IF EXISTS printers_trouble_idx;
CREATE INDEX printers_trouble_idx ON printers (store_id)
    WHERE status NOT IN ('ready', 'unknown') OR failover OR word <> '' OR stale > 0;
COMMIT;
