-- Issue 16: recording a message read its subscribers and its service's endpoint from the database
-- each time, a fifth of a control's statements, though they change rarely. The store keeps what it
-- read while this number stands; every change they depend on moves it, from this process or any
-- other on the file (the admin CLI), so one read of it per transaction says whether what is kept holds.
CREATE TABLE recording_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n  INTEGER NOT NULL
);
INSERT INTO recording_generation (id, n) VALUES (1, 0);

-- Who subscribed, until when (a renewal moves expires_at), and whether a user's consent still holds the device.
CREATE TRIGGER event_subscriptions_insert AFTER INSERT ON event_subscriptions BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER event_subscriptions_update AFTER UPDATE ON event_subscriptions BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER event_subscriptions_delete AFTER DELETE ON event_subscriptions BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER device_shares_insert AFTER INSERT ON device_shares BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER device_shares_update AFTER UPDATE ON device_shares BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER device_shares_delete AFTER DELETE ON device_shares BEGIN UPDATE recording_generation SET n = n + 1; END;
-- The allowed device types, callback URLs and whether the service is enabled.
CREATE TRIGGER services_insert AFTER INSERT ON services BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER services_update AFTER UPDATE ON services BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER services_delete AFTER DELETE ON services BEGIN UPDATE recording_generation SET n = n + 1; END;
-- Whether the endpoint is disabled; not its failing streak, which every failed attempt writes.
CREATE TRIGGER delivery_endpoints_insert AFTER INSERT ON delivery_endpoints BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER delivery_endpoints_update AFTER UPDATE OF disabled_at ON delivery_endpoints BEGIN UPDATE recording_generation SET n = n + 1; END;
CREATE TRIGGER delivery_endpoints_delete AFTER DELETE ON delivery_endpoints BEGIN UPDATE recording_generation SET n = n + 1; END;
