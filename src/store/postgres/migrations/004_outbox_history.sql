-- Issue 12: the outbox with a long history behind it.

-- Delivered and failed messages older than MESSAGE_RETENTION are deleted in small batches, oldest
-- first (DESIGN J). This index finds them without reading the open messages or the newer ones.
CREATE INDEX outbox_closed ON outbox (created_at) WHERE status IN ('delivered', 'failed');

-- Expired leases, found by their expiry alone: a lease is set exactly while a message is delivering.
-- outbox_leased's predicate (status = 'delivering') is one that outbox_open's implies too, and with
-- history, statistics made the planner walk every open message at each claim to find them.
CREATE INDEX outbox_lease_expiry ON outbox (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
DROP INDEX outbox_leased;
