-- print_tasks is written only where the transaction has its store checked
-- already (ingest's cursor row, joined to the store's gateway; a cloud
-- order's row; a CloudPRNT printer's), and stores are never deleted. Its
-- foreign key looked the store up again for every task row: on the
-- busiest write, one more query per ticket. task_events has none for the
-- same reason.
BEGIN;

ALTER TABLE print_tasks DROP CONSTRAINT IF EXISTS print_tasks_store_id_fkey;

COMMIT;
