/** Subscriptions: a service's push and event subscriptions for a connected user's devices, and what refuses them (DESIGN A.5). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireMs, MAX_EXPIRE_HOURS, type Pair } from '../../src/core/subscriptions.js';
import { createWorld, testApp, type TestApp } from '../helpers/app.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

describe('Subscriptions', () => {
  let now = T0;
  let t: TestApp;
  let pair: Pair;
  let washer: string;
  let fan: string;

  beforeAll(async () => {
    t = await testApp({ clock: { now: () => now }, settings: { EVENT_SUBSCRIPTION_LIMIT: '2' } });
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_CEILING_FAN', 'DEVICE_DRYER'] });
    pair = { serviceId: world.serviceId, userNumber: world.userNumber };
    [washer, fan] = world.devices.map((d) => d.deviceId) as [string, string];
  });
  afterAll(() => t?.close());

  it('subscribes push once (1207 the second time), lists it, and unsubscribes once (1206 the second time)', async () => {
    const { subscriptions } = t.ctx;
    expect(await subscriptions.pushDeviceIds(pair)).toEqual([]);
    await subscriptions.subscribePush(pair, washer);
    await expect(subscriptions.subscribePush(pair, washer)).rejects.toMatchObject({ code: '1207', message: `Push for device ${washer} is already subscribed.` });
    expect(await subscriptions.pushDeviceIds(pair)).toEqual([washer]);
    await subscriptions.unsubscribePush(pair, washer);
    await expect(subscriptions.unsubscribePush(pair, washer)).rejects.toMatchObject({ code: '1206', message: `Push for device ${washer} is not subscribed.` });
    expect(await subscriptions.pushDeviceIds(pair)).toEqual([]);
  });

  it('subscribes events for an hour by default, renews on a second subscribe, and unsubscribes once (1204 the second time)', async () => {
    const { subscriptions } = t.ctx;
    await subscriptions.subscribeEvents(pair, washer, undefined);
    expect(await subscriptions.events(pair)).toMatchObject([{ deviceId: washer, expiresAt: T0 + HOUR }]);
    await subscriptions.subscribeEvents(pair, washer, { unit: 'DAY', timer: 2 });
    expect(await subscriptions.events(pair)).toMatchObject([{ deviceId: washer, expiresAt: T0 + 48 * HOUR }]);
    await subscriptions.unsubscribeEvents(pair, washer);
    await expect(subscriptions.unsubscribeEvents(pair, washer)).rejects.toMatchObject({ code: '1204', message: `Events of device ${washer} are not subscribed.` });
    expect(await subscriptions.events(pair)).toEqual([]);
  });

  it('lists only unexpired event subscriptions, and an expired one cannot be unsubscribed (1204)', async () => {
    const { subscriptions } = t.ctx;
    await subscriptions.subscribeEvents(pair, fan, { unit: 'MINUTE', timer: 1 });
    now = T0 + 60_000;
    try {
      expect(await subscriptions.events(pair)).toEqual([]);
      await expect(subscriptions.unsubscribeEvents(pair, fan)).rejects.toMatchObject({ code: '1204' });
    } finally {
      now = T0;
    }
  });

  it('refuses an event subscription beyond the limit of the service and user (1312), but renews one it holds', async () => {
    const { subscriptions, store } = t.ctx;
    const [, , dryer] = (await store.listUserDevices(pair.userNumber)).map((d) => d.deviceId);
    await subscriptions.subscribeEvents(pair, washer, undefined);
    await subscriptions.subscribeEvents(pair, fan, undefined);
    await expect(subscriptions.subscribeEvents(pair, dryer!, undefined)).rejects.toMatchObject({
      code: '1312',
      message: 'This service and user already hold 2 event subscriptions, the limit.',
    });
    await subscriptions.subscribeEvents(pair, fan, { timer: 2 });
    expect((await subscriptions.events(pair)).map((s) => s.deviceId).sort()).toEqual([washer, fan].sort());
  });
});

describe('expireMs', () => {
  it('is timer × unit, an hour by default', () => {
    expect(expireMs(undefined)).toBe(HOUR);
    expect(expireMs({})).toBe(HOUR);
    expect(expireMs({ unit: 'MINUTE', timer: 5 })).toBe(5 * 60_000);
    expect(expireMs({ unit: 'DAY' })).toBe(24 * HOUR);
    expect(expireMs({ timer: MAX_EXPIRE_HOURS })).toBe(MAX_EXPIRE_HOURS * HOUR);
    expect(expireMs({ unit: 'DAY', timer: 186 })).toBe(MAX_EXPIRE_HOURS * HOUR);
  });

  it('refuses more than 4464 hours, and a unit it does not know, with 1102', () => {
    expect(() => expireMs({ unit: 'DAY', timer: 187 })).toThrow(expect.objectContaining({ code: '1102', message: 'expire must be at most 4464 hours; got 187 DAY.' }));
    expect(() => expireMs({ unit: 'WEEK', timer: 1 })).toThrow(expect.objectContaining({ code: '1102', message: 'expire.unit must be one of MINUTE, HOUR, DAY; got "WEEK".' }));
  });
});

describe('Subscriptions racing an unlink or an unregistration', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('answers 1202, not an internal error, when the pair was disconnected after its checks passed', async () => {
    t = await testApp();
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const pair = { serviceId: world.serviceId, userNumber: world.userNumber };
    const washer = world.devices[0]!.deviceId;
    // The request's checks found the connection; DELETE /user/service ends it before the subscription is written.
    await t.ctx.accounts.disconnect(pair.serviceId, pair.userNumber);
    await expect(t.ctx.subscriptions.subscribeEvents(pair, washer, undefined)).rejects.toMatchObject({ code: '1202' });
    await expect(t.ctx.subscriptions.subscribePush(pair, washer)).rejects.toMatchObject({ code: '1202' });
    expect(await t.ctx.subscriptions.events(pair)).toEqual([]);
  });

  it('answers 1205, not an internal error, when the device was unregistered after the checks passed', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const pair = { serviceId: world.serviceId, userNumber: world.userNumber };
    const washer = world.devices[0]!.deviceId;
    await t.ctx.devices.unregister(washer, pair.userNumber);
    await expect(t.ctx.subscriptions.subscribeEvents(pair, washer, undefined)).rejects.toMatchObject({ code: '1205' });
    await expect(t.ctx.subscriptions.subscribePush(pair, washer)).rejects.toMatchObject({ code: '1205' });
  });
});
