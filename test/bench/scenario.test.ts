/** The medians every figure of bench/ reports, and how sure a median of a few rounds is. */
import { describe, expect, it } from 'vitest';
import { median, medianInterval } from '../../bench/lib/scenario.js';

/** 1, 2, …, n in a shuffled order: the interval must not depend on the order the rounds came in. */
const shuffled = (n: number) => Array.from({ length: n }, (_, i) => ((i * 7) % n) + 1);

describe('median', () => {
  it('is the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe('medianInterval', () => {
  it('gives ten rounds the second to the ninth value, which hold the median 97.9 % of the time', () => {
    expect(medianInterval(shuffled(10))).toEqual({ low: 2, high: 9, coverage: 1 - 2 * (11 / 1024) });
  });

  it('narrows as rounds are added, keeping at least the level asked for', () => {
    const twenty = medianInterval(shuffled(20));
    expect([twenty.low, twenty.high]).toEqual([6, 15]);
    expect(twenty.coverage).toBeCloseTo(1 - 2 * (21700 / 2 ** 20), 12);
    expect(medianInterval(shuffled(10), 0.85)).toMatchObject({ low: 3, high: 8 });
  });

  it('falls back to the whole range, at the coverage it has, when there are too few rounds for the level', () => {
    expect(medianInterval(shuffled(5))).toEqual({ low: 1, high: 5, coverage: 1 - 2 / 32 });
    expect(medianInterval([1.07])).toEqual({ low: 1.07, high: 1.07, coverage: 0 });
  });

  it('leaves the values it is given as they were', () => {
    const ratios = [1.1, 0.9, 1.0];
    medianInterval(ratios);
    expect(ratios).toEqual([1.1, 0.9, 1.0]);
  });
});
