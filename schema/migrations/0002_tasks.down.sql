BEGIN;
DROP TABLE downstream;
DROP TABLE downstream_cursors;
DROP TABLE alerts;
DROP TABLE receipts;
DROP TABLE task_events;
DROP TABLE print_tasks;
DROP TABLE cloud_orders;
COMMIT;
