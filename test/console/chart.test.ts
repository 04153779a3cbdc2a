/** The overview's chart: one bar per minute with attempts, the latency line, and an empty hour said in words. */
import { describe, expect, it } from 'vitest';
import { attemptsChart } from '../../src/console/chart.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 30);
const MINUTE = 60_000;
const thisMinute = Math.floor(NOW / MINUTE) * MINUTE;

describe('attemptsChart', () => {
  it('says so when the hour had no attempt', () => {
    const svg = attemptsChart([], NOW).text;
    expect(svg).toContain('No delivery attempts in the last hour');
    expect(svg).not.toContain('<rect');
  });

  it('draws each minute with attempts as delivered over failed, and the mean latency', () => {
    const svg = attemptsChart([
      { minute: thisMinute - 10 * MINUTE, attempts: 4, succeeded: 3, meanMs: 40, maxMs: 90 },
      { minute: thisMinute, attempts: 2, succeeded: 0, meanMs: 120, maxMs: 150 },
      // Older than the hour: left out.
      { minute: thisMinute - 90 * MINUTE, attempts: 9, succeeded: 9, meanMs: 1, maxMs: 1 },
    ], NOW).text;
    expect(svg.match(/<g><title>/g)).toHaveLength(2);
    expect(svg).toContain('11:50 UTC: 4 attempts, 1 failed, mean 40 ms');
    expect(svg).toContain('12:00 UTC: 2 attempts, 2 failed, mean 120 ms');
    expect(svg).toContain('<polyline');
    expect(svg).toContain('>120 ms</text>');
    expect(svg).toContain('over the last hour: 6 attempts, 3 failed');
  });
});
