-- Owners, account linking and consent (DESIGN G; src/store/areas/oauth.ts); as sqlite/migrations/005_oauth.sql.

CREATE TABLE oauth_records (
  model       text NOT NULL,
  key         text NOT NULL,
  payload     text NOT NULL,
  grant_id    text,
  user_code   text,
  uid         text,
  expires_at  double precision,
  consumed_at double precision,
  PRIMARY KEY (model, key)
);
CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_records_user_code ON oauth_records (user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oauth_records_uid ON oauth_records (uid) WHERE uid IS NOT NULL;

-- device_ids NULL: every device of the service's allowed types.
CREATE TABLE device_shares (
  service_id  text NOT NULL REFERENCES services (service_id) ON DELETE CASCADE,
  user_number text NOT NULL REFERENCES users (user_number) ON DELETE CASCADE,
  grant_id    text NOT NULL,
  scopes      text[] NOT NULL,
  device_ids  text[],
  created_at  double precision NOT NULL,
  PRIMARY KEY (service_id, user_number)
);
CREATE INDEX device_shares_user ON device_shares (user_number);

CREATE TABLE owner_logins (
  user_number   text PRIMARY KEY REFERENCES users (user_number) ON DELETE CASCADE,
  email         text NOT NULL UNIQUE,
  password_hash text NOT NULL
);

CREATE TABLE oauth_clients (
  service_id    text PRIMARY KEY REFERENCES services (service_id) ON DELETE CASCADE,
  redirect_uris text[] NOT NULL
);

CREATE TABLE shared_secrets (
  name   text PRIMARY KEY,
  secret text NOT NULL
);
