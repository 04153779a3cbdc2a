-- Retention (DESIGN J, MESSAGE_RETENTION) counts from when a message closed: delivered (delivered_at),
-- or failed at its last attempt (the next_attempt_at it kept), not from when it was recorded. One held
-- a week behind a disabled endpoint and delivered today stays in the log a week more.
DROP INDEX outbox_closed;
CREATE INDEX outbox_closed ON outbox ((coalesce(delivered_at, next_attempt_at))) WHERE status IN ('delivered', 'failed');
