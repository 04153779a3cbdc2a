CREATE TABLE access_tokens (
  token_hash TEXT,
  user_number TEXT NOT NULL,
  service_id TEXT NOT NULL,
  expires_at REAL NOT NULL,
  created_at REAL NOT NULL,
  revoked_at REAL,
  revoked_reason TEXT,
  PRIMARY KEY (token_hash)
);

CREATE TABLE connections (
  service_id TEXT NOT NULL,
  user_number TEXT NOT NULL,
  created_at REAL NOT NULL,
  device_list_loaded_at REAL,
  PRIMARY KEY (service_id, user_number)
);

CREATE TABLE delivery_attempts (
  message_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  started_at REAL NOT NULL,
  duration_ms REAL NOT NULL,
  response_status INTEGER,
  response_body TEXT,
  error TEXT,
  PRIMARY KEY (message_id, attempt)
);

CREATE TABLE delivery_endpoints (
  service_id TEXT,
  failing_since REAL,
  disabled_at REAL,
  disabled_reason TEXT,
  PRIMARY KEY (service_id)
);

CREATE TABLE device_shares (
  service_id TEXT NOT NULL,
  user_number TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  device_ids TEXT,
  created_at REAL NOT NULL,
  PRIMARY KEY (service_id, user_number)
);

CREATE TABLE device_states (
  device_id TEXT,
  status TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (device_id)
);

CREATE TABLE device_users (
  id INTEGER,
  device_id TEXT NOT NULL,
  user_number TEXT NOT NULL,
  registered_at REAL NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE devices (
  device_id TEXT,
  device_type TEXT NOT NULL,
  model_name TEXT NOT NULL,
  alias TEXT NOT NULL,
  group_id TEXT,
  secret_hash TEXT NOT NULL,
  virtual INTEGER NOT NULL,
  online INTEGER NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (device_id)
);

CREATE TABLE event_subscriptions (
  id INTEGER,
  service_id TEXT NOT NULL,
  user_number TEXT NOT NULL,
  device_id TEXT NOT NULL,
  created_at REAL NOT NULL,
  expires_at REAL NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE leases (
  name TEXT,
  holder TEXT NOT NULL,
  expires_at REAL NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE message_sequences (
  service_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  last_sequence INTEGER NOT NULL,
  PRIMARY KEY (service_id, device_id)
);

CREATE TABLE oauth_clients (
  service_id TEXT,
  redirect_uris TEXT NOT NULL,
  PRIMARY KEY (service_id)
);

CREATE TABLE oauth_records (
  model TEXT NOT NULL,
  key TEXT NOT NULL,
  payload TEXT NOT NULL,
  grant_id TEXT,
  user_code TEXT,
  uid TEXT,
  expires_at REAL,
  consumed_at REAL,
  PRIMARY KEY (model, key)
);

CREATE TABLE outbox (
  id INTEGER,
  message_id TEXT NOT NULL,
  service_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  push_type TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at REAL NOT NULL,
  created_at REAL NOT NULL,
  delivered_at REAL,
  lease_owner TEXT,
  lease_expires_at REAL,
  fencing_token INTEGER NOT NULL DEFAULT 0,
  schedule_start INTEGER NOT NULL DEFAULT 0,
  queue_head INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (id)
);

CREATE TABLE owner_logins (
  user_number TEXT,
  email TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  PRIMARY KEY (user_number)
);

CREATE TABLE push_subscriptions (
  id INTEGER,
  service_id TEXT NOT NULL,
  user_number TEXT NOT NULL,
  device_id TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE recording_generation (
  id INTEGER,
  n INTEGER NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE schema_migrations (
  version INTEGER,
  name TEXT NOT NULL,
  applied_at REAL NOT NULL,
  PRIMARY KEY (version)
);

CREATE TABLE services (
  service_id TEXT,
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  allowed_devices TEXT NOT NULL,
  callback_url TEXT,
  event_callback_url TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at REAL NOT NULL,
  PRIMARY KEY (service_id)
);

CREATE TABLE shared_secrets (
  name TEXT,
  secret TEXT NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE shared_settings (
  name TEXT,
  value TEXT NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE users (
  user_number TEXT,
  country_code TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (user_number)
);

CREATE TABLE webhook_secrets (
  id INTEGER,
  service_id TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at REAL NOT NULL,
  expires_at REAL,
  PRIMARY KEY (id)
);

CREATE INDEX access_tokens_pair ON access_tokens (service_id, user_number);

CREATE INDEX connections_user ON connections (user_number);

CREATE INDEX delivery_attempts_started ON delivery_attempts (started_at);

CREATE INDEX device_shares_grant ON device_shares (grant_id);

CREATE INDEX device_shares_user ON device_shares (user_number);

CREATE INDEX device_users_user ON device_users (user_number);

CREATE INDEX event_subscriptions_device ON event_subscriptions (device_id);

CREATE INDEX event_subscriptions_expiry ON event_subscriptions (expires_at);

CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;

CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;

CREATE INDEX oauth_records_uid ON oauth_records (uid) WHERE uid IS NOT NULL;

CREATE INDEX oauth_records_user_code ON oauth_records (user_code) WHERE user_code IS NOT NULL;

CREATE INDEX outbox_closed ON outbox (coalesce(delivered_at, next_attempt_at)) WHERE status IN ('delivered', 'failed');

CREATE INDEX outbox_held ON outbox (service_id) WHERE status = 'held';

CREATE INDEX outbox_leases ON outbox (lease_expires_at) WHERE status = 'delivering';

CREATE INDEX outbox_open ON outbox (service_id, device_id, sequence) WHERE queue_head >= 0;

CREATE INDEX outbox_pending ON outbox (service_id) WHERE status = 'pending';

CREATE INDEX outbox_ready ON outbox (service_id, next_attempt_at, id) WHERE status = 'pending' AND queue_head = 1;

CREATE INDEX outbox_service_created ON outbox (service_id, created_at);

CREATE INDEX push_subscriptions_device ON push_subscriptions (device_id);

CREATE INDEX webhook_secrets_service ON webhook_secrets (service_id);
