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
import { takeTokens, tokensAt, type Bucket } from '../api/rate-limit.js';

/** Five attempts at once, then one a minute. */
export const SIGN_IN_LIMIT: RateLimit = { burst: 5, perSecond: 1 / 60 };

/**
 * Emails remembered at most: past that the bucket holding the most tokens now goes (spraying many
 * emails cannot grow memory, nor push out the bucket of the email being guessed, which holds the fewest).
 */
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
      if (this.#buckets.size >= MAX_EMAILS) this.#buckets.delete(this.#leastTelling(now));
      bucket = { tokens: this.limit.burst, at: now };
      this.#buckets.set(key, bucket);
    }
    if (takeTokens(bucket, 1, this.limit, now) === 1) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.perSecond)) };
  }

  /**
   * The email whose bucket holds the most tokens at `now`, the first of them (the oldest): a full one
   * says no more than none. A scan of MAX_EMAILS, only while the map is full: far less than the
   * password hash of the attempt that asks.
   */
  #leastTelling(now: number): string {
    let chosen = '';
    let most = -1;
    for (const [key, bucket] of this.#buckets) {
      const tokens = tokensAt(bucket, this.limit, now);
      if (tokens > most) [chosen, most] = [key, tokens];
      if (tokens >= this.limit.burst) break;
    }
    return chosen;
  }

  /** The owner proved who they are: their earlier failures no longer count. */
  forgive(email: string): void {
    this.#buckets.delete(email.slice(0, MAX_EMAIL_LENGTH));
  }
}

/**
 * The sign-ins of this node checking a password at once, and waiting to. Each check is a password
 * hash (~50 ms and 32 MiB of scrypt on libuv's four threads, which delivery's address lookups
 * share), and an email made up for each attempt passes every per-email bucket: past these bounds a
 * sign-in is refused at once, before any hash, and the threads keep room for the rest.
 */
export class HashGate {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    private readonly atOnce = 2,
    private readonly inLine = 32,
  ) {}

  /** Whether a sign-in asked now would be refused: as many running and waiting as the bounds allow. */
  get full(): boolean {
    return this.#running >= this.atOnce && this.#waiting.length >= this.inLine;
  }

  /** Runs `check` once fewer than `atOnce` run; call only when not `full`. */
  async run<T>(check: () => Promise<T>): Promise<T> {
    if (this.#running >= this.atOnce) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running += 1;
    try {
      return await check();
    } finally {
      // The slot passes to the first waiting, counted as running still.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
