-- The console's chart reads the last hour of attempts (DESIGN H) without scanning a week of them.
CREATE INDEX delivery_attempts_started ON delivery_attempts (started_at);
