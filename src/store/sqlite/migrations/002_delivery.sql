-- Delivery (DESIGN C): endpoint health, where the retry schedule starts over, and indexes for claiming.

-- No row means healthy. A service's push and event URLs are one endpoint: one partner integration,
-- so that holding it keeps the whole (service, device) order intact.
CREATE TABLE delivery_endpoints (
  service_id      TEXT PRIMARY KEY REFERENCES services (service_id),
  failing_since   REAL,                      -- first failure since the last success
  disabled_at     REAL,
  disabled_reason TEXT CHECK (disabled_reason IN ('gone', 'failing'))
);

-- The attempts count when the message was last resent, recovered or released: its schedule restarts there.
ALTER TABLE outbox ADD COLUMN schedule_start INTEGER NOT NULL DEFAULT 0;

-- 1 on the first open (pending, delivering or held) message of its (service, device): the only one
-- that may be sent, so that a claim reads the heads of the device queues and never what waits behind them.
ALTER TABLE outbox ADD COLUMN queue_head INTEGER NOT NULL DEFAULT 0;

-- A device queue's open messages in order: finding its head, never walking its delivered history.
CREATE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE status IN ('pending', 'delivering', 'held');

UPDATE outbox SET queue_head = 1
WHERE status IN ('pending', 'delivering', 'held')
  AND NOT EXISTS (
    SELECT 1 FROM outbox e
    WHERE e.service_id = outbox.service_id AND e.device_id = outbox.device_id AND e.sequence < outbox.sequence
      AND e.status IN ('pending', 'delivering', 'held'));

-- What a claim reads: heads that wait, per service by when they are due, so that a claim costs the
-- services with work and the batch it takes, never every waiting device.
CREATE INDEX outbox_ready ON outbox (service_id, next_attempt_at, id) WHERE status = 'pending' AND queue_head = 1;
-- Holding and releasing one service's messages.
CREATE INDEX outbox_service_status ON outbox (service_id, status);
-- The sweeper of expired event subscriptions.
CREATE INDEX event_subscriptions_expiry ON event_subscriptions (expires_at);
