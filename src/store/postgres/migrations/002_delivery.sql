-- Delivery (DESIGN C): endpoint health, where the retry schedule starts over, and indexes for claiming.

-- No row means healthy. A service's push and event URLs are one endpoint: one partner integration,
-- so that holding it keeps the whole (service, device) order intact.
CREATE TABLE delivery_endpoints (
  service_id      text PRIMARY KEY REFERENCES services (service_id),
  failing_since   double precision,          -- first failure since the last success
  disabled_at     double precision,
  disabled_reason text CHECK (disabled_reason IN ('gone', 'failing'))
);

-- The attempts count when the message was last resent, recovered or released: its schedule restarts there.
ALTER TABLE outbox ADD COLUMN schedule_start integer NOT NULL DEFAULT 0;

-- A device queue's open messages in order: a claim asks whether anything earlier is still open.
CREATE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE status IN ('pending', 'delivering', 'held');
-- Leases to take back from a node that died or stalled.
CREATE INDEX outbox_leased ON outbox (lease_expires_at) WHERE status = 'delivering';
-- Holding and releasing one service's messages.
CREATE INDEX outbox_service_status ON outbox (service_id, status);
-- The sweeper of expired event subscriptions.
CREATE INDEX event_subscriptions_expiry ON event_subscriptions (expires_at);
