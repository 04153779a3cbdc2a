/** Contract: services, users, tokens and connections. */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, HOUR, pushTypes, recorded, T0, WASHER } from './world.js';

export function accountsContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  describe('services', () => {
    it('creates a service with its first webhook secret current and reads it back', async () => {
      const created = await addService(store(), 'S1', [WASHER]);
      expect(created).toEqual({
        serviceId: 'S1',
        name: 'Service S1',
        keyHash: 'hash-of-S1',
        allowedDevices: [WASHER],
        callbackUrl: 'https://S1.example/push',
        eventCallbackUrl: null,
        enabled: true,
        webhookSecrets: [{ secret: 'whsec_S1', createdAt: T0, expiresAt: null }],
        createdAt: T0,
      });
      expect(await store().getService('S1')).toEqual(created);
      expect(await store().getService('nope')).toBeUndefined();
    });

    it('refuses U+0000 in what a statement names, as a malformed request, and writes nothing (PostgreSQL text cannot hold it)', async () => {
      await addService(store(), 'S1', [WASHER]);
      const refusal = { code: '1000', httpStatus: 400, message: 'A value holds the character U+0000, which no id, name or value may contain.' };
      await expect(store().getService('S\u00001')).rejects.toMatchObject(refusal);
      await expect(store().updateService('S1', { name: 'Wash\u0000er' })).rejects.toMatchObject(refusal);
      await expect(addService(store(), 'S\u00002', [WASHER])).rejects.toMatchObject(refusal);
      expect((await store().listServices()).map((s) => [s.serviceId, s.name])).toEqual([['S1', 'Service S1']]);
    });

    it('rejects a second service with the same id and keeps the first', async () => {
      await addService(store(), 'S1', [WASHER]);
      await expect(addService(store(), 'S1', ['DEVICE_DRYER'])).rejects.toThrow();
      expect((await store().getService('S1'))?.allowedDevices).toEqual([WASHER]);
      expect(await store().listServices()).toHaveLength(1);
    });

    it('lists services in creation order', async () => {
      await addService(store(), 'B', [WASHER], T0);
      await addService(store(), 'A', [WASHER], T0 + 1);
      expect((await store().listServices()).map((s) => s.serviceId)).toEqual(['B', 'A']);
    });

    it('patches only the fields given', async () => {
      await addService(store(), 'S1', [WASHER]);
      const patched = await store().updateService('S1', { enabled: false, eventCallbackUrl: 'https://S1.example/events', name: undefined });
      expect(patched).toMatchObject({ name: 'Service S1', enabled: false, allowedDevices: [WASHER], eventCallbackUrl: 'https://S1.example/events' });
      const again = await store().updateService('S1', { allowedDevices: ['DEVICE_DRYER'], callbackUrl: null, enabled: true });
      expect(again).toMatchObject({ enabled: true, allowedDevices: ['DEVICE_DRYER'], callbackUrl: null, eventCallbackUrl: 'https://S1.example/events' });
      expect(await store().getService('S1')).toEqual(again);
      expect(await store().updateService('nope', { enabled: false })).toBeUndefined();
    });

    it('rotates the webhook secret: newest first, the previous one valid until its expiry, expired ones pruned', async () => {
      await addService(store(), 'S1');
      expect(await store().rotateWebhookSecret('S1', 'whsec_2', T0 + 1000, T0 + 1000 + 24 * HOUR)).toBe(true);
      expect((await store().getService('S1'))?.webhookSecrets).toEqual([
        { secret: 'whsec_2', createdAt: T0 + 1000, expiresAt: null },
        { secret: 'whsec_S1', createdAt: T0, expiresAt: T0 + 1000 + 24 * HOUR },
      ]);
      const later = T0 + 48 * HOUR;
      expect(await store().rotateWebhookSecret('S1', 'whsec_3', later, later + 24 * HOUR)).toBe(true);
      expect((await store().getService('S1'))?.webhookSecrets).toEqual([
        { secret: 'whsec_3', createdAt: later, expiresAt: null },
        { secret: 'whsec_2', createdAt: T0 + 1000, expiresAt: later + 24 * HOUR },
      ]);
      expect(await store().rotateWebhookSecret('nope', 'whsec_x', later, later)).toBe(false);
    });

    it('keeps at most the current secret and one previous one: a rotation drops an older one at once', async () => {
      await addService(store(), 'S1');
      for (const n of [2, 3, 4, 5, 6]) await store().rotateWebhookSecret('S1', `whsec_${n}`, T0 + n, T0 + n + 24 * HOUR);
      expect((await store().getService('S1'))?.webhookSecrets).toEqual([
        { secret: 'whsec_6', createdAt: T0 + 6, expiresAt: null },
        { secret: 'whsec_5', createdAt: T0 + 5, expiresAt: T0 + 6 + 24 * HOUR },
      ]);
    });

    it('retires the previous secret at once when it expires at the rotation, and keeps only the new one', async () => {
      await addService(store(), 'S1');
      await store().rotateWebhookSecret('S1', 'whsec_2', T0 + 1, T0 + 1 + 24 * HOUR);
      expect(await store().rotateWebhookSecret('S1', 'whsec_3', T0 + 2, T0 + 2)).toBe(true);
      expect((await store().getService('S1'))?.webhookSecrets).toEqual([{ secret: 'whsec_3', createdAt: T0 + 2, expiresAt: null }]);
    });
  });

  describe('users and tokens', () => {
    it('creates a user once', async () => {
      expect(await store().createUser({ userNumber: 'U1', countryCode: 'KR', createdAt: T0 })).toBe(true);
      expect(await store().createUser({ userNumber: 'U1', countryCode: 'US', createdAt: T0 + 1 })).toBe(false);
      expect(await store().getUser('U1')).toEqual({ userNumber: 'U1', countryCode: 'KR', createdAt: T0 });
      expect(await store().getUser('U2')).toBeUndefined();
    });

    it('stores a token and connects its user with the device list not yet loaded', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await store().createToken({ tokenHash: 'h1', userNumber: 'U1', serviceId: 'S1', expiresAt: T0 + HOUR }, T0);
      expect(await store().getToken('h1')).toEqual({
        tokenHash: 'h1',
        userNumber: 'U1',
        serviceId: 'S1',
        expiresAt: T0 + HOUR,
        revokedAt: null,
        revokedReason: null,
      });
      expect(await store().getToken('h2')).toBeUndefined();
      expect(await store().getConnection('S1', 'U1')).toEqual({ serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: null });
    });

    it('keeps an existing connection as it is when another token is issued', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1', true, T0);
      await store().createToken({ tokenHash: 'h2', userNumber: 'U1', serviceId: 'S1', expiresAt: T0 + 2 * HOUR }, T0 + 5);
      expect(await store().getConnection('S1', 'U1')).toEqual({ serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: T0 });
    });

    it("lists the user's connections oldest first, made by a token or by a consent, and not another user's", async () => {
      for (const serviceId of ['S1', 'S2', 'S3']) await addService(store(), serviceId);
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await connect(store(), 'S2', 'U1', true, T0);
      await store().saveDeviceShare({ serviceId: 'S1', userNumber: 'U1', grantId: 'G1', scopes: ['devices'], deviceIds: null, createdAt: T0 + 1 });
      await connect(store(), 'S3', 'U2', false, T0);
      expect(await store().listConnections('U1')).toEqual([
        { serviceId: 'S2', userNumber: 'U1', deviceListLoadedAt: T0 },
        { serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: null },
      ]);
      await store().disconnect('S2', 'U1', T0 + 2);
      expect((await store().listConnections('U1')).map((c) => c.serviceId)).toEqual(['S1']);
      expect(await store().listConnections('nobody')).toEqual([]);
    });

    it('rejects a token for an unknown user and stores nothing', async () => {
      await addService(store(), 'S1');
      await expect(store().createToken({ tokenHash: 'h1', userNumber: 'ghost', serviceId: 'S1', expiresAt: T0 + HOUR }, T0)).rejects.toThrow();
      expect(await store().getToken('h1')).toBeUndefined();
      expect(await store().getConnection('S1', 'ghost')).toBeUndefined();
    });

    it('marks the device list loaded once, keeping the first time', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1', false);
      await store().markDeviceListLoaded('S1', 'U1', T0 + 10);
      await store().markDeviceListLoaded('S1', 'U1', T0 + 20);
      expect((await store().getConnection('S1', 'U1'))?.deviceListLoadedAt).toBe(T0 + 10);
      await store().markDeviceListLoaded('S1', 'U2', T0);
      expect(await store().getConnection('S1', 'U2')).toBeUndefined();
    });
  });

  describe('disconnect', () => {
    it("removes the pair's connection and subscriptions, revokes its tokens as disconnected, keeps its messages", async () => {
      await addService(store(), 'S1');
      await addService(store(), 'S2');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await connect(store(), 'S2', 'U1');
      await addDevice(store(), 'D1', 'U1');
      await store().addPushSubscription('S1', 'U1', 'D1', T0);
      await store().addPushSubscription('S2', 'U1', 'D1', T0);
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);

      expect(await store().disconnect('S1', 'U1', T0 + 1)).toBe(true);

      expect(await store().getConnection('S1', 'U1')).toBeUndefined();
      expect(await store().getToken('tok-S1-U1')).toMatchObject({ revokedAt: T0 + 1, revokedReason: 'disconnected' });
      expect(await store().listPushSubscriptions('S1', 'U1')).toEqual([]);
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toEqual([]);
      expect(await pushTypes(store(), 'S1')).toEqual(['DEVICE_REGISTERED']);
      // The other service of the user is untouched.
      expect(await store().getConnection('S2', 'U1')).toMatchObject({ deviceListLoadedAt: T0 });
      expect(await store().getToken('tok-S2-U1')).toMatchObject({ revokedAt: null, revokedReason: null });
      expect((await store().listPushSubscriptions('S2', 'U1')).map((s) => s.deviceId)).toEqual(['D1']);

      expect(await store().disconnect('S1', 'U1', T0 + 2)).toBe(false);
      expect(await store().getToken('tok-S1-U1')).toMatchObject({ revokedAt: T0 + 1 });
    });

    it('tells a disconnected service nothing more, and a reconnect starts with the device list not loaded', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await store().disconnect('S1', 'U1', T0);
      await addDevice(store(), 'D1', 'U1');
      expect(await recorded(store(), 'S1')).toEqual([]);

      await store().createToken({ tokenHash: 'again', userNumber: 'U1', serviceId: 'S1', expiresAt: T0 + HOUR }, T0 + 1);
      expect(await store().getConnection('S1', 'U1')).toEqual({ serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: null });
      expect(await store().getToken('tok-S1-U1')).toMatchObject({ revokedReason: 'disconnected' });
    });
  });

  describe('deleteUser', () => {
    it('unregisters every device of the user with its messages, then removes the user and its connections', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await connect(store(), 'S1', 'U1');
      await connect(store(), 'S1', 'U2');
      await addDevice(store(), 'D1', 'U1');
      await addDevice(store(), 'D2', 'U1');
      await store().shareDevice('D2', 'U2', T0);
      await store().addPushSubscription('S1', 'U1', 'D2', T0);

      expect(await store().deleteUser('U1', T0 + 5)).toBe(true);

      const unregistered = (await recorded(store(), 'S1')).filter((r) => r.payload.pushType === 'DEVICE_UNREGISTERED');
      expect(unregistered.map((r) => [r.payload.deviceId, r.payload.userNumber])).toEqual([
        ['D1', 'U1'],
        ['D2', 'U1'],
      ]);
      expect(await store().getUser('U1')).toBeUndefined();
      expect(await store().getDevice('D1')).toBeUndefined();
      expect((await store().getDevice('D2'))?.userNumbers).toEqual(['U2']);
      expect(await store().getConnection('S1', 'U1')).toBeUndefined();
      expect(await store().listPushSubscriptions('S1', 'U1')).toEqual([]);
      expect(await store().getToken('tok-S1-U1')).toMatchObject({ revokedAt: T0 + 5, revokedReason: 'disconnected' });
      expect(await store().getToken('tok-S1-U2')).toMatchObject({ revokedAt: null });
      expect(await store().deleteUser('U1', T0 + 6)).toBe(false);
    });

    it('lets the user number be created again afterwards, with no devices', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      await store().deleteUser('U1', T0);
      expect(await store().createUser({ userNumber: 'U1', countryCode: 'KR', createdAt: T0 + 1 })).toBe(true);
      expect(await store().listUserDevices('U1')).toEqual([]);
    });
  });
}
