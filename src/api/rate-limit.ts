/** A token bucket per calling service (1306 with Retry-After when empty). Pure apart from the clock. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /** `perSecond` 0 disables limiting. */
  constructor(private readonly perSecond: number, private readonly burst: number) {}

  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait. */
  take(key: string, now: number): number {
    if (this.perSecond === 0) return 0;
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
  }
}
