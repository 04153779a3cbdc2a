/**
 * DESIGN J, rate limits: the token bucket, one node's limiter, nodes leasing from one shared bucket
 * — here an in-memory bucket with the arithmetic the PostgreSQL lease repeats in SQL
 * (test/store/postgres/rate-limit.test.ts holds the SQL to it) — and the headers partners see,
 * through the app on each database (test/cluster/rate-limit.test.ts: two real nodes).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEASE_PERIOD_MS, LeasedRateLimiter, LocalRateLimiter, rateLimiterFor, takeTokens, type Bucket, type Decision, type LeaseTokens } from '../../src/api/rate-limit.js';
import type { Clock } from '../../src/ids.js';
import type { RateLimit } from '../../src/core/model.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe('a token bucket', () => {
  const limit: RateLimit = { perSecond: 10, burst: 20 };

  it('gives whole tokens, as many as it holds up to what is asked', () => {
    const bucket: Bucket = { tokens: 5.5, at: 0 };
    expect(takeTokens(bucket, 3, limit, 0)).toBe(3);
    expect(takeTokens(bucket, 3, limit, 0)).toBe(2);
    expect(bucket.tokens).toBeCloseTo(0.5);
    expect(takeTokens(bucket, 3, limit, 0)).toBe(0);
  });

  it('refills at the rate up to the burst', () => {
    const bucket: Bucket = { tokens: 0, at: 0 };
    expect(takeTokens(bucket, 100, limit, 500)).toBe(5);
    expect(takeTokens(bucket, 100, limit, 60_000)).toBe(20);
  });

  it('refills nothing for a clock behind its last refill, and keeps the later time', () => {
    const bucket: Bucket = { tokens: 0, at: 1000 };
    expect(takeTokens(bucket, 100, limit, 400)).toBe(0);
    expect(bucket.at).toBe(1000);
    expect(takeTokens(bucket, 100, limit, 1100)).toBe(1);
  });
});

describe('the limiter of a single node', () => {
  it('lets a rested service burst, then one request per token refilled, with Retry-After when empty', () => {
    const limiter = new LocalRateLimiter({ perSecond: 2, burst: 3 });
    const decisions = [0, 0, 0, 0].map(() => limiter.take('S1', 0));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]]);
    expect(decisions[3]!.retryAfter).toBe(1);
    expect(limiter.take('S1', 500)).toEqual({ allowed: true, remaining: 0, retryAfter: 0 });
    expect(limiter.take('S2', 500).remaining).toBe(2);
  });
});

describe('the limiter a node uses', () => {
  const limit: RateLimit = { perSecond: 10, burst: 20 };
  const shared = { leaseRateTokens: async () => ({ granted: 1, tokens: 0 }) };

  it('is none when limiting is disabled, local on a store of one node, leased on a shared one', () => {
    expect(rateLimiterFor({ perSecond: 0, burst: 20 }, shared, () => {})).toBeNull();
    expect(rateLimiterFor(limit, null, () => {})).toBeInstanceOf(LocalRateLimiter);
    expect(rateLimiterFor(limit, shared, () => {})).toBeInstanceOf(LeasedRateLimiter);
  });
});

/** Nodes that lease from one shared bucket, counting leases; `down` makes leases fail. */
function cluster(limit: RateLimit, nodes: number) {
  const shared = new Map<string, Bucket>();
  const state = { leases: 0, down: false, errors: 0 };
  const lease: LeaseTokens = async (serviceId, want, now) => {
    state.leases += 1;
    if (state.down) throw new Error('database unreachable');
    const bucket = shared.get(serviceId) ?? { tokens: limit.burst, at: now };
    shared.set(serviceId, bucket);
    const granted = takeTokens(bucket, want, limit, now);
    return { granted, tokens: bucket.tokens };
  };
  const limiters = Array.from({ length: nodes }, () => new LeasedRateLimiter(limit, lease, () => (state.errors += 1)));
  return { limiters, state };
}

/**
 * `perSecond` requests a second for `seconds` (simulated), round-robin over `limiters`, each waiting
 * for its answer as a load balancer's client would; the decisions, in order.
 */
async function drive(limiters: LeasedRateLimiter[], perSecond: number, seconds: number, start = 0): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < perSecond * seconds; i += 1) {
    decisions.push(await limiters[i % limiters.length]!.take('S1', start + (i * 1000) / perSecond));
  }
  return decisions;
}

const accepted = (decisions: Decision[]) => decisions.filter((d) => d.allowed).length;

