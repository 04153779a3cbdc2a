import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsedProfile } from '../../src/catalog/index.js';
import { deviceView as deviceViewOf } from '../../src/admin/views.js';
import { formatTimestamp, type Clock } from '../../src/ids.js';
import { adminHeaders, callAdmin, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const NOW = Date.UTC(2026, 0, 1);

describe('admin: devices (DESIGN D)', () => {
  let t: TestApp;
  let world: World;
  let fan: string;
  let washer: string;
  const clock: Clock = { now: () => NOW };

  beforeEach(async () => {
    t = await testApp({ clock });
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN', 'DEVICE_WASHER'] });
    fan = world.devices[0]!.deviceId;
    washer = world.devices[1]!.deviceId;
  });
  afterEach(() => t.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => callAdmin(t.app, method, url, body);
  const error = async (res: Promise<{ statusCode: number; json(): { error: unknown } }>) => {
    const done = await res;
    return [done.statusCode, done.json().error];
  };

  describe('GET /admin/devices', () => {
    it('lists every device with its users by deviceId, a page at a time', async () => {
      const other = await createWorld(t.ctx, { deviceTypes: ['DEVICE_OVEN'] });
      const ids = [fan, washer, other.devices[0]!.deviceId].sort();
      const first = (await admin('GET', '/admin/devices?limit=2')).json().response;
      expect(first.map((d: { deviceId: string }) => d.deviceId)).toEqual(ids.slice(0, 2));
      const rest = (await admin('GET', `/admin/devices?after=${first[1].deviceId}&limit=10`)).json().response;
      expect(rest.map((d: { deviceId: string }) => d.deviceId)).toEqual(ids.slice(2));
      const oven = [...first, ...rest].find((d: { deviceType: string }) => d.deviceType === 'DEVICE_OVEN');
      expect(oven).toEqual({ ...deviceViewOf(await t.ctx.devices.get(other.devices[0]!.deviceId)), userNumbers: [other.userNumber] });
    });
  });

  describe('GET /admin/devices/{id}', () => {
    it('answers the device without its secret hash, its status, connection and version', async () => {
      const res = await admin('GET', `/admin/devices/${fan}`);
      const device = await t.ctx.devices.get(fan);
      const state = await t.ctx.devices.state(fan);
      expect(res.json()).toEqual({
        messageId: expect.any(String),
        timestamp: formatTimestamp(NOW),
        response: {
          device: {
            deviceId: fan,
            deviceType: 'DEVICE_CEILING_FAN',
            modelName: device.modelName,
            alias: 'My ceiling fan',
            virtual: true,
            online: true,
            userNumbers: [world.userNumber],
            createdAt: new Date(NOW).toISOString(),
          },
          status: state.status,
          online: true,
          version: state.version,
        },
      });
      expect(res.body).not.toContain(device.secretHash);
    });

    it('an unknown device answers 1205', async () => {
      expect(await error(admin('GET', '/admin/devices/nothing'))).toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
    });
  });

  describe('PATCH /admin/devices/{id}', () => {
    it('renames the device and answers it', async () => {
      const res = await admin('PATCH', `/admin/devices/${fan}`, { alias: 'Bedroom fan' });
      expect(res.json().response).toMatchObject({ deviceId: fan, alias: 'Bedroom fan' });
      expect((await t.ctx.devices.get(fan)).alias).toBe('Bedroom fan');
    });

    it('refuses a missing or empty alias, other fields, and an unknown device', async () => {
      expect(await error(admin('PATCH', `/admin/devices/${fan}`, {}))).toEqual([400, { code: '1101', message: 'alias is missing.' }]);
      expect(await error(admin('PATCH', `/admin/devices/${fan}`, { alias: '' }))).toEqual([400, { code: '1102', message: 'alias must NOT have fewer than 1 characters.' }]);
      expect(await error(admin('PATCH', `/admin/devices/${fan}`, { alias: ' \t ' }))).toEqual([400, { code: '1102', message: 'alias must have a character other than spaces; got " \\t ".' }]);
      expect(await error(admin('PATCH', `/admin/devices/${fan}`, { alias: 'x', online: false }))).toEqual([400, { code: '1102', message: 'body may not contain "online".' }]);
      expect(await error(admin('PATCH', '/admin/devices/nothing', { alias: 'x' }))).toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
    });
  });

  describe('POST /admin/devices/{id}/report', () => {
    it('merges a partial status and answers the new version', async () => {
      const before = await t.ctx.devices.state(fan);
      const res = await admin('POST', `/admin/devices/${fan}/report`, { airFlow: { windStrength: 'HIGH' } });
      expect(res.json().response).toEqual({ version: before.version + 1 });
      const after = await t.ctx.devices.state(fan);
      expect(after.status).toMatchObject({ airFlow: { windStrength: 'HIGH' } });
      const viewed = (await admin('GET', `/admin/devices/${fan}`)).json().response;
      expect([viewed.version, viewed.status]).toEqual([after.version, after.status]);
    });

    it('a report that does not fit the readable values answers 1102 and changes nothing', async () => {
      const before = await t.ctx.devices.state(fan);
      const res = await admin('POST', `/admin/devices/${fan}/report`, { airFlow: { windStrength: 'HURRICANE' } });
      expect([res.statusCode, res.json().error.code]).toEqual([400, '1102']);
      expect(res.json().error.message).toContain('windStrength');
      expect(await t.ctx.devices.state(fan)).toEqual(before);
      expect((await admin('POST', `/admin/devices/${fan}/report`, [])).json().error.code).toBe('1102');
      expect((await admin('POST', `/admin/devices/${fan}/report`, null)).json().error.code).toBe('1102');
    });

    it('a missing body answers 1101; an unknown device 1205', async () => {
      const missing = await t.app.inject({ method: 'POST', url: `/admin/devices/${fan}/report`, headers: adminHeaders() });
      expect(missing.json().error.code).toBe('1101');
      expect(await error(admin('POST', '/admin/devices/nothing/report', { airFlow: { windStrength: 'HIGH' } })))
        .toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
    });
  });

  describe('POST /admin/devices/{id}/control', () => {
    it('controls the device as a partner would and answers its full status and version, which the partner interface then serves', async () => {
      const before = await t.ctx.devices.state(fan);
      const res = await admin('POST', `/admin/devices/${fan}/control`, { airFlow: { windStrength: 'HIGH' } });
      const after = await t.ctx.devices.state(fan);
      expect([res.statusCode, res.json().response]).toEqual([200, { status: after.status, version: before.version + 1 }]);
      expect(after.status).toMatchObject({ airFlow: { windStrength: 'HIGH' } });
      await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
      const read = await t.app.inject({ method: 'GET', url: `/devices/${fan}`, headers: world.headers() });
      expect(read.json().response).toEqual(after.status);
    });

    it('checks the conditions of A.7 with conditional=true, and takes no other value', async () => {
      const start = { location: { locationName: 'MAIN' }, operation: { washerOperationMode: 'START' } };
      await t.ctx.devices.report(washer, { location: { locationName: 'MAIN' }, runState: { currentState: 'ERROR' } });
      const refused = await admin('POST', `/admin/devices/${washer}/control?conditional=true`, start);
      expect([refused.statusCode, refused.json().error.code]).toEqual([400, '2303']);
      expect(await error(admin('POST', `/admin/devices/${washer}/control?conditional=maybe`, start)))
        .toEqual([400, { code: '1102', message: 'conditional must be one of true, false.' }]);
    });

    it('refuses a command outside the profile, a missing one (1101), an offline device (1222) and an unknown one (1205)', async () => {
      const before = await t.ctx.devices.state(fan);
      const bad = await admin('POST', `/admin/devices/${fan}/control`, { airFlow: { windStrength: 'HURRICANE' } });
      expect([bad.statusCode, bad.json().error.code]).toEqual([400, '1102']);
      const missing = await t.app.inject({ method: 'POST', url: `/admin/devices/${fan}/control`, headers: adminHeaders() });
      expect(missing.json().error.code).toBe('1101');
      expect(await t.ctx.devices.state(fan)).toEqual(before);
      await admin('POST', `/admin/devices/${fan}/connection`, { online: false });
      expect((await admin('POST', `/admin/devices/${fan}/control`, { airFlow: { windStrength: 'HIGH' } })).json().error.code).toBe('1222');
      expect(await error(admin('POST', '/admin/devices/nothing/control', { airFlow: { windStrength: 'HIGH' } })))
        .toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
    });
  });

  describe('POST /admin/devices/{id}/push', () => {
    it("accepts a code of the profile's notification.push", async () => {
      expect(parsedProfile(t.ctx.devices.modelOf(await t.ctx.devices.get(washer))).pushCodes).toContain('WASHING_IS_COMPLETE');
      const res = await admin('POST', `/admin/devices/${washer}/push`, { pushCode: 'WASHING_IS_COMPLETE' });
      expect([res.statusCode, res.json().response]).toEqual([200, {}]);
    });

    it('refuses a code outside the profile (1102), a missing one (1101), and an unknown device (1205)', async () => {
      const bad = await admin('POST', `/admin/devices/${washer}/push`, { pushCode: 'DOOR_IS_OPEN' });
      expect([bad.statusCode, bad.json().error.code]).toEqual([400, '1102']);
      expect(bad.json().error.message).toBe('pushCode must be one of WASHING_IS_COMPLETE, ERROR_DURING_WASHING; got "DOOR_IS_OPEN".');
      expect(await error(admin('POST', `/admin/devices/${washer}/push`, {}))).toEqual([400, { code: '1101', message: 'pushCode is missing.' }]);
      expect(await error(admin('POST', '/admin/devices/nothing/push', { pushCode: 'WASHING_IS_COMPLETE' })))
        .toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
    });
  });

  describe('POST /admin/devices/{id}/connection', () => {
    it('takes a device offline and online again, which the partner interface follows', async () => {
      await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
      expect((await admin('POST', `/admin/devices/${fan}/connection`, { online: false })).json().response).toEqual({});
      expect((await admin('GET', `/admin/devices/${fan}`)).json().response.online).toBe(false);
      const offline = await t.app.inject({ method: 'GET', url: `/devices/${fan}`, headers: world.headers() });
      expect([offline.statusCode, offline.json().error.code]).toEqual([416, '1222']);
      await admin('POST', `/admin/devices/${fan}/connection`, { online: true });
      expect((await t.app.inject({ method: 'GET', url: `/devices/${fan}`, headers: world.headers() })).statusCode).toBe(200);
    });

    it('refuses a non-boolean (1102), a missing field (1101), and an unknown device (1205)', async () => {
      expect(await error(admin('POST', `/admin/devices/${fan}/connection`, { online: 'true' }))).toEqual([400, { code: '1102', message: 'online must be boolean.' }]);
      expect(await error(admin('POST', `/admin/devices/${fan}/connection`, {}))).toEqual([400, { code: '1101', message: 'online is missing.' }]);
      expect(await error(admin('POST', '/admin/devices/nothing/connection', { online: true })))
        .toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
    });
  });
});
