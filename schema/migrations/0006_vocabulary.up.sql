-- The shared words: receipts may be closed as not_sent (the driver proved no
-- byte left after prepared), and a task's reason is one of the known ones.
-- The lists match package storeprint; schema tests compare them.
BEGIN;
ALTER TABLE receipts DROP CONSTRAINT receipts_state_check;
ALTER TABLE receipts ADD CONSTRAINT receipts_state_check
    CHECK (state IN ('prepared', 'submitted', 'printed', 'confirmed', 'not_sent'));
ALTER TABLE print_tasks ADD CONSTRAINT print_tasks_reason_check
    CHECK (reason IN ('', 'uncertain', 'stale', 'retries', 'recovered'));
COMMIT;
