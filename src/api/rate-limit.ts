/**
 * Rate limits per calling service (DESIGN J): a token bucket of `burst` tokens refilled at
 * `perSecond`; a request takes one, and an empty bucket answers 1306 with Retry-After.
 *
 * One node holds its buckets in memory, which is exact. Nodes sharing a PostgreSQL database hold one
 * bucket per service there and lease tokens from it in batches of a tenth of a second of the rate,
 * so that the limit holds across the deployment while a request pays no round trip of its own.
 * Pure apart from the lease, which is passed in, and the clock, whose `now` every call is given.
 */
import type { RateLimit } from '../core/model.js';
import type { RateLease, SharedRateLimit } from '../store/store.js';

/** A bucket's tokens after its last change, and when that was (epoch ms). */
export interface Bucket {
  tokens: number;
  at: number;
}

/** The tokens `bucket` holds at `now`, refilled since it was last taken from, at most the burst. */
export function tokensAt(bucket: Bucket, limit: RateLimit, now: number): number {
  return Math.min(limit.burst, bucket.tokens + (Math.max(0, now - bucket.at) * limit.perSecond) / 1000);
}

/**
 * Takes up to `want` whole tokens from `bucket`, refilled up to `now` first; returns how many it
 * took. A clock behind the bucket's refills nothing, so nodes whose clocks differ mint no extra
 * tokens. The PostgreSQL lease (src/store/postgres/postgres-rate-limit.ts) is the same arithmetic in SQL.
 */
export function takeTokens(bucket: Bucket, want: number, limit: RateLimit, now: number): number {
  bucket.tokens = tokensAt(bucket, limit, now);
  bucket.at = Math.max(bucket.at, now);
  const granted = Math.min(want, Math.floor(bucket.tokens));
  bucket.tokens -= granted;
  return granted;
}

/** Whole seconds, at least one, for `ms`: Retry-After's unit. */
function retrySeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** What the limiter says about one request. */
export interface Decision {
  allowed: boolean;
  /** Requests the service may still send at once: X-RateLimit-Remaining. */
  remaining: number;
  /** When refused, the seconds to wait: Retry-After. */
  retryAfter: number;
}

export interface RateLimiter {
  /** Takes a token for one request of `serviceId`. */
  take(serviceId: string, now: number): Decision | Promise<Decision>;
}

/** The buckets of a node that is the whole deployment (SQLite): exact, and never waits. */
export class LocalRateLimiter implements RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  constructor(private readonly limit: RateLimit) {}

  take(serviceId: string, now: number): Decision {
    let bucket = this.#buckets.get(serviceId);
    if (bucket === undefined) {
      bucket = { tokens: this.limit.burst, at: now };
      this.#buckets.set(serviceId, bucket);
    }
    const allowed = takeTokens(bucket, 1, this.limit, now) === 1;
    return { allowed, remaining: Math.floor(bucket.tokens), retryAfter: allowed ? 0 : retrySeconds(((1 - bucket.tokens) * 1000) / this.limit.perSecond) };
  }
}

/** Takes up to `want` tokens from the shared bucket of `serviceId`, as of `now`. */
export type LeaseTokens = (serviceId: string, want: number, now: number) => Promise<RateLease>;

/**
 * How much of the rate a node leases at once. A node asks for a service's tokens at most about ten
 * times a second however busy it is, and what it may hold unspent — lost if it dies, a little over
 * the burst if it rests — is a tenth of a second of the rate.
 */
export const LEASE_PERIOD_MS = 100;

/** One service as this node sees it. */
interface Share {
  /** Tokens this node leased and has not spent yet. */
  stock: number;
  /** What the shared bucket held after this node's last lease, and when that lease was asked for. */
  shared: number;
  sharedAt: number;
  /** No lease is asked for before then: the shared bucket was found short of a batch, or unreachable. */
  askAgainAt: number;
  leasing: Promise<void> | null;
}

