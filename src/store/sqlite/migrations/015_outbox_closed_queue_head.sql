-- Issue 16: outbox_open's predicate named status, so SQLite rewrote a message's entry when its claim
-- moved it from pending to delivering, though the entry stays the same: with a backlog across many
-- devices, each claimed message dirtied a leaf of its own (65 of the 105 pages a batch of 32
-- outcomes and the claim after them wrote). A delivered or failed message is now closed in
-- queue_head too (-2), and outbox_open is the messages with queue_head >= 0: a claim changes none
-- of its columns. A resend opens a closed message again (queue_head 0, as before).
DROP INDEX outbox_open;
UPDATE outbox SET queue_head = -2 WHERE status IN ('delivered', 'failed');
CREATE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE queue_head >= 0;
