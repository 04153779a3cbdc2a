CREATE TABLE access_tokens (
  token_hash text NOT NULL,
  user_number text NOT NULL,
  service_id text NOT NULL,
  expires_at double precision NOT NULL,
  created_at double precision NOT NULL,
  revoked_at double precision,
  revoked_reason text,
  PRIMARY KEY (token_hash)
);

CREATE TABLE connections (
  service_id text NOT NULL,
  user_number text NOT NULL,
  created_at double precision NOT NULL,
  device_list_loaded_at double precision,
  PRIMARY KEY (service_id, user_number)
);

CREATE TABLE delivery_attempts (
  message_id text NOT NULL,
  attempt integer NOT NULL,
  started_at double precision NOT NULL,
  duration_ms double precision NOT NULL,
  response_status integer,
  response_body text,
  error text,
  PRIMARY KEY (message_id, attempt)
);

CREATE TABLE delivery_endpoints (
  service_id text NOT NULL,
  failing_since double precision,
  disabled_at double precision,
  disabled_reason text,
  PRIMARY KEY (service_id)
);

CREATE TABLE device_shares (
  service_id text NOT NULL,
  user_number text NOT NULL,
  grant_id text NOT NULL,
  scopes ARRAY NOT NULL,
  device_ids ARRAY,
  created_at double precision NOT NULL,
  PRIMARY KEY (service_id, user_number)
);

CREATE TABLE device_states (
  device_id text NOT NULL,
  status text NOT NULL,
  version integer NOT NULL,
  PRIMARY KEY (device_id)
);

