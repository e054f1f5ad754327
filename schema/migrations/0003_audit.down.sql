BEGIN;
DROP TABLE audit_events;
DROP FUNCTION audit_events_append_only();
COMMIT;
