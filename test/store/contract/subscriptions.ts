/** Contract: push and event subscriptions. */
import { describe, expect, it } from 'vitest';
import type { EventSubscription } from '../../../src/core/model.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, DRYER, freshStore, HOUR, T0, WASHER } from './world.js';

export function subscriptionsContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  /** S1 connected to U1 who owns D1, D2 and D3; U2 owns D9. */
  async function world(): Promise<void> {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await addUser(store(), 'U2');
    await connect(store(), 'S1', 'U1');
    await connect(store(), 'S1', 'U2');
    for (const deviceId of ['D1', 'D2', 'D3']) await addDevice(store(), deviceId, 'U1');
    await addDevice(store(), 'D9', 'U2');
  }

  const event = (deviceId: string, expiresAt: number): EventSubscription => ({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt });

  describe('push', () => {
    it('adds once, lists oldest first, removes once', async () => {
      await world();
      expect(await store().addPushSubscription('S1', 'U1', 'D2', T0 + 1)).toBe(true);
      expect(await store().addPushSubscription('S1', 'U1', 'D1', T0 + 2)).toBe(true);
      expect(await store().addPushSubscription('S1', 'U1', 'D2', T0 + 3)).toBe(false);
      expect(await store().listPushSubscriptions('S1', 'U1')).toEqual([
        { serviceId: 'S1', userNumber: 'U1', deviceId: 'D2', createdAt: T0 + 1 },
        { serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', createdAt: T0 + 2 },
      ]);
      expect(await store().listPushSubscriptions('S1', 'U2')).toEqual([]);
      expect(await store().removePushSubscription('S1', 'U1', 'D2')).toBe(true);
      expect(await store().removePushSubscription('S1', 'U1', 'D2')).toBe(false);
      expect((await store().listPushSubscriptions('S1', 'U1')).map((s) => s.deviceId)).toEqual(['D1']);
    });

    it('lists only subscriptions to types the service allows; the others come back with their type (DESIGN J)', async () => {
      await world();
      await addDevice(store(), 'D4', 'U1', DRYER);
      await store().addPushSubscription('S1', 'U1', 'D1', T0);
      await store().addPushSubscription('S1', 'U1', 'D4', T0 + 1);
      await store().updateService('S1', { allowedDevices: [DRYER] });
      expect((await store().listPushSubscriptions('S1', 'U1')).map((s) => s.deviceId)).toEqual(['D4']);
      await store().updateService('S1', { allowedDevices: [WASHER, DRYER] });
      expect((await store().listPushSubscriptions('S1', 'U1')).map((s) => s.deviceId)).toEqual(['D1', 'D4']);
    });

    it("rejects a subscription without a connection or to a device that is not the user's", async () => {
      await world();
      await addService(store(), 'S2');
      await expect(store().addPushSubscription('S2', 'U1', 'D1', T0)).rejects.toThrow();
      await expect(store().addPushSubscription('S1', 'U1', 'D9', T0)).rejects.toThrow();
      await expect(store().addPushSubscription('S1', 'U1', 'nope', T0)).rejects.toThrow();
      expect(await store().listPushSubscriptions('S1', 'U1')).toEqual([]);
    });
  });

  describe('event', () => {
    it('creates, lists only unexpired ones, and renews an existing one even when expired', async () => {
      await world();
      expect(await store().upsertEventSubscription(event('D1', T0 + HOUR), T0, 100)).toBe('created');
      expect(await store().upsertEventSubscription(event('D2', T0 + 10), T0, 100)).toBe('created');
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toEqual([event('D1', T0 + HOUR), event('D2', T0 + 10)]);
      expect(await store().listEventSubscriptions('S1', 'U1', T0 + 10)).toEqual([event('D1', T0 + HOUR)]);

      expect(await store().upsertEventSubscription(event('D1', T0 + 2 * HOUR), T0 + 1, 100)).toBe('renewed');
      expect(await store().upsertEventSubscription(event('D2', T0 + 3 * HOUR), T0 + 20, 100)).toBe('renewed');
      expect(await store().listEventSubscriptions('S1', 'U1', T0 + 20)).toEqual([event('D1', T0 + 2 * HOUR), event('D2', T0 + 3 * HOUR)]);
      expect(await store().listEventSubscriptions('S1', 'U2', T0)).toEqual([]);
    });

    it('refuses a new subscription at the limit of unexpired ones, but still renews', async () => {
      await world();
      expect(await store().upsertEventSubscription(event('D1', T0 + HOUR), T0, 2)).toBe('created');
      expect(await store().upsertEventSubscription(event('D2', T0 + 5), T0, 2)).toBe('created');
      expect(await store().upsertEventSubscription(event('D3', T0 + HOUR), T0, 2)).toBe('limit');
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toHaveLength(2);
      expect(await store().upsertEventSubscription(event('D1', T0 + 2 * HOUR), T0, 2)).toBe('renewed');
      // Once D2's has expired, the pair holds one unexpired subscription: room for D3.
      expect(await store().upsertEventSubscription(event('D3', T0 + HOUR), T0 + 5, 2)).toBe('created');
      expect((await store().listEventSubscriptions('S1', 'U1', T0 + 5)).map((s) => s.deviceId)).toEqual(['D1', 'D3']);
    });

    it('takes up an expired one again only within the limit: it counts as new', async () => {
      await world();
      expect(await store().upsertEventSubscription(event('D1', T0 + 5), T0, 2)).toBe('created');
      expect(await store().upsertEventSubscription(event('D2', T0 + HOUR), T0, 2)).toBe('created');
      // D1's has expired: room for D3, and then none for D1's again.
      expect(await store().upsertEventSubscription(event('D3', T0 + HOUR), T0 + 5, 2)).toBe('created');
      expect(await store().upsertEventSubscription(event('D1', T0 + HOUR), T0 + 5, 2)).toBe('limit');
      expect((await store().listEventSubscriptions('S1', 'U1', T0 + 5)).map((s) => s.deviceId)).toEqual(['D2', 'D3']);
      expect(await store().upsertEventSubscription(event('D1', T0 + HOUR), T0 + 5, 3)).toBe('renewed');
      expect((await store().listEventSubscriptions('S1', 'U1', T0 + 5)).map((s) => s.deviceId)).toEqual(['D1', 'D2', 'D3']);
    });

    it('rejects a subscription to a device that is not the user\'s', async () => {
      await world();
      await expect(store().upsertEventSubscription(event('D9', T0 + HOUR), T0, 100)).rejects.toThrow();
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toEqual([]);
    });

    it('removes a subscription: true only when it was unexpired', async () => {
      await world();
      await store().upsertEventSubscription(event('D1', T0 + HOUR), T0, 100);
      await store().upsertEventSubscription(event('D2', T0 + 10), T0, 100);
      expect(await store().removeEventSubscription('S1', 'U1', 'D1', T0 + 1)).toBe(true);
      expect(await store().removeEventSubscription('S1', 'U1', 'D1', T0 + 1)).toBe(false);
      expect(await store().removeEventSubscription('S1', 'U1', 'D2', T0 + 10)).toBe(false);
      // The expired one is gone too: subscribing again creates it.
      expect(await store().upsertEventSubscription(event('D2', T0 + HOUR), T0 + 11, 100)).toBe('created');
    });

    it('lists and counts toward the limit only subscriptions to types the service allows (DESIGN J)', async () => {
      await world();
      await addDevice(store(), 'D4', 'U1', DRYER);
      expect(await store().upsertEventSubscription(event('D1', T0 + HOUR), T0, 2)).toBe('created');
      expect(await store().upsertEventSubscription(event('D2', T0 + HOUR), T0, 2)).toBe('created');
      await store().updateService('S1', { allowedDevices: [DRYER] });
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toEqual([]);
      // The washers' subscriptions are dormant: the pair holds none that GET /event lists, so one fits.
      expect(await store().upsertEventSubscription(event('D4', T0 + HOUR), T0, 2)).toBe('created');
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toEqual([event('D4', T0 + HOUR)]);
      await store().updateService('S1', { allowedDevices: [WASHER, DRYER] });
      expect((await store().listEventSubscriptions('S1', 'U1', T0)).map((s) => s.deviceId)).toEqual(['D1', 'D2', 'D4']);
    });
  });
}
