-- Issue 16: a service that cannot take its messages (no callback URL, endpoint disabled) has them
-- recorded held, and outbox_open kept each under its queue: with a backlog, every group of controls
-- dirtied one leaf of it per device (41 of the 69 pages a group wrote). A held message recorded
-- behind a held message of its queue is parked now (queue_head = -1) and left out of outbox_open:
-- the held one before it holds the queue back already. A release or a resend unparks them.
DROP INDEX outbox_open;
CREATE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE queue_head >= 0 AND status IN ('pending', 'delivering', 'held');