/**
 * The buckets of one node among several: each request spends a token leased earlier; once half a
 * batch is left, the next batch is asked for in the background. A node that runs out with its lease
 * in flight waits for it; one that found the shared bucket short refuses until a batch could have
 * been refilled, so that a service over its limit costs at most a lease per period and node. The
 * shared bucket is exact, so the deployment accepts at most `burst` plus the rate, whichever nodes
 * the requests reach; what nodes hold unspent is at most a batch each.
 */
export class LeasedRateLimiter implements RateLimiter {
  readonly #shares = new Map<string, Share>();
  readonly #batch: number;

  /** `onLeaseError` hears a lease that failed; the node then goes on alone at the full rate until the next. */
  constructor(private readonly limit: RateLimit, private readonly lease: LeaseTokens, private readonly onLeaseError: (error: unknown) => void) {
    this.#batch = Math.max(1, Math.min(limit.burst, Math.ceil((limit.perSecond * LEASE_PERIOD_MS) / 1000)));
  }

  take(serviceId: string, now: number): Decision | Promise<Decision> {
    let share = this.#shares.get(serviceId);
    if (share === undefined) {
      share = { stock: 0, shared: this.limit.burst, sharedAt: now, askAgainAt: -Infinity, leasing: null };
      this.#shares.set(serviceId, share);
    }
    return share.stock >= 1 ? this.#spend(serviceId, share, now) : this.#takeLeased(serviceId, share, now);
  }

  #spend(serviceId: string, share: Share, now: number): Decision {
    share.stock -= 1;
    if (share.stock < this.#batch / 2) void this.#startLease(serviceId, share, now);
    const refilled = share.shared + (Math.max(0, now - share.sharedAt) * this.limit.perSecond) / 1000;
    return { allowed: true, remaining: Math.floor(Math.min(this.limit.burst, share.stock + refilled)), retryAfter: 0 };
  }

  async #takeLeased(serviceId: string, share: Share, now: number): Promise<Decision> {
    while (share.stock < 1 && (share.leasing !== null || now >= share.askAgainAt)) {
      await this.#startLease(serviceId, share, now);
    }
    if (share.stock >= 1) return this.#spend(serviceId, share, now);
    return { allowed: false, remaining: 0, retryAfter: retrySeconds(share.askAgainAt - now) };
  }

  /** The lease in flight, or a new one unless the shared bucket is not to be asked yet. */
  #startLease(serviceId: string, share: Share, now: number): Promise<void> {
    if (share.leasing !== null) return share.leasing;
    if (now < share.askAgainAt) return Promise.resolve();
    const want = this.#batch - share.stock;
    share.leasing = this.lease(serviceId, want, now).then(
      ({ granted, tokens }) => {
        share.stock += granted;
        share.shared = tokens;
        share.sharedAt = now;
        // Short of the batch: the bucket is empty but for a fraction, and gets a batch back in this long.
        if (granted < want) share.askAgainAt = now + ((this.#batch - tokens) * 1000) / this.limit.perSecond;
      },
      (error: unknown) => {
        this.onLeaseError(error);
        // Without the database the node limits alone, at the full rate, and asks again a period later.
        share.stock += want;
        share.askAgainAt = now + LEASE_PERIOD_MS;
      },
    ).finally(() => {
      share.leasing = null;
    });
    return share.leasing;
  }
}

/**
 * The limiter of one node: leased from the store's shared buckets where the store has them (several
 * nodes on PostgreSQL), in memory otherwise; none when `limit.perSecond` is 0 (limiting disabled).
 */
export function rateLimiterFor(limit: RateLimit, shared: SharedRateLimit | null, onLeaseError: (error: unknown) => void): RateLimiter | null {
  if (limit.perSecond === 0) return null;
  if (!shared) return new LocalRateLimiter(limit);
  const lease: LeaseTokens = (serviceId, want, now) => shared.leaseRateTokens(serviceId, want, limit, now);
  return new LeasedRateLimiter(limit, lease, onLeaseError);
}
