/**
 * Retention (DESIGN J): the delivery engine's sweeper deletes delivered and failed messages older than
 * MESSAGE_RETENTION, a batch at a time, and never one still waiting; the partner's webhook-sequence
 * keeps counting across the gap. The same sweep deletes the authorization server's expired records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startDelivery } from '../../src/delivery/index.js';
import { parseRetention, sweepOldMessages } from '../../src/delivery/retention.js';
import { systemClock } from '../../src/ids.js';
import type { Store } from '../../src/store/store.js';
import { callAdmin, createWorld, testStore, type World } from '../helpers/app.js';
import { addDevice, addService, addUser, connect, HOUR, T0 } from '../store/contract/world.js';
import { deliveryApp, secretsOf, setCallbacks, startReceiver, waitFor, type DeliveryApp, type Receiver } from './harness.js';

const DAY = 24 * HOUR;

describe('MESSAGE_RETENTION', () => {
  it('is a positive duration, 7 days unless set', () => {
    expect(loadConfig('serve', { ADMIN_TOKEN: 't' }).messageRetention).toBe('7d');
    expect(parseRetention('7d')).toBe(7 * DAY);
    expect(parseRetention('36h')).toBe(36 * HOUR);
    expect(parseRetention('250ms')).toBe(250);
    for (const text of ['soon', '7', '0d', '-1d', '']) expect(() => parseRetention(text)).toThrow(/is not a duration such as 7d/);
  });

  it('refuses to start delivery when it is not a duration', async () => {
    const { store, close } = await testStore();
    // loadConfig refuses it first (test/config.test.ts); delivery checks a config built any other way too.
    expect(() => loadConfig('test', { MESSAGE_RETENTION: 'a week' })).toThrow(ConfigError);
    const started = startDelivery({ store, clock: systemClock, config: { ...loadConfig('test', {}), messageRetention: 'a week' } });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/^MESSAGE_RETENTION: "a week" is not a duration such as 7d/);
    await close();
  });
});

describe('sweeping old messages', () => {
  let store: Store;
  let close: () => Promise<void>;
  afterEach(() => close());

  /** `count` devices registered at T0, each with one message, all delivered. */
  async function delivered(count: number): Promise<void> {
    ({ store, close } = await testStore());
    await addService(store, 'S1');
    await addUser(store, 'U1');
    await connect(store, 'S1', 'U1');
    for (let i = 0; i < count; i++) await addDevice(store, `D${i}`, 'U1');
    const claimed = await store.claimDeliveries({ owner: 'node', now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
    const outcomes = claimed.map((c) => ({ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: T0 + 10, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } }));
    await store.recordAttempts(outcomes, T0 + 11, DAY);
  }

  it('deletes batch after batch until a batch comes back short', async () => {
    await delivered(5);
    expect(await sweepOldMessages(store, T0 + DAY, 2, new AbortController().signal)).toBe(5);
    expect(await store.listMessages('S1', {})).toEqual([]);
  });

  it('lets other work run between batches', async () => {
    await delivered(5);
    const order: string[] = [];
    setImmediate(() => order.push('other work'));
    await sweepOldMessages(store, T0 + DAY, 2, new AbortController().signal);
    order.push('swept');
    expect(order).toEqual(['other work', 'swept']);
  });

  it('ends after the batch in progress once stopping', async () => {
    await delivered(5);
    const stopping = new AbortController();
    stopping.abort();
    expect(await sweepOldMessages(store, T0 + DAY, 2, stopping.signal)).toBe(2);
    expect(await store.listMessages('S1', {})).toHaveLength(3);
  });
});

describe('the delivery engine under MESSAGE_RETENTION', () => {
  let t: DeliveryApp | undefined;
  let hooks: Receiver | undefined;
  afterEach(async () => {
    await hooks?.close();
    await t?.close();
    t = undefined;
  });

  const statuses = async (world: World) => (await t!.ctx.store.listMessages(world.serviceId, {})).reverse().map((m) => m.status);
  const rename = (deviceId: string, alias: string) => callAdmin(t!.app, 'PATCH', `/admin/devices/${deviceId}`, { alias });

  it('deletes what was delivered once it is older than the retention, keeps what waits, and the sequence keeps counting', async () => {
    t = await deliveryApp({ MESSAGE_RETENTION: '300ms' }, { sweepMs: 50 });
    hooks = await startReceiver();
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    const washer = world.devices[0]!.deviceId;

    await rename(washer, 'First');
    await rename(washer, 'Second');
    await waitFor('both to be delivered', async () => (hooks!.received.length === 2 ? true : undefined));
    await waitFor('both to be deleted', async () => ((await statuses(world)).length === 0 ? true : undefined));

    // Without a callback URL the next message is held: it waits, so it stays past the retention.
    await setCallbacks(t, world.serviceId, { callbackUrl: null });
    await rename(washer, 'Third');
    await waitFor('the message to be held', async () => ((await statuses(world))[0] === 'held' ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await statuses(world)).toEqual(['held']);

    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await waitFor('the held message to be delivered', async () => (hooks!.received.length === 3 ? true : undefined));
    const delivered = hooks.delivered(await secretsOf(t.ctx.store, world.serviceId));
    expect(delivered.map((d) => [d.sequence, d.payload.alias])).toEqual([
      [1, 'First'],
      [2, 'Second'],
      [3, 'Third'],
    ]);
  });
});

describe("the delivery engine's sweep of the authorization server's records", () => {
  let t: DeliveryApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('deletes the expired ones and keeps the rest', async () => {
    t = await deliveryApp({}, { sweepMs: 50 });
    const now = t.ctx.clock.now();
    const record = (key: string, expiresAt: number | null) => ({ model: 'AccessToken', key, payload: '{}', grantId: null, userCode: null, uid: null, expiresAt, consumedAt: null });
    await t.ctx.store.saveOAuthRecord(record('expired', now - 1));
    await t.ctx.store.saveOAuthRecord(record('live', now + HOUR));
    await t.ctx.store.saveOAuthRecord(record('forever', null));
    // Looked for as of an hour ago, when it had not expired: found until the sweep deletes it.
    await waitFor('the expired record to be deleted', async () => ((await t!.ctx.store.findOAuthRecord('AccessToken', 'expired', now - HOUR)) ? undefined : true));
    expect(await t.ctx.store.findOAuthRecord('AccessToken', 'live', now)).toBeDefined();
    expect(await t.ctx.store.findOAuthRecord('AccessToken', 'forever', now)).toBeDefined();
  });
});
