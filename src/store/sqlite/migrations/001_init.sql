-- The whole state of DESIGN A–C. Times are epoch milliseconds (fractional: the clock has microseconds).
-- Explicit INTEGER PRIMARY KEY ids give a stable insertion order (VACUUM may renumber implicit rowids).

CREATE TABLE services (
  service_id         TEXT PRIMARY KEY,
  name               TEXT NOT NULL,
  key_hash           TEXT NOT NULL,
  allowed_devices    TEXT NOT NULL,               -- JSON array of device types
  callback_url       TEXT,
  event_callback_url TEXT,
  enabled            INTEGER NOT NULL DEFAULT 1,
  created_at         REAL NOT NULL
);

-- In clear: the delivery engine signs with them. A rotated-out secret keeps working until expires_at.
CREATE TABLE webhook_secrets (
  id         INTEGER PRIMARY KEY,
  service_id TEXT NOT NULL REFERENCES services (service_id),
  secret     TEXT NOT NULL,
  created_at REAL NOT NULL,
  expires_at REAL
);
CREATE INDEX webhook_secrets_service ON webhook_secrets (service_id);

CREATE TABLE users (
  user_number  TEXT PRIMARY KEY,
  country_code TEXT NOT NULL,
  created_at   REAL NOT NULL
);

-- No foreign key to users: a deleted user's tokens stay, revoked, so they answer 1202 rather than 1103.
CREATE TABLE access_tokens (
  token_hash     TEXT PRIMARY KEY,
  user_number    TEXT NOT NULL,
  service_id     TEXT NOT NULL REFERENCES services (service_id),
  expires_at     REAL NOT NULL,
  created_at     REAL NOT NULL,
  revoked_at     REAL,
  revoked_reason TEXT CHECK (revoked_reason IN ('disconnected', 'revoked'))
);
CREATE INDEX access_tokens_pair ON access_tokens (service_id, user_number);

-- device_list_loaded_at is both "GET /devices was called" and the lifecycle push subscription.
CREATE TABLE connections (
  service_id            TEXT NOT NULL REFERENCES services (service_id),
  user_number           TEXT NOT NULL REFERENCES users (user_number) ON DELETE CASCADE,
  created_at            REAL NOT NULL,
  device_list_loaded_at REAL,
  PRIMARY KEY (service_id, user_number)
);
CREATE INDEX connections_user ON connections (user_number);

CREATE TABLE devices (
  device_id   TEXT PRIMARY KEY,
  device_type TEXT NOT NULL,
  model_name  TEXT NOT NULL,
  alias       TEXT NOT NULL,
  group_id    TEXT,
  secret_hash TEXT NOT NULL,
  virtual     INTEGER NOT NULL,
  online      INTEGER NOT NULL,
  created_at  REAL NOT NULL
);

-- Registrations, in order: the owner first. No cascade from users: a user's devices are unregistered
-- (with their messages) before the user goes.
CREATE TABLE device_users (
  id            INTEGER PRIMARY KEY,
  device_id     TEXT NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
  user_number   TEXT NOT NULL REFERENCES users (user_number),
  registered_at REAL NOT NULL,
  UNIQUE (device_id, user_number)
);
CREATE INDEX device_users_user ON device_users (user_number);

CREATE TABLE device_states (
  device_id TEXT PRIMARY KEY REFERENCES devices (device_id) ON DELETE CASCADE,
  status    TEXT NOT NULL,                        -- JSON in status shape
  version   INTEGER NOT NULL
);

-- A subscription lives only as long as both the connection and the user's registration of the device.
CREATE TABLE push_subscriptions (
  id          INTEGER PRIMARY KEY,
  service_id  TEXT NOT NULL,
  user_number TEXT NOT NULL,
  device_id   TEXT NOT NULL,
  created_at  REAL NOT NULL,
  UNIQUE (service_id, user_number, device_id),
  FOREIGN KEY (service_id, user_number) REFERENCES connections (service_id, user_number) ON DELETE CASCADE,
  FOREIGN KEY (device_id, user_number) REFERENCES device_users (device_id, user_number) ON DELETE CASCADE
);
CREATE INDEX push_subscriptions_device ON push_subscriptions (device_id);

CREATE TABLE event_subscriptions (
  id          INTEGER PRIMARY KEY,
  service_id  TEXT NOT NULL,
  user_number TEXT NOT NULL,
  device_id   TEXT NOT NULL,
  created_at  REAL NOT NULL,
  expires_at  REAL NOT NULL,
  UNIQUE (service_id, user_number, device_id),
  FOREIGN KEY (service_id, user_number) REFERENCES connections (service_id, user_number) ON DELETE CASCADE,
  FOREIGN KEY (device_id, user_number) REFERENCES device_users (device_id, user_number) ON DELETE CASCADE
);
CREATE INDEX event_subscriptions_device ON event_subscriptions (device_id);

-- No foreign key to devices: messages outlive the device they are about.
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
  UNIQUE (service_id, device_id, sequence)
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX outbox_service_created ON outbox (service_id, created_at);

-- Kept when the device goes, so a re-registered device id continues its order.
CREATE TABLE message_sequences (
  service_id    TEXT NOT NULL,
  device_id     TEXT NOT NULL,
  last_sequence INTEGER NOT NULL,
  PRIMARY KEY (service_id, device_id)
);

CREATE TABLE delivery_attempts (
  message_id      TEXT NOT NULL REFERENCES outbox (message_id),
  attempt         INTEGER NOT NULL,
  started_at      REAL NOT NULL,
  duration_ms     REAL NOT NULL,
  response_status INTEGER,
  response_body   TEXT,
  error           TEXT,
  PRIMARY KEY (message_id, attempt)
);
