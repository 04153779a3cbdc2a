/** Devices.listForService: GET /devices in the domain — the user's devices a service may see, and the list loaded once (DESIGN A.5). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const T0 = Date.UTC(2026, 0, 1);

describe('Devices.listForService', () => {
  let now = T0;
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp({ clock: { now: () => now } });
    world = await createWorld(t.ctx, { allowedDevices: ['DEVICE_WASHER', 'DEVICE_CEILING_FAN'], deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER', 'DEVICE_CEILING_FAN'] });
  });
  afterAll(() => t?.close());

  const service = async () => (await t.ctx.store.getService(world.serviceId))!;
  const connection = async () => (await t.ctx.store.getConnection(world.serviceId, world.userNumber))!;

  it("lists only the service's allowed types, each reportable when the service holds an event subscription for it", async () => {
    const [washer, , fan] = world.devices;
    await t.ctx.subscriptions.subscribeEvents(world, fan!.deviceId, undefined);
    const { devices, reportable } = await t.ctx.devices.listForService(await service(), await connection());
    expect(devices.map((device) => [device.deviceId, device.deviceType, reportable.has(device.deviceId)])).toEqual([
      [washer!.deviceId, 'DEVICE_WASHER', false],
      [fan!.deviceId, 'DEVICE_CEILING_FAN', true],
    ]);
  });

  it('hands back the same list and set while nothing changed, and new ones after a change', async () => {
    const read = async () => t.ctx.devices.listForService((await t.ctx.lookups.getService(world.serviceId))!, await connection());
    // Polled: an entry may reach the lookup TTL between two reads, or be dropped by a change notice
    // (on PostgreSQL the cache also hears its own); between those, two reads give the same objects.
    const sameTwice = async () => {
      const [a, b] = [await read(), await read()];
      return a.devices === b.devices && a.reportable === b.reportable;
    };
    await expect.poll(sameTwice).toBe(true);
    const first = await read();
    await t.ctx.devices.rename(first.devices[0]!.deviceId, 'Renamed');
    const renamed = await read();
    expect(renamed.devices).not.toBe(first.devices);
    expect(renamed.devices[0]!.alias).toBe('Renamed');
    await t.ctx.subscriptions.unsubscribeEvents(world, world.devices[2]!.deviceId);
    const unsubscribed = await read();
    expect(unsubscribed.reportable).not.toBe(first.reportable);
    expect(unsubscribed.reportable.size).toBe(0);
  });

  describe("a change of the user's devices while a pair's first list is made", () => {
    /** A pair that has not listed yet, whose first list runs `meanwhile` as it marks the pair loaded. */
    async function firstListWith(meanwhile: (pair: World) => Promise<void>) {
      const pair = await createWorld(t.ctx, { allowedDevices: ['DEVICE_WASHER'], deviceTypes: ['DEVICE_WASHER'] });
      const { store } = t.ctx;
      const mark = store.markDeviceListLoaded.bind(store);
      store.markDeviceListLoaded = async (...args) => {
        await meanwhile(pair);
        return mark(...args);
      };
      try {
        const service = (await store.getService(pair.serviceId))!;
        const { devices } = await t.ctx.devices.listForService(service, (await store.getConnection(pair.serviceId, pair.userNumber))!);
        return { pair, listed: devices.map((device) => device.deviceId) };
      } finally {
        store.markDeviceListLoaded = mark;
      }
    }
    const announced = async (pair: World, deviceId: string) =>
      (await t.ctx.store.listMessages(pair.serviceId, { deviceId })).map((message) => message.pushType);

    it('lists a device registered meanwhile, or announces it to the pair: never neither', async () => {
      let registered = '';
      const { pair, listed } = await firstListWith(async (pair) => {
        registered = (await t.ctx.devices.register(pair.userNumber, { deviceType: 'DEVICE_WASHER', alias: 'New washer', virtual: true })).device.deviceId;
      });
      expect(listed.includes(registered) || (await announced(pair, registered)).includes('DEVICE_REGISTERED')).toBe(true);
    });

    it('leaves out a device unregistered meanwhile, or announces that to the pair: never neither', async () => {
      let unregistered = '';
      const { pair, listed } = await firstListWith(async (pair) => {
        unregistered = pair.devices[0]!.deviceId;
        await t.ctx.devices.unregister(unregistered, pair.userNumber);
      });
      expect(!listed.includes(unregistered) || (await announced(pair, unregistered)).includes('DEVICE_UNREGISTERED')).toBe(true);
    });
  });

  it('loads the list for the pair at the first call, and keeps that time at the next ones', async () => {
    expect((await connection()).deviceListLoadedAt).toBe(T0);
    now = T0 + 60_000;
    await t.ctx.devices.listForService(await service(), await connection());
    expect((await connection()).deviceListLoadedAt).toBe(T0);
  });
});
