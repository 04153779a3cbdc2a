-- One index fewer for every outbox insert and status change to keep up to date (issue 7).
-- outbox_due (status, next_attempt_at): the claim reads outbox_ready, the stats outbox_open; only the
-- lease expiry still used it, and finds the few messages in flight in outbox_leases instead.
-- outbox_service_status stays: holding and releasing a service's messages seek it at every claim.
DROP INDEX outbox_due;
CREATE INDEX outbox_leases ON outbox (lease_expires_at) WHERE status = 'delivering';
