BEGIN;
DROP TABLE link_events;
DROP TABLE dead_letters;
ALTER TABLE print_tasks DROP COLUMN incarnation;
ALTER TABLE print_tasks DROP COLUMN rank;
-- Only the cursor of each gateway's newest incarnation is kept.
DELETE FROM gateway_cursors c WHERE EXISTS (
    SELECT 1 FROM gateway_cursors n
    WHERE n.store_id = c.store_id AND n.gateway_id = c.gateway_id
      AND (n.rank > c.rank OR (n.rank = c.rank AND n.incarnation > c.incarnation)));
ALTER TABLE gateway_cursors DROP CONSTRAINT gateway_cursors_pkey;
ALTER TABLE gateway_cursors ADD PRIMARY KEY (store_id, gateway_id);
ALTER TABLE gateway_cursors DROP COLUMN created_at;
ALTER TABLE gateway_cursors DROP COLUMN learn_to;
ALTER TABLE gateway_cursors DROP COLUMN learn_from;
ALTER TABLE gateway_cursors DROP COLUMN rank;
ALTER TABLE gateway_cursors DROP COLUMN seq_offset;
ALTER TABLE gateway_cursors DROP COLUMN incarnation;
COMMIT;
