import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe('users (DESIGN A.5)', () => {
  let t: TestApp;
  let world: World;

  beforeEach(async () => {
    t = await testApp();
    world = await createWorld(t.ctx);
  });
  afterEach(() => t.close());

  it("GET /users answers the token's userNumber", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/users', headers: world.headers() });
    expect(res.json().response).toEqual({ userNumber: world.userNumber });
  });

  describe('DELETE /user/service', () => {
    it('disconnects the user: later calls with its tokens answer 1202', async () => {
      const res = await t.app.inject({ method: 'DELETE', url: '/user/service', headers: world.headers() });
      expect([res.statusCode, res.json().response]).toEqual([200, {}]);
      const after = await t.app.inject({ method: 'GET', url: '/users', headers: world.headers() });
      expect([after.statusCode, after.json().error.code]).toEqual([404, '1202']);
    });

    it("deletes the pair's subscriptions and loaded device list, and leaves other services untouched", async () => {
      const other = await createWorld(t.ctx, { userNumber: world.userNumber });
      const deviceId = world.devices[0]!.deviceId;
      for (const w of [world, other]) {
        await t.app.inject({ method: 'GET', url: '/devices', headers: w.headers() });
        await t.app.inject({ method: 'POST', url: `/push/${deviceId}`, headers: w.headers() });
        await t.app.inject({ method: 'POST', url: `/event/${deviceId}`, headers: w.headers() });
      }
      await t.app.inject({ method: 'DELETE', url: '/user/service', headers: world.headers() });

      expect(await t.ctx.store.listPushSubscriptions(world.serviceId, world.userNumber)).toEqual([]);
      expect(await t.ctx.store.listEventSubscriptions(world.serviceId, world.userNumber, t.ctx.clock.now())).toEqual([]);
      expect((await t.app.inject({ method: 'GET', url: '/push', headers: other.headers() })).json().response).toEqual([{ deviceId }]);

      const again = await world.reconnect();
      const op = await t.app.inject({ method: 'GET', url: `/devices/${deviceId}`, headers: again.headers() });
      expect(op.json().error.code).toBe('1210');
    });

    it('keeps messages already accepted for delivery', async () => {
      const deviceId = world.devices[0]!.deviceId;
      await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
      await t.ctx.devices.rename(deviceId, 'Renamed');
      const before = await t.ctx.store.listMessages(world.serviceId, {});
      await t.app.inject({ method: 'DELETE', url: '/user/service', headers: world.headers() });
      expect(await t.ctx.store.listMessages(world.serviceId, {})).toEqual(before);
      expect(before.map((m) => m.pushType)).toContain('DEVICE_ALIAS_CHANGED');
    });
  });
});
