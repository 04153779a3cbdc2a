-- Issue 16: outbox_service_status (service_id, status) changed with every status change of every
-- message (claimed, delivered), only for holding and releasing a service's messages. These change
-- only as a message enters or leaves pending (recorded, claimed, retried) or held.
DROP INDEX outbox_service_status;
-- Holding a service's pending messages (at every claim while it cannot take them).
CREATE INDEX outbox_pending ON outbox (service_id) WHERE status = 'pending';
-- Releasing a service's held messages.
CREATE INDEX outbox_held ON outbox (service_id) WHERE status = 'held';
