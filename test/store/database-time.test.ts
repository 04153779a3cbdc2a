/**
 * A node keeps the database's time (src/store/database-time.ts): on PostgreSQL a node whose own
 * clock runs 40 s ahead reads the database's time all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/ids.js';
import { DatabaseTime } from '../../src/store/database-time.js';
import { openStore } from '../../src/store/index.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, type TestDatabase } from '../helpers/postgres.js';

describe('DatabaseTime', () => {
  it("takes the database's time midway through the round trip that was fastest", async () => {
    let node = 1_000;
    // Round trips of 30, 10 and 20 ms; the database answers 5,000 each time, 5 ms after the second's start.
    const trips = [30, 10, 20];
    const base = { now: () => node };
    const shared = {
      async databaseNow() {
        const trip = trips.shift()!;
        node += trip === 10 ? 5 : trip / 2;
        const answer = 5_000;
        node += trip === 10 ? 5 : trip / 2;
        return answer;
      },
    };
    const time = await DatabaseTime.start(shared, base);
    time.stop();
    // The second trip left at 1,030 and came back at 1,040: 5,000 then, 3,965 ahead of the node.
    expect(time.now() - node).toBe(5_000 - 1_035);
  });

  it('keeps the last offset when a later measurement fails', async () => {
    let fail = false;
    const time = await DatabaseTime.start({ databaseNow: async () => (fail ? Promise.reject(new Error('down')) : 2_000) }, { now: () => 1_000 });
    time.stop();
    fail = true;
    await expect(time.sync()).rejects.toThrow('down');
    expect(time.now()).toBe(2_000);
  });

  it('is for a shared database only: one SQLite node keeps its own clock', async () => {
    const sqlite = await openStore('sqlite::memory:');
    expect(sqlite.capabilities.sharedClock).toBeNull();
    await sqlite.close();
  });
});

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);

describe.skipIf(unreachable !== undefined)('DatabaseTime on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
  });
  afterAll(() => db?.drop());

  it("sets a node's clock 40 s ahead to the database's", async () => {
    const store = await openStore(db.url);
    try {
      const shared = store.capabilities.sharedClock!;
      const ahead = { now: () => systemClock.now() + 40_000 };
      const time = await DatabaseTime.start(shared, ahead);
      time.stop();
      const before = await shared.databaseNow();
      const now = time.now();
      const after = await shared.databaseNow();
      // Within the round trips around it, give or take the half round trip it was measured to.
      expect(now).toBeGreaterThan(before - 50);
      expect(now).toBeLessThan(after + 50);
    } finally {
      await store.close();
    }
  });
});
