/**
 * The rate-limit buckets nodes share on PostgreSQL (DESIGN J): a lease is `takeTokens` of
 * src/api/rate-limit.ts in one statement, and nodes leasing at once never take more than the
 * bucket holds. Skipped, with a message saying why, when PostgreSQL is not reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeTokens, type Bucket } from '../../../src/api/rate-limit.js';
import { openStore } from '../../../src/store/index.js';
import type { RateLimit } from '../../../src/core/model.js';
import type { Store } from '../../../src/store/store.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, type TestDatabase } from '../../helpers/postgres.js';

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the PostgreSQL rate-limit tests: ${unreachable}`);

describe.skipIf(unreachable !== undefined)('rate-limit buckets shared on PostgreSQL', () => {
  let db: TestDatabase;
  let a: Store;
  let b: Store;
  const limit: RateLimit = { perSecond: 10, burst: 20 };

  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
    // Two stores, two pools: two nodes on one database.
    a = await openStore(db.url);
    b = await openStore(db.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('start full, give whole tokens up to what is asked, and say what is left, in one statement each', async () => {
    const before = a.capabilities.statementCounts!.statementsSent();
    expect(await a.capabilities.sharedRateLimit!.leaseRateTokens('S-new', 15, limit, 0)).toEqual({ granted: 15, tokens: 5 });
    expect(await a.capabilities.sharedRateLimit!.leaseRateTokens('S-new', 15, limit, 0)).toEqual({ granted: 5, tokens: 0 });
    expect(a.capabilities.statementCounts!.statementsSent() - before).toBe(2);
    expect(await b.capabilities.sharedRateLimit!.leaseRateTokens('S-new', 15, limit, 0)).toEqual({ granted: 0, tokens: 0 });
  });

  it('refill at the rate up to the burst; a clock behind refills nothing', async () => {
    await a.capabilities.sharedRateLimit!.leaseRateTokens('S-refill', 20, limit, 10_000);
    expect(await a.capabilities.sharedRateLimit!.leaseRateTokens('S-refill', 20, limit, 10_250)).toEqual({ granted: 2, tokens: 0.5 });
    expect(await b.capabilities.sharedRateLimit!.leaseRateTokens('S-refill', 20, limit, 9_000)).toEqual({ granted: 0, tokens: 0.5 });
    expect(await b.capabilities.sharedRateLimit!.leaseRateTokens('S-refill', 50, limit, 100_000)).toEqual({ granted: 20, tokens: 0 });
  });

  it('do the arithmetic of takeTokens, lease after lease', async () => {
    const bucket: Bucket = { tokens: limit.burst, at: 0 };
    let now = 0;
    for (let i = 0; i < 40; i += 1) {
      // Wants of 1 to 7, at steps of 0 to 690 ms, one node's clock 40 ms behind the other's.
      const want = 1 + ((i * 5) % 7);
      now += (i * 230) % 700;
      const skewed = i % 3 === 0 ? now - 40 : now;
      const granted = takeTokens(bucket, want, limit, skewed);
      const lease = await (i % 2 ? a : b).capabilities.sharedRateLimit!.leaseRateTokens('S-same', want, limit, skewed);
      expect(lease.granted, `lease ${i}`).toBe(granted);
      expect(lease.tokens, `lease ${i}`).toBeCloseTo(bucket.tokens, 9);
    }
  });

  it('never grant more than the bucket holds to nodes leasing at once', async () => {
    const slow: RateLimit = { perSecond: 1, burst: 100 };
    const leases = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).capabilities.sharedRateLimit!.leaseRateTokens('S-race', 5, slow, 0));
    const granted = (await Promise.all(leases)).map((l) => l.granted);
    expect(granted.reduce((sum, g) => sum + g, 0)).toBe(100);
  });
});
