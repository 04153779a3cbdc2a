-- DESIGN G: a grant revoked (a reused refresh token, a replayed code, RFC 7009) unlinks the pair whose share it is,
-- found by its grant id.
CREATE INDEX device_shares_grant ON device_shares (grant_id);
