import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { RequestDurations, serviceLabeller } from '../src/metrics.js';

describe('delivery metric labels', () => {
  it('name the first services seen, and count the rest as other, so that series stay bounded', () => {
    const label = serviceLabeller(2);
    expect(['svc_a', 'svc_b', 'svc_c', 'svc_a', 'svc_d'].map(label)).toEqual(['svc_a', 'svc_b', 'other', 'svc_a', 'other']);
  });
});

describe('request latency (http_request_duration_seconds)', () => {
  it('exports on /metrics what a prom-client Histogram with the same labels and buckets exports for the same requests', async () => {
    const observed: [string, string, number, number][] = [
      ['GET', '/devices/:deviceId', 200, 0.0004],
      ['GET', '/devices/:deviceId', 200, 0.0005],
      ['GET', '/devices/:deviceId', 200, 0.003],
      ['GET', '/devices/:deviceId', 404, 0.02],
      ['POST', '/devices/:deviceId', 200, 0.7],
      ['POST', '/devices/:deviceId', 200, 11],
    ];
    const ours = new Registry();
    const durations = new RequestDurations(ours);
    const theirs = new Registry();
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Latency of HTTP requests by route',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [...RequestDurations.BUCKETS],
      registers: [theirs],
    });
    for (const [method, route, status, seconds] of observed) {
      durations.observe(method, route, status, seconds);
      histogram.observe({ method, route, status_code: String(status) }, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('_count');
  });
});
