import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptDelay, parseRetryAfter, parseRetrySchedule } from '../../src/delivery/schedule.js';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const middle = (): number => 0.5;

describe('parseRetrySchedule', () => {
  it('parses the default schedule of DESIGN C', () => {
    const schedule = parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h');
    expect(schedule).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    expect(DEFAULT_RETRY_SCHEDULE).toEqual(schedule);
  });

  it('knows ms, s, m, h and d, fractions and spaces around items', () => {
    expect(parseRetrySchedule(' 250ms, 1.5s ,2d,0s')).toEqual([250, 1500, 48 * H, 0]);
  });

  it.each(['', '5', '5x', '5s,,5m', '5s,', '-5s', '5 s', 'soon'])('refuses %j with a clear error', (text) => {
    expect(() => parseRetrySchedule(text)).toThrow(/is not a duration such as 5s/);
  });
});

describe('nextAttemptDelay', () => {
  const schedule = [5 * S, 5 * M, 30 * M];

  it('takes the delay after attempt n from the nth entry, then is exhausted', () => {
    expect(schedule.map((_, index) => nextAttemptDelay(index + 1, schedule, middle))).toEqual(schedule);
    expect(nextAttemptDelay(4, schedule, middle)).toBeNull();
    expect(nextAttemptDelay(8, DEFAULT_RETRY_SCHEDULE, middle)).toBeNull();
    expect(() => nextAttemptDelay(0, schedule, middle)).toThrow(RangeError);
  });

  it('stays within ±20 % jitter over many draws, reaching both ends', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, draw) => {
        const base = DEFAULT_RETRY_SCHEDULE[attempt - 1] ?? Number.NaN;
        const delay = nextAttemptDelay(attempt, DEFAULT_RETRY_SCHEDULE, () => draw) ?? Number.NaN;
        expect(delay).toBeGreaterThanOrEqual(Math.round(base * 0.8));
        expect(delay).toBeLessThanOrEqual(Math.round(base * 1.2));
      }),
      { numRuns: 2_000 },
    );
    expect(nextAttemptDelay(1, schedule, () => 0)).toBe(4 * S);
    expect(nextAttemptDelay(1, schedule, () => 0.999_999_9)).toBe(6 * S);
  });

  it('waits at least a Retry-After, capped at the longest step of the schedule', () => {
    expect(nextAttemptDelay(1, schedule, middle, 60 * S)).toBe(60 * S);
    expect(nextAttemptDelay(2, schedule, middle, 60 * S)).toBe(5 * M);
    expect(nextAttemptDelay(1, schedule, middle, 24 * H)).toBe(30 * M);
    expect(nextAttemptDelay(1, schedule, middle, 0)).toBe(5 * S);
    expect(nextAttemptDelay(4, schedule, middle, 60 * S)).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(1994, 10, 6, 8, 48, 37);

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120 * S);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it.each(['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994'])(
    'reads the HTTP-date %j as the time until then',
    (value) => {
      expect(parseRetryAfter(value, now)).toBe(60 * S);
    },
  );

  it('reads a date in the past as no wait', () => {
    expect(parseRetryAfter(new Date(now - H).toUTCString(), now)).toBe(0);
  });

  it.each([undefined, '', 'soon', '1.5', '-3', '12abc', 'Sun, 99 Foo 1994 GMT'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
