-- The delivery log's order is (created_at, id), newest first, a page at a time from the last message
-- of the previous one. Without id the index bounded a page by created_at alone, and the messages of
-- each time were sorted by id: all of them, however many one change recorded at once. SQLite's index
-- ends in the rowid id already.
CREATE INDEX outbox_service_created_id ON outbox (service_id, created_at, id);
DROP INDEX outbox_service_created;
