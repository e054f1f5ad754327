-- HQ may revoke a device paired with a store's gateway: a downstream
-- command of its own kind. The list matches storeprint.CommandKinds;
-- schema tests compare them.
BEGIN;
ALTER TABLE downstream DROP CONSTRAINT downstream_kind_check;
ALTER TABLE downstream ADD CONSTRAINT downstream_kind_check
    CHECK (kind IN ('order', 'retry', 'reprint', 'failover_ack', 'device_revoke'));
COMMIT;