CREATE TABLE device_users (
  id bigint NOT NULL,
  device_id text NOT NULL,
  user_number text NOT NULL,
  registered_at double precision NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE devices (
  device_id text NOT NULL,
  device_type text NOT NULL,
  model_name text NOT NULL,
  alias text NOT NULL,
  group_id text,
  secret_hash text NOT NULL,
  virtual boolean NOT NULL,
  online boolean NOT NULL,
  created_at double precision NOT NULL,
  PRIMARY KEY (device_id)
);

CREATE TABLE event_subscriptions (
  id bigint NOT NULL,
  service_id text NOT NULL,
  user_number text NOT NULL,
  device_id text NOT NULL,
  created_at double precision NOT NULL,
  expires_at double precision NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE leases (
  name text NOT NULL,
  holder text NOT NULL,
  expires_at double precision NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE message_sequences (
  service_id text NOT NULL,
  device_id text NOT NULL,
  last_sequence integer NOT NULL,
  open_messages integer NOT NULL DEFAULT 0,
  headless boolean NOT NULL DEFAULT false,
  PRIMARY KEY (service_id, device_id)
);

CREATE TABLE oauth_clients (
  service_id text NOT NULL,
  redirect_uris ARRAY NOT NULL,
  PRIMARY KEY (service_id)
);

CREATE TABLE oauth_records (
  model text NOT NULL,
  key text NOT NULL,
  payload text NOT NULL,
  grant_id text,
  user_code text,
  uid text,
  expires_at double precision,
  consumed_at double precision,
  PRIMARY KEY (model, key)
);

CREATE TABLE outbox (
  id bigint NOT NULL,
  message_id text NOT NULL,
  service_id text NOT NULL,
  device_id text NOT NULL,
  kind text NOT NULL,
  push_type text NOT NULL,
  sequence integer NOT NULL,
  body text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at double precision NOT NULL,
  created_at double precision NOT NULL,
  delivered_at double precision,
  lease_owner text,
  lease_expires_at double precision,
  fencing_token integer NOT NULL DEFAULT 0,
  schedule_start integer NOT NULL DEFAULT 0,
  queue_head boolean NOT NULL DEFAULT false,
  PRIMARY KEY (id)
);

CREATE TABLE owner_logins (
  user_number text NOT NULL,
  email text NOT NULL,
  password_hash text NOT NULL,
  PRIMARY KEY (user_number)
);

CREATE TABLE push_subscriptions (
  id bigint NOT NULL,
  service_id text NOT NULL,
  user_number text NOT NULL,
  device_id text NOT NULL,
  created_at double precision NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE rate_limit_buckets (
  service_id text NOT NULL,
  tokens double precision NOT NULL,
  updated_at double precision NOT NULL,
  granted double precision NOT NULL,
  PRIMARY KEY (service_id)
);

CREATE TABLE schema_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at double precision NOT NULL,
  PRIMARY KEY (version)
);

CREATE TABLE services (
  service_id text NOT NULL,
  name text NOT NULL,
  key_hash text NOT NULL,
  allowed_devices ARRAY NOT NULL,
  callback_url text,
  event_callback_url text,
  enabled boolean NOT NULL DEFAULT true,
  created_at double precision NOT NULL,
  PRIMARY KEY (service_id)
);

CREATE TABLE shared_secrets (
  name text NOT NULL,
  secret text NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE shared_settings (
  name text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE users (
  user_number text NOT NULL,
  country_code text NOT NULL,
  created_at double precision NOT NULL,
  PRIMARY KEY (user_number)
);

CREATE TABLE webhook_secrets (
  id bigint NOT NULL,
  service_id text NOT NULL,
  secret text NOT NULL,
  created_at double precision NOT NULL,
  expires_at double precision,
  PRIMARY KEY (id)
);

CREATE INDEX access_tokens_pair ON public.access_tokens USING btree (service_id, user_number);

CREATE INDEX access_tokens_user ON public.access_tokens USING btree (user_number);

CREATE INDEX connections_user ON public.connections USING btree (user_number);

CREATE INDEX delivery_attempts_started ON public.delivery_attempts USING btree (started_at);

CREATE INDEX device_shares_grant ON public.device_shares USING btree (grant_id);

CREATE INDEX device_shares_user ON public.device_shares USING btree (user_number);

CREATE UNIQUE INDEX device_users_device_id_user_number_key ON public.device_users USING btree (device_id, user_number);

CREATE INDEX device_users_user ON public.device_users USING btree (user_number);

CREATE INDEX devices_online ON public.devices USING btree (device_id) WHERE online;

CREATE INDEX event_subscriptions_device ON public.event_subscriptions USING btree (device_id);

CREATE INDEX event_subscriptions_expiry ON public.event_subscriptions USING btree (expires_at);

CREATE UNIQUE INDEX event_subscriptions_service_id_user_number_device_id_key ON public.event_subscriptions USING btree (service_id, user_number, device_id);

CREATE INDEX message_sequences_headless ON public.message_sequences USING btree (service_id, device_id) WHERE headless;

CREATE INDEX oauth_records_expiry ON public.oauth_records USING btree (expires_at) WHERE (expires_at IS NOT NULL);

CREATE INDEX oauth_records_grant ON public.oauth_records USING btree (grant_id) WHERE (grant_id IS NOT NULL);

CREATE INDEX oauth_records_uid ON public.oauth_records USING btree (uid) WHERE (uid IS NOT NULL);

CREATE INDEX oauth_records_user_code ON public.oauth_records USING btree (user_code) WHERE (user_code IS NOT NULL);

CREATE INDEX outbox_closed ON public.outbox USING btree (COALESCE(delivered_at, next_attempt_at)) WHERE (status = ANY (ARRAY['delivered'::text, 'failed'::text]));

CREATE INDEX outbox_lease_expiry ON public.outbox USING btree (lease_expires_at) WHERE (lease_expires_at IS NOT NULL);

CREATE UNIQUE INDEX outbox_message_id_key ON public.outbox USING btree (message_id);

CREATE UNIQUE INDEX outbox_open ON public.outbox USING btree (service_id, device_id, sequence) WHERE (status = ANY (ARRAY['pending'::text, 'delivering'::text, 'held'::text]));

CREATE INDEX outbox_ready ON public.outbox USING btree (service_id, next_attempt_at, id) WHERE ((status = 'pending'::text) AND queue_head);

CREATE INDEX outbox_service_created_id ON public.outbox USING btree (service_id, created_at, id);

CREATE INDEX outbox_waiting ON public.outbox USING btree (service_id, status) WHERE (status = ANY (ARRAY['pending'::text, 'held'::text]));

CREATE UNIQUE INDEX owner_logins_email_key ON public.owner_logins USING btree (email);

CREATE INDEX push_subscriptions_device ON public.push_subscriptions USING btree (device_id);

CREATE UNIQUE INDEX push_subscriptions_service_id_user_number_device_id_key ON public.push_subscriptions USING btree (service_id, user_number, device_id);

CREATE INDEX webhook_secrets_service ON public.webhook_secrets USING btree (service_id);
