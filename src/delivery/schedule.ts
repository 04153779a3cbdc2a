/** When to try a delivery again: a list of delays, jittered, stretched by the receiver's Retry-After. */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
/** An HTTP-date in any of its three forms starts with a day name (RFC 9110 §5.6.7). */
const HTTP_DATE = /^[A-Za-z]{3,9},? /;
const JITTER = 0.2;

/** Parses `"5s,5m,30m,2h"` into delays in milliseconds; units ms, s, m, h, d. */
export function parseRetrySchedule(text: string): number[] {
  return text.split(',').map((item) => {
    const ms = parseDuration(item);
    if (ms === undefined) {
      throw new Error(`retry schedule "${text}": "${item.trim()}" is not a duration such as 5s, 30m or 2h (units ms, s, m, h, d)`);
    }
    return ms;
  });
}

/** `"7d"`, `"30m"`, `"250ms"` in milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  return match ? Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]) : undefined;
}

/** DESIGN C: retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then the delivery is failed. */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = Object.freeze(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h'));

/**
 * The wait after failed attempt number `attemptNumber` (1 = the first try), or null when the
 * schedule is exhausted and the delivery is failed. The scheduled delay gets ±20 % jitter; a
 * Retry-After makes it at least that long, but never longer than the schedule's longest step, so a
 * receiver cannot park its own queue (and the messages ordered behind it) beyond our own backoff.
 */
export function nextAttemptDelay(
  attemptNumber: number,
  schedule: readonly number[],
  random: () => number,
  retryAfterMs?: number,
): number | null {
  if (!Number.isSafeInteger(attemptNumber) || attemptNumber < 1) {
    throw new RangeError(`attempt numbers start at 1, got ${attemptNumber}`);
  }
  const scheduled = schedule[attemptNumber - 1];
  if (scheduled === undefined) return null;
  const jittered = Math.round(scheduled * (1 + (random() * 2 - 1) * JITTER));
  if (retryAfterMs === undefined || !(retryAfterMs > 0)) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, Math.max(...schedule)));
}

/** A Retry-After header (delay-seconds or an HTTP-date) as milliseconds from `nowMs`; undefined if absent or junk. */
export function parseRetryAfter(headerValue: string | undefined, nowMs: number): number | undefined {
  const value = headerValue?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) {
    const seconds = Number(value);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  if (!HTTP_DATE.test(value)) return undefined;
  // asctime dates name no zone, but every HTTP-date is GMT; JavaScript would read local time.
  const at = Date.parse(value.endsWith('GMT') ? value : `${value} GMT`);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil(at - nowMs));
}
