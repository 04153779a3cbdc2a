-- The whole state of DESIGN A–C, the same tables as sqlite/migrations/001_init.sql.
-- Times are epoch milliseconds in double precision: the clock has microseconds, which bigint would drop.
-- Identity ids give a stable insertion order where the store lists "in the order they were added".

CREATE TABLE services (
  service_id         text PRIMARY KEY,
  name               text NOT NULL,
  key_hash           text NOT NULL,
  allowed_devices    text[] NOT NULL,
  callback_url       text,
  event_callback_url text,
  enabled            boolean NOT NULL DEFAULT true,
  created_at         double precision NOT NULL
);

-- In clear: the delivery engine signs with them. A rotated-out secret keeps working until expires_at.
CREATE TABLE webhook_secrets (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service_id text NOT NULL REFERENCES services (service_id),
  secret     text NOT NULL,
  created_at double precision NOT NULL,
  expires_at double precision
);
CREATE INDEX webhook_secrets_service ON webhook_secrets (service_id);

CREATE TABLE users (
  user_number  text PRIMARY KEY,
  country_code text NOT NULL,
  created_at   double precision NOT NULL
);

-- No foreign key to users: a deleted user's tokens stay, revoked, so they answer 1202 rather than 1103.
CREATE TABLE access_tokens (
  token_hash     text PRIMARY KEY,
  user_number    text NOT NULL,
  service_id     text NOT NULL REFERENCES services (service_id),
  expires_at     double precision NOT NULL,
  created_at     double precision NOT NULL,
  revoked_at     double precision,
  revoked_reason text CHECK (revoked_reason IN ('disconnected', 'revoked'))
);
CREATE INDEX access_tokens_pair ON access_tokens (service_id, user_number);
CREATE INDEX access_tokens_user ON access_tokens (user_number);  -- deleteUser revokes by user

-- device_list_loaded_at is both "GET /devices was called" and the lifecycle push subscription.
CREATE TABLE connections (
  service_id            text NOT NULL REFERENCES services (service_id),
  user_number           text NOT NULL REFERENCES users (user_number) ON DELETE CASCADE,
  created_at            double precision NOT NULL,
  device_list_loaded_at double precision,
  PRIMARY KEY (service_id, user_number)
);
CREATE INDEX connections_user ON connections (user_number);

CREATE TABLE devices (
  device_id   text PRIMARY KEY,
  device_type text NOT NULL,
  model_name  text NOT NULL,
  alias       text NOT NULL,
  group_id    text,
  secret_hash text NOT NULL,
  virtual     boolean NOT NULL,
  online      boolean NOT NULL,
  created_at  double precision NOT NULL
);
-- /metrics counts connected devices on every scrape.
CREATE INDEX devices_online ON devices (device_id) WHERE online;

-- Registrations, in order: the owner first. No cascade from users: a user's devices are unregistered
-- (with their messages) before the user goes.
CREATE TABLE device_users (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  device_id     text NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
  user_number   text NOT NULL REFERENCES users (user_number),
  registered_at double precision NOT NULL,
  UNIQUE (device_id, user_number)
);
CREATE INDEX device_users_user ON device_users (user_number);

-- The status as the exact JSON text it was given (jsonb would reorder its keys).
CREATE TABLE device_states (
  device_id text PRIMARY KEY REFERENCES devices (device_id) ON DELETE CASCADE,
  status    text NOT NULL,
  version   integer NOT NULL
);

-- A subscription lives only as long as both the connection and the user's registration of the device.
CREATE TABLE push_subscriptions (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service_id  text NOT NULL,
  user_number text NOT NULL,
  device_id   text NOT NULL,
  created_at  double precision NOT NULL,
  UNIQUE (service_id, user_number, device_id),
  FOREIGN KEY (service_id, user_number) REFERENCES connections (service_id, user_number) ON DELETE CASCADE,
  FOREIGN KEY (device_id, user_number) REFERENCES device_users (device_id, user_number) ON DELETE CASCADE
);
CREATE INDEX push_subscriptions_device ON push_subscriptions (device_id);

CREATE TABLE event_subscriptions (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service_id  text NOT NULL,
  user_number text NOT NULL,
  device_id   text NOT NULL,
  created_at  double precision NOT NULL,
  expires_at  double precision NOT NULL,
  UNIQUE (service_id, user_number, device_id),
  FOREIGN KEY (service_id, user_number) REFERENCES connections (service_id, user_number) ON DELETE CASCADE,
  FOREIGN KEY (device_id, user_number) REFERENCES device_users (device_id, user_number) ON DELETE CASCADE
);
CREATE INDEX event_subscriptions_device ON event_subscriptions (device_id);

-- No foreign key to devices: messages outlive the device they are about. The body is the exact text to POST.
CREATE TABLE outbox (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id       text NOT NULL UNIQUE,
  service_id       text NOT NULL REFERENCES services (service_id),
  device_id        text NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('push', 'event')),
  push_type        text NOT NULL,
  sequence         integer NOT NULL,
  body             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'delivering', 'delivered', 'failed', 'held')),
  attempts         integer NOT NULL DEFAULT 0,  -- never reset, so (message_id, attempt) stays unique
  next_attempt_at  double precision NOT NULL,
  created_at       double precision NOT NULL,
  delivered_at     double precision,
  lease_owner      text,
  lease_expires_at double precision,
  fencing_token    integer NOT NULL DEFAULT 0,
  UNIQUE (service_id, device_id, sequence)
);
-- Partial: a claim scans only messages waiting to be sent, oldest due first, however many were delivered.
CREATE INDEX outbox_due ON outbox (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX outbox_service_created ON outbox (service_id, created_at);

-- Kept when the device goes, so a re-registered device id continues its order.
CREATE TABLE message_sequences (
  service_id    text NOT NULL,
  device_id     text NOT NULL,
  last_sequence integer NOT NULL,
  PRIMARY KEY (service_id, device_id)
);

CREATE TABLE delivery_attempts (
  message_id      text NOT NULL REFERENCES outbox (message_id),
  attempt         integer NOT NULL,
  started_at      double precision NOT NULL,
  duration_ms     double precision NOT NULL,
  response_status integer,
  response_body   text,
  error           text,
  PRIMARY KEY (message_id, attempt)
);
