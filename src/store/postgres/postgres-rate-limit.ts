/**
 * The rate-limit buckets that the nodes on one database share (DESIGN J): a lease refills the
 * service's bucket up to `now`, then takes as many whole tokens as it holds, up to what was asked.
 * The arithmetic is `takeTokens` of src/api/rate-limit.ts, in one statement that locks the row.
 */
import type { RateLimit } from '../../core/model.js';
import type { RateLease } from '../store.js';
import type { Sql } from './database.js';

/** The bucket refilled up to $5 (now) at $4 per second, at most $3 (burst); a clock behind refills nothing. */
const REFILLED = 'least($3::float8, b.tokens + greatest(0, $5::float8 - b.updated_at) * $4::float8 / 1000)';
const GRANTED = `least($2::float8, floor(${REFILLED}))`;

/** One statement: a new bucket starts full; an existing one's values are read under its row lock. */
const LEASE = `INSERT INTO rate_limit_buckets AS b (service_id, tokens, updated_at, granted)
  VALUES ($1, $3::float8 - least($2::float8, $3::float8), $5::float8, least($2::float8, $3::float8))
  ON CONFLICT (service_id) DO UPDATE SET
    granted = ${GRANTED},
    tokens = ${REFILLED} - ${GRANTED},
    updated_at = greatest(b.updated_at, $5::float8)
  RETURNING granted, tokens`;

export async function leaseRateTokens(sql: Sql, serviceId: string, want: number, limit: RateLimit, now: number): Promise<RateLease> {
  // An upsert returns its row, inserted or updated.
  return (await sql.all<RateLease>(LEASE, serviceId, want, limit.burst, limit.perSecond, now))[0]!;
}
