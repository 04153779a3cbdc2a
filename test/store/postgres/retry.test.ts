import { describe, expect, it } from 'vitest';
import { MAX_RUNS, retryDelayMs, retryReason } from '../../../src/store/postgres/retry.js';

describe('PostgreSQL retries', () => {
  it('runs again a transaction aborted for a serialization failure or a deadlock, and nothing else', () => {
    expect(retryReason({ code: '40001' })).toBe('serialization');
    expect(retryReason({ code: '40P01' })).toBe('deadlock');
    for (const other of [{ code: '23505' }, { code: '57014' }, { code: 'constructor' }, { code: 40001 }, new Error('40P01'), null, undefined, '40001']) {
      expect(retryReason(other)).toBeUndefined();
    }
  });

  it('waits a little, at random, longer after each loss, at most 150 ms in all', () => {
    expect(retryDelayMs(1, () => 0)).toBe(0);
    expect([1, 2, 3, 4].map((retry) => retryDelayMs(retry, () => 1))).toEqual([10, 20, 40, 80]);
    expect(retryDelayMs(2, () => 0.5)).toBe(10);
    const longest = Array.from({ length: MAX_RUNS - 1 }, (_, i) => retryDelayMs(i + 1, () => 1)).reduce((sum, ms) => sum + ms, 0);
    expect(longest).toBe(150);
  });
});
