-- A store on a cluster of gateway nodes: its leading gateway reports the
-- cluster (its node id and role, the leader, the term, each member's
-- state) with its printers; HQ shows it, and a member down is an alert
-- of kind cluster_node_down until it is back up. NULL: the gateway runs
-- alone, or never reported a cluster.
BEGIN;
ALTER TABLE gateways ADD COLUMN cluster jsonb;
COMMIT;
