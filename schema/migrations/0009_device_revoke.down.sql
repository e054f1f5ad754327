BEGIN;
DELETE FROM downstream WHERE kind = 'device_revoke';
ALTER TABLE downstream DROP CONSTRAINT downstream_kind_check;
ALTER TABLE downstream ADD CONSTRAINT downstream_kind_check
    CHECK (kind IN ('order', 'retry', 'reprint', 'failover_ack'));
COMMIT;
