-- Issue 7: the first open message of each (service, device) queue is flagged as its head, so that a
-- claim reads only the heads that wait, never what waits behind them: before, every claim walked
-- every pending message and probed its queue (~60 ms a claim with 10,000 waiting).
--
-- A queue's row in message_sequences counts its open messages. That row is the queue's lock (the
-- insert's upsert and the settle's update take it), and the count read under it is always current:
-- it tells an insert whether its message is first, and a settle whether the queue, its head gone,
-- still has open messages: then it is marked headless, and the next claim gives it its head.
ALTER TABLE message_sequences ADD COLUMN open_messages integer NOT NULL DEFAULT 0;
ALTER TABLE message_sequences ADD COLUMN headless boolean NOT NULL DEFAULT false;
ALTER TABLE outbox ADD COLUMN queue_head boolean NOT NULL DEFAULT false;

UPDATE message_sequences q SET open_messages = o.n
FROM (SELECT service_id, device_id, count(*) AS n FROM outbox
      WHERE status IN ('pending', 'delivering', 'held') GROUP BY service_id, device_id) o
WHERE o.service_id = q.service_id AND o.device_id = q.device_id;

UPDATE outbox SET queue_head = true WHERE id IN (
  SELECT DISTINCT ON (service_id, device_id) id FROM outbox
  WHERE status IN ('pending', 'delivering', 'held') ORDER BY service_id, device_id, sequence);

-- The few queues waiting for their head, read at every claim.
CREATE INDEX message_sequences_headless ON message_sequences (service_id, device_id) WHERE headless;
-- What a claim reads: per service, its waiting heads by when they are due.
CREATE INDEX outbox_ready ON outbox (service_id, next_attempt_at, id) WHERE status = 'pending' AND queue_head;
-- Read by no query now; one index fewer to keep up to date on every insert and status change.
DROP INDEX outbox_due;