describe('nodes leasing from one shared bucket', () => {
  const limit: RateLimit = { perSecond: 100, burst: 50 };

  it('hold the limit across two nodes: the burst plus the rate, less at most a batch per node left unspent', async () => {
    const { limiters } = cluster(limit, 2);
    const got = accepted(await drive(limiters, 400, 10));
    const batch = (limit.perSecond * LEASE_PERIOD_MS) / 1000;
    expect(got).toBeLessThanOrEqual(limit.burst + limit.perSecond * 10);
    expect(got).toBeGreaterThanOrEqual(limit.burst + limit.perSecond * 10 - 2 * batch);
  });

  it('hold it whichever node the requests reach: one node alone may use the whole rate', async () => {
    const { limiters } = cluster(limit, 2);
    const got = accepted(await drive([limiters[0]!], 400, 10));
    expect(got).toBeGreaterThanOrEqual(limit.burst + limit.perSecond * 10 - 10);
    expect(got).toBeLessThanOrEqual(limit.burst + limit.perSecond * 10);
  });

  it('ask the shared bucket once per half a batch at least; over the limit, once a period per node besides', async () => {
    const batch = (limit.perSecond * LEASE_PERIOD_MS) / 1000;
    const under = cluster(limit, 2);
    const requests = 50 * 10;
    expect(accepted(await drive(under.limiters, 50, 10))).toBe(requests);
    expect(under.state.leases).toBeLessThanOrEqual(requests / (batch / 2) + 2);

    // A lease that finds the bucket short of a batch takes what there is and waits a period.
    const over = cluster(limit, 2);
    const got = accepted(await drive(over.limiters, 5000, 2));
    expect(over.state.leases).toBeLessThanOrEqual(got / (batch / 2) + 2 * (2000 / LEASE_PERIOD_MS) + 2);
  });

  it('lose at most a batch when a node dies: the survivor gets the whole rate at once', async () => {
    const { limiters } = cluster(limit, 2);
    await drive(limiters, 400, 2);
    // Node 0 is gone with its unspent tokens; every request now reaches node 1.
    const got = accepted(await drive([limiters[1]!], 400, 5, 2000));
    expect(got).toBeGreaterThanOrEqual(limit.perSecond * 5 - 2 * 10);
    expect(got).toBeLessThanOrEqual(limit.perSecond * 5 + 10);
  });

  it('say what is left, and when refused how long to wait', async () => {
    const { limiters } = cluster({ perSecond: 10, burst: 5 }, 1);
    const decisions = await drive(limiters, 1000, 0.006);
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([[true, 4], [true, 3], [true, 2], [true, 1], [true, 0], [false, 0]]);
    expect(decisions[5]!.retryAfter).toBe(1);
  });

  it('answer requests that find the stock empty once the lease in flight is back, not each with a lease', async () => {
    const { limiters, state } = cluster(limit, 1);
    const decisions = await Promise.all(Array.from({ length: 30 }, () => limiters[0]!.take('S1', 0)));
    expect(accepted(decisions)).toBe(30);
    expect(state.leases).toBeLessThanOrEqual(30 / 5);
  });

  it('go on alone at the full rate while leases fail, asking again once a period', async () => {
    const { limiters, state } = cluster(limit, 1);
    state.down = true;
    const got = accepted(await drive(limiters, 400, 2));
    expect(got).toBeGreaterThanOrEqual(limit.perSecond * 2 - 10);
    expect(got).toBeLessThanOrEqual(limit.perSecond * 2 + 10);
    expect(state.errors).toBe(state.leases);
    expect(state.leases).toBeLessThanOrEqual(2 * (1000 / LEASE_PERIOD_MS) + 1);
  });
});

describe('the rate-limit headers on partner answers (DESIGN J)', () => {
  let t: TestApp;
  let world: World;
  const clock: Clock = { now: () => Date.UTC(2026, 0, 1) };

  beforeEach(async () => {
    t = await testApp({ clock, settings: { RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '3' } });
    world = await createWorld(t.ctx, { deviceTypes: [] });
  });
  afterEach(() => t.close());

  const users = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/users', headers });
  const rateHeaders = (res: { headers: Record<string, unknown> }) => [res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']];

  it('every 2xx carries the bucket size and what is left in it; the 429 after them, 0 left and Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await users(world.headers()));
    expect(answers.map((res) => [res.statusCode, ...rateHeaders(res)])).toEqual([[200, '3', '2'], [200, '3', '1'], [200, '3', '0'], [429, '3', '0']]);
    expect([answers[3]!.json().error.code, answers[3]!.headers['retry-after']]).toEqual(['1306', '1']);
  });

  it('a refusal after the limiter carries them too: the request spent a token', async () => {
    const refused = await users({ ...world.headers(), authorization: 'Bearer not-a-token' });
    expect([refused.statusCode, refused.json().error.code, ...rateHeaders(refused)]).toEqual([401, '1103', '3', '2']);
  });

  it('a refusal before the service is known carries none: nothing was counted, and no one is told another service’s count', async () => {
    const wrongKey = await users({ ...world.headers(), 'x-service-key': 'not-the-key' });
    const missing = await users({ ...world.headers(), 'x-message-id': '' });
    expect([wrongKey.statusCode, ...rateHeaders(wrongKey)]).toEqual([401, undefined, undefined]);
    expect([missing.statusCode, ...rateHeaders(missing)]).toEqual([400, undefined, undefined]);
  });

});

describe('with rate limiting disabled', () => {
  it('answers carry no rate-limit headers: there is no limit to tell', async () => {
    const t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    try {
      const world = await createWorld(t.ctx, { deviceTypes: [] });
      const res = await t.app.inject({ method: 'GET', url: '/users', headers: world.headers() });
      expect([res.statusCode, res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]).toEqual([200, undefined, undefined]);
    } finally {
      await t.close();
    }
  });
});
