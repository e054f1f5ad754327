BEGIN;
ALTER TABLE print_tasks DROP CONSTRAINT print_tasks_reason_check;
DELETE FROM receipts WHERE state = 'not_sent';
ALTER TABLE receipts DROP CONSTRAINT receipts_state_check;
ALTER TABLE receipts ADD CONSTRAINT receipts_state_check
    CHECK (state IN ('prepared', 'submitted', 'printed', 'confirmed'));
COMMIT;
