-- Owners, account linking and consent (DESIGN G; src/store/areas/oauth.ts).

-- The authorization server's artifacts, opaque: keyed by kind and the SHA-256 of the id.
CREATE TABLE oauth_records (
  model       TEXT NOT NULL,
  key         TEXT NOT NULL,
  payload     TEXT NOT NULL,
  grant_id    TEXT,
  user_code   TEXT,
  uid         TEXT,
  expires_at  REAL,
  consumed_at REAL,
  PRIMARY KEY (model, key)
);
CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_records_user_code ON oauth_records (user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oauth_records_uid ON oauth_records (uid) WHERE uid IS NOT NULL;

-- What an owner shared with a linked service; device_ids NULL: every device of its allowed types.
CREATE TABLE device_shares (
  service_id  TEXT NOT NULL REFERENCES services (service_id) ON DELETE CASCADE,
  user_number TEXT NOT NULL REFERENCES users (user_number) ON DELETE CASCADE,
  grant_id    TEXT NOT NULL,
  scopes      TEXT NOT NULL,              -- JSON array
  device_ids  TEXT,                       -- JSON array
  created_at  REAL NOT NULL,
  PRIMARY KEY (service_id, user_number)
);
CREATE INDEX device_shares_user ON device_shares (user_number);

CREATE TABLE owner_logins (
  user_number   TEXT PRIMARY KEY REFERENCES users (user_number) ON DELETE CASCADE,
  email         TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL
);

CREATE TABLE oauth_clients (
  service_id    TEXT PRIMARY KEY REFERENCES services (service_id) ON DELETE CASCADE,
  redirect_uris TEXT NOT NULL             -- JSON array
);

CREATE TABLE shared_secrets (
  name   TEXT PRIMARY KEY,
  secret TEXT NOT NULL
);
