/**
 * Issue 6: SQL statements each partner request sends to PostgreSQL once its lookups are cached (the
 * first request of a burst reads service, token, connection and device; the next ones find them in
 * the lookup cache). Counted by the store itself, transaction control included. SQLite counts none.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOKUP_TTL_MS } from '../../src/core/cache.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe.skipIf(!process.env.TEST_DATABASE_URL?.startsWith('postgres'))('statements per partner request on PostgreSQL', () => {
  let t: TestApp;
  let world: World;
  let fan: string;
  let washer: string;

  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN', 'DEVICE_WASHER'] });
    [fan, washer] = world.devices.map((d) => d.deviceId) as [string, string];
  });
  afterAll(() => t?.close());

  async function send(method: 'GET' | 'POST', url: string, payload?: unknown): Promise<void> {
    const body = payload === undefined ? {} : { payload: JSON.stringify(payload) };
    const response = await t.app.inject({ method, url, headers: world.headers(payload === undefined ? {} : { 'content-type': 'application/json' }), ...body });
    expect(response.statusCode, response.body).toBe(200);
  }

  /** Until the store sent nothing for 100 ms: what the last request set off (a claim, a notification) is done. */
  async function quiet(): Promise<void> {
    for (let last = -1; last !== t.ctx.store.capabilities.statementCounts!.statementsSent(); ) {
      last = t.ctx.store.capabilities.statementCounts!.statementsSent();
      await sleep(100);
    }
  }

  /** The statements a request sends, once `warm` (default: the same request) warmed the caches. */
  async function statementsOf(method: 'GET' | 'POST', url: string, payload?: unknown, warm = payload): Promise<number> {
    // Cached lookups expire a TTL after they were read, however often they are hit since: once all
    // expired, the warm-up reads them together, and the measured request comes well within their TTL.
    await sleep(LOOKUP_TTL_MS);
    for (const _ of [1, 2]) {
      await send(method, url, warm);
      await quiet();
    }
    const before = t.ctx.store.capabilities.statementCounts!.statementsSent();
    await send(method, url, payload);
    return t.ctx.store.capabilities.statementCounts!.statementsSent() - before;
  }

  it('reads in at most one statement, controls in five, six with an event subscription', async () => {
    // The list is cached, and so is which of its devices the service subscribed to.
    expect(await statementsOf('GET', '/devices')).toBe(0);
    // The profile is the catalog's, for a device the checks found in the cache.
    expect(await statementsOf('GET', `/devices/profile/${washer}`)).toBe(0);
    // The status, its version and the connection flag.
    expect(await statementsOf('GET', `/devices/${washer}`)).toBe(1);
    // The status before; then BEGIN, the status written, the event subscribers, COMMIT.
    const command = (windStrength: string) => ({ airFlow: { windStrength } });
    expect(await statementsOf('POST', `/devices/${fan}`, command('HIGH'), command('LOW'))).toBe(5);
    // And the DEVICE_STATUS message for the subscriber, one insert for all of them.
    await send('POST', `/event/${fan}`);
    expect(await statementsOf('POST', `/devices/${fan}`, command('HIGH'), command('LOW'))).toBe(6);
  });
});
