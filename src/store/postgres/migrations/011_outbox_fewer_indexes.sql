-- Issue 16: every write of an outbox row that changes its status writes a new version of it, and an
-- entry for that version in each index whose predicate it matches (none of those writes can be HOT:
-- status is in every partial index's predicate). A delivered message is written four times (recorded,
-- made its queue's head, leased, delivered); these two indexes took an entry at each.

-- One index of each queue's open messages in order, unique: what the full unique constraint kept was
-- the same for the open messages, and the closed ones only ever had their numbers from the queue's
-- counter, which never goes back (their uniqueness held by construction, at the cost of an entry per
-- version of every message, history included).
DROP INDEX outbox_open;
CREATE UNIQUE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE status IN ('pending', 'delivering', 'held');
ALTER TABLE outbox DROP CONSTRAINT outbox_service_id_device_id_sequence_key;

-- Holding and releasing read a service's pending or held messages, never its leased or closed ones:
-- those no longer take an entry.
CREATE INDEX outbox_waiting ON outbox (service_id, status) WHERE status IN ('pending', 'held');
DROP INDEX outbox_service_status;
