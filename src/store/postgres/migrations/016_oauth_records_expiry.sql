-- Expired authorization records (codes, tokens, sessions, interactions) were never deleted: every
-- sign-in and every token refresh left rows behind. The sweeper deletes them in batches by expiry.
CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;
