-- Issue 16: UNIQUE (service_id, device_id, sequence) kept a second index with outbox_open's key over
-- the whole history, so each message recorded dirtied one more index page per queue: with 50 devices
-- controlled in one group commit, a third of the pages it wrote. A sequence is unique by construction:
-- message_sequences reserves it in the transaction that records the message. SQLite cannot drop a
-- table's constraint, so the table is built again, with the same columns and the other indexes.
-- The rows wait in a copy meanwhile. Deferred, the foreign key of delivery_attempts is checked at commit,
-- and each row put back into outbox (the name it references) answers for the attempts of its message.
PRAGMA defer_foreign_keys = ON;

CREATE TEMP TABLE outbox_copy AS SELECT id, message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts,
  next_attempt_at, created_at, delivered_at, lease_owner, lease_expires_at, fencing_token, schedule_start, queue_head
FROM outbox;

DROP TABLE outbox;

CREATE TABLE outbox (
  id               INTEGER PRIMARY KEY,
  message_id       TEXT NOT NULL UNIQUE,
  service_id       TEXT NOT NULL REFERENCES services (service_id),
  device_id        TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('push', 'event')),
  push_type        TEXT NOT NULL,
  sequence         INTEGER NOT NULL,
  body             TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivering', 'delivered', 'failed', 'held')),
  attempts         INTEGER NOT NULL DEFAULT 0,  -- never reset, so (message_id, attempt) stays unique
  next_attempt_at  REAL NOT NULL,
  created_at       REAL NOT NULL,
  delivered_at     REAL,
  lease_owner      TEXT,
  lease_expires_at REAL,
  fencing_token    INTEGER NOT NULL DEFAULT 0,
  schedule_start   INTEGER NOT NULL DEFAULT 0,
  queue_head       INTEGER NOT NULL DEFAULT 0
);

INSERT INTO outbox (id, message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts,
  next_attempt_at, created_at, delivered_at, lease_owner, lease_expires_at, fencing_token, schedule_start, queue_head)
SELECT id, message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts,
  next_attempt_at, created_at, delivered_at, lease_owner, lease_expires_at, fencing_token, schedule_start, queue_head
FROM outbox_copy ORDER BY id;

DROP TABLE outbox_copy;

CREATE INDEX outbox_service_created ON outbox (service_id, created_at);
CREATE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE status IN ('pending', 'delivering', 'held');
CREATE INDEX outbox_ready ON outbox (service_id, next_attempt_at, id) WHERE status = 'pending' AND queue_head = 1;
CREATE INDEX outbox_leases ON outbox (lease_expires_at) WHERE status = 'delivering';
CREATE INDEX outbox_closed ON outbox (created_at) WHERE status IN ('delivered', 'failed');
CREATE INDEX outbox_pending ON outbox (service_id) WHERE status = 'pending';
CREATE INDEX outbox_held ON outbox (service_id) WHERE status = 'held';
