-- Issue 12 (DESIGN J): delivered and failed messages older than MESSAGE_RETENTION are deleted in small
-- batches, oldest first. This index finds them without reading the open messages or the newer ones.
CREATE INDEX outbox_closed ON outbox (created_at) WHERE status IN ('delivered', 'failed');
