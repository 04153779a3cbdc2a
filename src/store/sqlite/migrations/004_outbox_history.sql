-- Issue 12: the outbox with a long history behind it.

-- Delivered and failed messages older than MESSAGE_RETENTION are deleted in small batches, oldest
-- first (DESIGN J). This index finds them without reading the open messages or the newer ones.
CREATE INDEX outbox_closed ON outbox (created_at) WHERE status IN ('delivered', 'failed');
