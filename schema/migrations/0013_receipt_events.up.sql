-- A gateway's receipt steps are read from its receipt events, which
-- task_events holds once each (less those ingest refused: dead_letters):
-- ingest no longer copies them into receipts. receipts keeps the steps
-- that arrive otherwise (a snapshot's, a CloudPRNT printer's) and the
-- copies made before this version. The first of a step counts: the
-- table's, then the event that arrived first.
BEGIN;

COMMENT ON TABLE receipts IS
    'Receipt steps that arrived other than as a gateway''s receipt event (a snapshot''s, a CloudPRNT printer''s), and copies of receipt events made before schema version 13. A gateway''s receipt steps are read from task_events (kind receipt, not in dead_letters).';

COMMIT;
