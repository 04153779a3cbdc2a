/**
 * The partner checks read services, tokens, connections and devices from a cache (src/core/cache.ts):
 * every change made in this process must be seen by the very next request, after the cache was warmed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/ids.js';
import { callAdmin, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe('lookups cached by the partner checks', () => {
  let t: TestApp;
  let world: World;
  let now = Date.UTC(2026, 0, 1);
  const clock: Clock = { now: () => now };

  const get = (url: string, w: World = world) => t.app.inject({ method: 'GET', url, headers: w.headers() });
  const answer = async (url: string, w: World = world) => {
    const res = await get(url, w);
    return res.statusCode === 200 ? 'ok' : res.json().error.code;
  };

  beforeEach(async () => {
    t = await testApp({ clock });
    world = await createWorld(t.ctx);
    // Warm: the service, the token and the loaded connection are now cached.
    expect(await answer('/devices')).toBe('ok');
    expect(await answer(`/devices/${world.devices[0]!.deviceId}`)).toBe('ok');
  });
  afterEach(() => t.close());

  it('a service disabled through the admin API is refused at once, and accepted again at once', async () => {
    await callAdmin(t.app, 'PATCH', `/admin/services/${world.serviceId}`, { enabled: false });
    expect(await answer('/users')).toBe('1301');
    await callAdmin(t.app, 'PATCH', `/admin/services/${world.serviceId}`, { enabled: true });
    expect(await answer('/users')).toBe('ok');
  });

  it("a narrowed allowedDevices hides the device type at once", async () => {
    const [kept, dropped] = world.devices;
    await callAdmin(t.app, 'PATCH', `/admin/services/${world.serviceId}`, { allowedDevices: [kept!.deviceType] });
    expect(await answer(`/devices/${dropped!.deviceId}`)).toBe('1221');
    const list = await get('/devices');
    expect(list.json().response.map((d: { deviceId: string }) => d.deviceId)).toEqual([kept!.deviceId]);
  });

  it("a rotated webhook secret is in the service the checks hand to the routes", async () => {
    const { webhookSecret } = (await callAdmin(t.app, 'POST', `/admin/services/${world.serviceId}/rotate-secret`)).json().response;
    const service = await t.ctx.lookups.getService(world.serviceId);
    expect(service?.webhookSecrets[0]?.secret).toBe(webhookSecret);
  });

  it('DELETE /user/service refuses the next call with the same token (1202)', async () => {
    expect((await t.app.inject({ method: 'DELETE', url: '/user/service', headers: world.headers() })).statusCode).toBe(200);
    expect(await answer('/users')).toBe('1202');
    expect(await answer(`/devices/${world.devices[0]!.deviceId}`)).toBe('1202');
  });

  it('after a disconnect, a new token must load the device list again (1210), then works', async () => {
    await t.app.inject({ method: 'DELETE', url: '/user/service', headers: world.headers() });
    const again = await world.reconnect();
    const deviceId = world.devices[0]!.deviceId;
    expect(await answer(`/devices/${deviceId}`, again)).toBe('1210');
    expect(await answer('/devices', again)).toBe('ok');
    expect(await answer(`/devices/${deviceId}`, again)).toBe('ok');
  });

  it('a user deleted through the admin API is refused at once (1202)', async () => {
    await callAdmin(t.app, 'DELETE', `/admin/users/${world.userNumber}`);
    expect(await answer('/users')).toBe('1202');
  });

  it('a cached token still expires on time (1103)', async () => {
    now += 86_400 * 1000;
    expect(await answer('/users')).toBe('1103');
  });

  it('a device unregistered from the user through the admin API is refused at once (1205), though it stays another user\'s', async () => {
    const deviceId = world.devices[0]!.deviceId;
    const other = await createWorld(t.ctx, { deviceTypes: [] });
    await callAdmin(t.app, 'POST', `/admin/users/${other.userNumber}/devices/${deviceId}`);
    expect(await answer(`/devices/${deviceId}`)).toBe('ok');
    await callAdmin(t.app, 'DELETE', `/admin/users/${world.userNumber}/devices/${deviceId}`);
    expect(await answer(`/devices/${deviceId}`)).toBe('1205');
  });

  it('a device shared with another user of the home is readable by that user at once', async () => {
    const deviceId = world.devices[0]!.deviceId;
    const other = await createWorld(t.ctx, { deviceTypes: [] });
    expect(await answer('/devices', other)).toBe('ok');
    expect(await answer(`/devices/${deviceId}`, other)).toBe('1205');
    await callAdmin(t.app, 'POST', `/admin/users/${other.userNumber}/devices/${deviceId}`);
    expect(await answer(`/devices/${deviceId}`, other)).toBe('ok');
  });

  it('the device list is loaded once: a later GET /devices keeps the first load time', async () => {
    const loaded = await t.ctx.store.getConnection(world.serviceId, world.userNumber);
    now += 60_000;
    expect(await answer('/devices')).toBe('ok');
    expect((await t.ctx.store.getConnection(world.serviceId, world.userNumber))?.deviceListLoadedAt).toBe(loaded?.deviceListLoadedAt);
  });

  it('a wrong service key is refused although the service is cached (1301)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/users', headers: world.headers({ 'x-service-key': 'wrong' }) });
    expect(res.json().error.code).toBe('1301');
  });
});
