BEGIN;
DROP INDEX IF EXISTS print_tasks_open_idx;
DROP TABLE cloudprnt_printers;
COMMIT;
