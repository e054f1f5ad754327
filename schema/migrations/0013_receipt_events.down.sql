-- Back to receipts holding every step: the accepted receipt events stored
-- since version 13 are copied in, the first of each step kept.
BEGIN;

INSERT INTO receipts (store_id, task_no, attempt, state, printer_id, payload_sha256, process_id, job_id,
    reprint, at, gateway_id, seq)
SELECT e.store_id, e.task_no, coalesce((e.data->>'attempt')::integer, 0), e.data->>'state',
       coalesce(e.data->>'printer_id', ''), coalesce(e.data->>'payload_sha256', ''),
       coalesce(e.data->>'process_id', ''), coalesce(e.data->>'job_id', ''),
       coalesce((e.data->>'reprint')::boolean, false),
       coalesce(nullif((e.data->>'at')::timestamptz, '0001-01-01T00:00:00Z'), e.at), e.gateway_id, e.seq
FROM task_events e
WHERE e.kind = 'receipt' AND e.task_no <> ''
  AND NOT EXISTS (SELECT 1 FROM dead_letters d WHERE d.store_id = e.store_id AND d.gateway_id = e.gateway_id AND d.seq = e.seq)
ORDER BY e.received_at, e.seq, e.gateway_id
ON CONFLICT (store_id, task_no, attempt, state) DO NOTHING;

COMMENT ON TABLE receipts IS NULL;

COMMIT;
