-- Issue 12: one rate-limit bucket per calling service, shared by every node (DESIGN J). Nodes lease
-- tokens from it in batches (src/store/postgres/rate-limit.ts). UNLOGGED: a lease commits without
-- waiting for the WAL, and a crash or a failover that loses the buckets only fills them again.
CREATE UNLOGGED TABLE rate_limit_buckets (
  service_id text PRIMARY KEY,
  -- What the bucket holds after the last lease, and when it was last refilled (epoch ms).
  tokens     double precision NOT NULL,
  updated_at double precision NOT NULL,
  -- What the last lease took: the lease returns it.
  granted    double precision NOT NULL
);
