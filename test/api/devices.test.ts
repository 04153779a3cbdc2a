import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/ids.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

describe('devices (DESIGN A.5)', () => {
  let t: TestApp;
  let world: World;

  beforeEach(async () => {
    t = await testApp();
    world = await createWorld(t.ctx);
  });
  afterEach(() => t.close());

  const deviceOf = (type: string) => world.devices.find((d) => d.deviceType === type)!.deviceId;
  const get = (url: string, headers = world.headers()) => t.app.inject({ method: 'GET', url, headers });
  const control = (deviceId: string, command: unknown, extra: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/devices/${deviceId}`, headers: world.headers(extra), payload: command as object });
  const loadList = () => get('/devices');

  describe('GET /devices', () => {
    it('lists every device of the user in the envelope, echoing the message id', async () => {
      const headers = world.headers();
      const res = await get('/devices', headers);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.messageId).toBe(headers['x-message-id']);
      expect(body.timestamp).toMatch(TIMESTAMP);
      expect(body.response).toHaveLength(world.devices.length);
      for (const entry of body.response) {
        expect(Object.keys(entry.deviceInfo).sort()).toEqual(
          entry.deviceInfo.deviceType.startsWith('DEVICE_WASHTOWER_')
            ? ['alias', 'deviceType', 'groupId', 'modelName', 'reportable']
            : ['alias', 'deviceType', 'modelName', 'reportable'],
        );
        expect(entry.deviceInfo.reportable).toBe(false);
      }
    });

    it("writes each item in the schema's order, as JSON, and again after a rename", async () => {
      const washer = deviceOf('DEVICE_WASHER');
      const itemOf = async () => {
        const res = await loadList();
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        const item = (res.json().response as { deviceId: string; deviceInfo: object }[]).find((d) => d.deviceId === washer)!;
        // The text, key order included, is what serializing the object would write.
        expect(res.body).toContain(JSON.stringify(item));
        return item;
      };
      const before = await itemOf();
      expect(before).toEqual({ deviceId: washer, deviceInfo: { deviceType: 'DEVICE_WASHER', modelName: expect.any(String), alias: expect.any(String), reportable: false } });
      const alias = 'Mum\'s "washer" \\ 洗濯機\n';
      await t.ctx.devices.rename(washer, alias);
      expect(await itemOf()).toEqual({ ...before, deviceInfo: { ...before.deviceInfo, alias } });
      const half = world.devices.find((d) => d.deviceType === 'DEVICE_WASHTOWER_DRYER')!.deviceId;
      const list = (await loadList()).json().response as { deviceId: string; deviceInfo: object }[];
      expect(Object.keys(list.find((d) => d.deviceId === half)!.deviceInfo)).toEqual(['deviceType', 'modelName', 'alias', 'reportable', 'groupId']);
    });

    it('gives both washtower halves one groupId', async () => {
      const list = (await loadList()).json().response as { deviceInfo: { deviceType: string; groupId?: string } }[];
      const halves = list.filter((d) => d.deviceInfo.deviceType.startsWith('DEVICE_WASHTOWER_'));
      expect(halves).toHaveLength(2);
      expect(halves[0]!.deviceInfo.groupId).toBe(halves[1]!.deviceInfo.groupId);
    });

    it('shows only the types the service is allowed, and [] when there are none', async () => {
      const other = await createWorld(t.ctx, { allowedDevices: ['DEVICE_WASHER'], userNumber: world.userNumber });
      const list = (await t.app.inject({ method: 'GET', url: '/devices', headers: other.headers() })).json().response;
      expect(list.map((d: { deviceInfo: { deviceType: string } }) => d.deviceInfo.deviceType)).toEqual(['DEVICE_WASHER']);
      const empty = await createWorld(t.ctx, { deviceTypes: [] });
      expect((await t.app.inject({ method: 'GET', url: '/devices', headers: empty.headers() })).json().response).toEqual([]);
    });

    it('is the precondition of every device operation (1210 before it)', async () => {
      const res = await get(`/devices/${deviceOf('DEVICE_WASHER')}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toEqual({ code: '1210', message: 'Call GET /devices for this user before operating on a device.' });
      await loadList();
      expect((await get(`/devices/${deviceOf('DEVICE_WASHER')}`)).statusCode).toBe(200);
    });
  });

  describe('device checks', () => {
    beforeEach(async () => {
      await loadList();
    });

    it('a malformed device id answers 1224', async () => {
      const res = await get('/devices/bad%20id');
      expect([res.statusCode, res.json().error.code]).toEqual([404, '1224']);
      expect((await get(`/devices/${'a'.repeat(129)}`)).json().error.code).toBe('1224');
    });

    it("an unknown device and another user's device both answer 1205", async () => {
      expect((await get('/devices/unknown-device')).json().error.code).toBe('1205');
      const stranger = await createWorld(t.ctx);
      const res = await get(`/devices/${stranger.devices[0]!.deviceId}`);
      expect([res.statusCode, res.json().error]).toEqual([404, { code: '1205', message: `Device ${stranger.devices[0]!.deviceId} is not registered to this user.` }]);
    });

    it('a device whose type the service may not see answers 1221', async () => {
      const narrow = await createWorld(t.ctx, { allowedDevices: ['DEVICE_WASHER'], userNumber: world.userNumber });
      await t.app.inject({ method: 'GET', url: '/devices', headers: narrow.headers() });
      const res = await t.app.inject({ method: 'GET', url: `/devices/${deviceOf('DEVICE_DRYER')}`, headers: narrow.headers() });
      expect([res.statusCode, res.json().error.code]).toEqual([406, '1221']);
    });
  });

  describe('profile and status', () => {
    beforeEach(async () => {
      await loadList();
    });

    it("GET /devices/profile/{id} answers the model's profile as stored", async () => {
      const deviceId = deviceOf('DEVICE_REFRIGERATOR');
      const device = await t.ctx.devices.get(deviceId);
      const res = await get(`/devices/profile/${deviceId}`);
      expect(res.json().response).toEqual(t.ctx.devices.modelOf(device).profile);
    });

    it('GET /devices/{id} answers the full status with its version as ETag', async () => {
      const deviceId = deviceOf('DEVICE_REFRIGERATOR');
      const state = await t.ctx.devices.state(deviceId);
      const res = await get(`/devices/${deviceId}`);
      expect(res.headers.etag).toBe(`"${state.version}"`);
      expect(res.json().response).toEqual(state.status);
    });

    it('GET /devices/{id} answers JSON bytes of the envelope, the status as stored, keys in order', async () => {
      const deviceId = deviceOf('DEVICE_WASHER');
      const state = await t.ctx.devices.state(deviceId);
      const headers = world.headers();
      const res = await get(`/devices/${deviceId}`, headers);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const { timestamp } = res.json();
      expect(timestamp).toMatch(TIMESTAMP);
      expect(res.body).toBe(JSON.stringify({ messageId: headers['x-message-id'], timestamp, response: state.status }));
    });

    it('a device that is not connected answers 1222 (416)', async () => {
      const deviceId = deviceOf('DEVICE_REFRIGERATOR');
      await t.ctx.devices.setConnection(deviceId, false);
      const res = await get(`/devices/${deviceId}`);
      expect([res.statusCode, res.json().error.code]).toEqual([416, '1222']);
      expect((await get(`/devices/profile/${deviceId}`)).statusCode).toBe(200);
    });
  });

  describe('POST /devices/{id}: control', () => {
    beforeEach(async () => {
      await loadList();
    });

    it('applies a valid command and answers the full status; the version moves on', async () => {
      const deviceId = deviceOf('DEVICE_CEILING_FAN');
      const before = await t.ctx.devices.state(deviceId);
      const res = await control(deviceId, { airFlow: { windStrength: 'TURBO' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().response.airFlow.windStrength).toBe('TURBO');
      expect(res.headers.etag).toBe(`"${before.version + 1}"`);
      expect((await get(`/devices/${deviceId}`)).json().response).toEqual(res.json().response);
    });

    it.each([
      ['a value outside the enum', { airFlow: { windStrength: 'HURRICANE' } }, '1102'],
      ['a value of the wrong type', { airFlow: { windStrength: 3 } }, '1102'],
      ['an unknown property', { airFlow: { windSpeed: 'LOW' } }, '2207'],
      ['an unknown resource', { turbo: { on: true } }, '2207'],
      ['an empty command', {}, '1101'],
    ])('refuses %s with %s and changes nothing', async (_name, command, code) => {
      const deviceId = deviceOf('DEVICE_CEILING_FAN');
      const before = await t.ctx.devices.state(deviceId);
      const res = await control(deviceId, command);
      expect([res.statusCode, res.json().error.code]).toEqual([400, code]);
      expect(res.json().error.message).toMatch(/\S/);
      expect(await t.ctx.devices.state(deviceId)).toEqual(before);
    });

    it('names the property and the allowed values in a 1102', async () => {
      const res = await control(deviceOf('DEVICE_CEILING_FAN'), { airFlow: { windStrength: 'HURRICANE' } });
      expect(res.json().error.message).toContain('windStrength');
      expect(res.json().error.message).toContain('TURBO');
    });

    it('refuses control of a read-only property with 2201', async () => {
      const res = await control(deviceOf('DEVICE_WASHER'), { location: { locationName: 'MAIN' }, runState: { currentState: 'RUNNING' } });
      expect(res.json().error.code).toBe('2201');
    });

    it('refuses every command to a water purifier with 2207', async () => {
      const res = await control(deviceOf('DEVICE_WATER_PURIFIER'), { runState: { cockState: 'NORMAL' } });
      expect(res.json().error.code).toBe('2207');
    });

    it('a missing body answers 1101, malformed JSON 1000, another content type 1000', async () => {
      const url = `/devices/${deviceOf('DEVICE_CEILING_FAN')}`;
      const missing = await t.app.inject({ method: 'POST', url, headers: world.headers() });
      expect(missing.json().error.code).toBe('1101');
      const malformed = await t.app.inject({ method: 'POST', url, headers: { ...world.headers(), 'content-type': 'application/json' }, payload: '{"airFlow":' });
      expect(malformed.json().error.code).toBe('1000');
      const text = await t.app.inject({ method: 'POST', url, headers: { ...world.headers(), 'content-type': 'text/plain' }, payload: 'hello' });
      expect([text.statusCode, text.json().error.code]).toEqual([400, '1000']);
      // DESIGN J: a __proto__ key is no malformed JSON but an unknown resource.
      const proto = await t.app.inject({ method: 'POST', url, headers: { ...world.headers(), 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1}}' });
      expect(proto.json().error).toEqual({ code: '2207', message: 'Resource "__proto__" is not in the profile of this device' });
    });

    it('a device that is not connected answers 1222 after the body is checked', async () => {
      const deviceId = deviceOf('DEVICE_CEILING_FAN');
      await t.ctx.devices.setConnection(deviceId, false);
      expect((await control(deviceId, { airFlow: { windStrength: 'HURRICANE' } })).json().error.code).toBe('1102');
      const res = await control(deviceId, { airFlow: { windStrength: 'LOW' } });
      expect([res.statusCode, res.json().error.code]).toEqual([416, '1222']);
    });

    it('x-conditional-control must be true or false', async () => {
      for (const value of ['maybe', '']) {
        const res = await control(deviceOf('DEVICE_CEILING_FAN'), { airFlow: { windStrength: 'LOW' } }, { 'x-conditional-control': value });
        expect([res.statusCode, res.json().error.code]).toEqual([400, '1216']);
      }
    });

    it('a washer with remote control off refuses with 2301 naming the property, with or without the header', async () => {
      const deviceId = deviceOf('DEVICE_WASHER');
      await t.ctx.devices.report(deviceId, { location: { locationName: 'MAIN' }, remoteControlEnable: { remoteControlEnabled: false } });
      const start = { location: { locationName: 'MAIN' }, operation: { washerOperationMode: 'START' } };
      for (const extra of [{ 'x-conditional-control': 'true' }, {}] as Record<string, string>[]) {
        const res = await control(deviceId, start, extra);
        expect(res.json().error.code).toBe('2301');
        expect(res.json().error.message).toContain('remoteControlEnabled');
      }
    });

    it('records DEVICE_STATUS with only the changed part for a service holding an event subscription', async () => {
      const deviceId = deviceOf('DEVICE_CEILING_FAN');
      await t.app.inject({ method: 'POST', url: `/event/${deviceId}`, headers: world.headers() });
      await control(deviceId, { airFlow: { windStrength: 'TURBO' } });
      const messages = await t.ctx.store.listMessages(world.serviceId, { deviceId });
      const event = messages.map((m) => JSON.parse(m.body)).find((b) => b.event?.pushType === 'DEVICE_STATUS');
      expect(event.event).toEqual({
        pushType: 'DEVICE_STATUS',
        serviceId: world.serviceId,
        deviceId,
        deviceType: 'DEVICE_CEILING_FAN',
        report: { airFlow: { windStrength: 'TURBO' } },
        userList: [world.userNumber],
      });
    });
  });

  it('a fresh message id is used when the request has none', async () => {
    const headers: Record<string, string> = world.headers();
    delete headers['x-message-id'];
    const res = await get('/devices', headers);
    expect(res.json().error.code).toBe('1101');
    expect(res.json().messageId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(newMessageId()).not.toBe(res.json().messageId);
  });
});
