/**
 * Sign-in attempts per owner's email: a token bucket of SIGN_IN_LIMIT, one token per attempt, the
 * bucket forgotten once the right password is given. Guessing one owner's password slows to one
 * try a minute after the first few, and a refused attempt costs no password hash (each is ~50 ms of
 * scrypt on libuv's threads, which delivery's address checks share).
 *
 * Keyed by email, not by client address: behind the TLS proxy DESIGN E puts in front, every owner
 * would share the proxy's. Each node keeps its own buckets, so N nodes allow N times the rate.
 */
import type { RateLimit } from '../core/model.js';
import { takeTokens, type Bucket } from '../api/rate-limit.js';

/** Five attempts at once, then one a minute. */
export const SIGN_IN_LIMIT: RateLimit = { burst: 5, perSecond: 1 / 60 };

/** Emails remembered at most: past that the oldest bucket goes (spraying many emails cannot grow memory). */
const MAX_EMAILS = 10_000;
/** An address is at most 320 characters (64 + @ + 255): a longer one is counted by its first 320. */
const MAX_EMAIL_LENGTH = 320;

export type SignInVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class SignInThrottle {
  readonly #buckets = new Map<string, Bucket>();

  constructor(private readonly limit: RateLimit = SIGN_IN_LIMIT) {}

  /** Takes an attempt for `email` (normalized) at `now` (epoch ms). */
  take(email: string, now: number): SignInVerdict {
    const key = email.slice(0, MAX_EMAIL_LENGTH);
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= MAX_EMAILS) this.#buckets.delete(this.#buckets.keys().next().value!);
      bucket = { tokens: this.limit.burst, at: now };
      this.#buckets.set(key, bucket);
    }
    if (takeTokens(bucket, 1, this.limit, now) === 1) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.perSecond)) };
  }

  /** The owner proved who they are: their earlier failures no longer count. */
  forgive(email: string): void {
    this.#buckets.delete(email.slice(0, MAX_EMAIL_LENGTH));
  }
}
