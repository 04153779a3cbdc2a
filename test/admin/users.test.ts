import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTimestamp, type Clock } from '../../src/ids.js';
import { countriesOf, demoCountry } from '../../src/regions.js';
import { callAdmin, createWorld, partnerHeaders, testApp, type TestApp, type World } from '../helpers/app.js';

const NOW = Date.UTC(2026, 0, 1);

describe('admin: users, tokens and their devices (DESIGN D)', () => {
  let t: TestApp;
  let world: World;
  let now = NOW;
  const clock: Clock = { now: () => now };

  beforeEach(async () => {
    now = NOW;
    t = await testApp({ clock });
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
  });
  afterEach(() => t.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => callAdmin(t.app, method, url, body);
  const error = async (res: Promise<{ statusCode: number; json(): { error: unknown } }>) => {
    const done = await res;
    return [done.statusCode, done.json().error];
  };

  describe('POST /admin/users', () => {
    it('creates a user with the given number, or a generated one', async () => {
      const res = await admin('POST', '/admin/users', { countryCode: 'KR', userNumber: 'user-1' });
      expect(res.json()).toEqual({ messageId: expect.any(String), timestamp: formatTimestamp(NOW), response: { userNumber: 'user-1', countryCode: 'KR' } });
      const generated = (await admin('POST', '/admin/users', { countryCode: 'JP' })).json().response;
      expect(generated).toEqual({ userNumber: expect.stringMatching(/^[A-Za-z0-9]{20}$/), countryCode: 'JP' });
      expect(await t.ctx.store.getUser(generated.userNumber)).toBeDefined();
    });

    it('gives the user an owner login with email and password, kept only as a scrypt hash (DESIGN G)', async () => {
      const res = await admin('POST', '/admin/users', { countryCode: 'KR', userNumber: 'owner-1', email: ' Owner@Example.com', password: 'long enough' });
      expect(res.json().response).toEqual({ userNumber: 'owner-1', countryCode: 'KR', email: 'owner@example.com' });
      const login = await t.ctx.store.findOwnerLogin('owner@example.com');
      expect(login?.passwordHash).toMatch(/^scrypt\$/);
      expect(login?.passwordHash).not.toContain('long enough');
      expect(await t.ctx.owners.signIn('owner@example.com', 'long enough')).toBe('owner-1');
      expect(await t.ctx.owners.signIn('owner@example.com', 'wrong one!')).toBeUndefined();
      const taken = await admin('POST', '/admin/users', { countryCode: 'KR', userNumber: 'owner-2', email: 'owner@example.com', password: 'long enough' });
      expect([taken.statusCode, taken.json().error.code]).toEqual([400, '1102']);
      expect(await t.ctx.store.getUser('owner-2')).toBeUndefined();
    });

    it.each([
      [{ countryCode: 'KR', email: 'a@example.com' }, '1101', 'email and password go together: give both or neither.'],
      [{ countryCode: 'KR', email: 'not an email', password: 'long enough' }, '1102', 'email must be an email address; got "not an email".'],
      [{ countryCode: 'KR', email: 'a@example.com', password: 'short' }, '1102', 'password must be at least 8 characters long.'],
      [{}, '1101', 'countryCode is missing.'],
      [{ countryCode: 'XX' }, '1102', 'countryCode must be an ISO 3166-1 alpha-2 code; got "XX".'],
      [{ countryCode: 'kr' }, '1102', 'countryCode must be an ISO 3166-1 alpha-2 code; got "kr".'],
      [{ countryCode: 'KR', userNumber: 'no spaces' }, '1102', 'userNumber must be 1 to 64 of A-Z, a-z, 0-9, _ and -; got "no spaces".'],
      [{ countryCode: 'KR', userNumber: 7 }, '1102', 'userNumber must be string.'],
    ])('%j answers %s', async (body, code, message) => {
      expect(await error(admin('POST', '/admin/users', body))).toEqual([400, { code, message }]);
    });

    it.each(['US', 'DE', 'AQ'])('a country outside the deployment\'s region (%s) answers 1102 naming the region and its countries; no user is made', async (countryCode) => {
      const message = `countryCode must be a country of this deployment's region KIC (${countriesOf('KIC').join(', ')}); got "${countryCode}".`;
      expect(await error(admin('POST', '/admin/users', { countryCode, userNumber: 'abroad' }))).toEqual([400, { code: '1102', message }]);
      expect(await t.ctx.store.getUser('abroad')).toBeUndefined();
    });

    it('the CLI and the sandbox create users through the same check', async () => {
      await expect(t.ctx.accounts.createUser('US', 'abroad')).rejects.toMatchObject({ code: '1102' });
      expect(await t.ctx.store.getUser('abroad')).toBeUndefined();
    });

    it('an existing userNumber answers 1102', async () => {
      expect(await error(admin('POST', '/admin/users', { countryCode: 'KR', userNumber: world.userNumber })))
        .toEqual([400, { code: '1102', message: `User ${world.userNumber} already exists.` }]);
    });
  });

  describe('GET /admin/users', () => {
    it('lists users by userNumber, a page at a time', async () => {
      for (const userNumber of ['list-b', 'list-a', 'list-c']) await admin('POST', '/admin/users', { countryCode: 'KR', userNumber });
      const everyone = [world.userNumber, 'list-a', 'list-b', 'list-c'].sort();
      const first = (await admin('GET', '/admin/users?limit=2')).json().response;
      expect(first).toEqual(everyone.slice(0, 2).map((userNumber) => ({ userNumber, countryCode: expect.any(String) })));
      const rest = (await admin('GET', `/admin/users?after=${first[1].userNumber}`)).json().response;
      expect(rest.map((u: { userNumber: string }) => u.userNumber)).toEqual(everyone.slice(2));
      expect(rest).toContainEqual({ userNumber: 'list-c', countryCode: 'KR' });
    });

    it('refuses a limit out of range and an unknown query field with 1102', async () => {
      expect(await error(admin('GET', '/admin/users?limit=0'))).toEqual([400, { code: '1102', message: 'limit must be an integer from 1 to 1000; got "0".' }]);
      expect((await admin('GET', '/admin/users?page=2')).json().error.code).toBe('1102');
    });
  });

  describe('DELETE /admin/users/{userNumber}', () => {
    it('deletes the user and its devices; its tokens then answer 1202', async () => {
      const res = await admin('DELETE', `/admin/users/${world.userNumber}`);
      expect([res.statusCode, res.json().response]).toEqual([200, {}]);
      expect(await t.ctx.store.getUser(world.userNumber)).toBeUndefined();
      expect(await t.ctx.store.getDevice(world.devices[0]!.deviceId)).toBeUndefined();
      expect((await t.app.inject({ method: 'GET', url: '/users', headers: world.headers() })).json().error.code).toBe('1202');
    });

    it('an unknown user answers 1202', async () => {
      expect(await error(admin('DELETE', '/admin/users/nobody'))).toEqual([404, { code: '1202', message: 'User nobody does not exist.' }]);
    });
  });

  describe('POST /admin/users/{userNumber}/tokens', () => {
    it('answers a token valid for a day by default, which connects the user to the service', async () => {
      const user = (await admin('POST', '/admin/users', { countryCode: 'KR' })).json().response;
      const res = await admin('POST', `/admin/users/${user.userNumber}/tokens`, { serviceId: world.serviceId });
      const { accessToken, expiresAt } = res.json().response;
      expect(expiresAt).toBe(new Date(NOW + 86_400_000).toISOString());
      expect(await t.ctx.store.getConnection(world.serviceId, user.userNumber)).toBeDefined();
      const me = await t.app.inject({ method: 'GET', url: '/users', headers: partnerHeaders({ ...world, accessToken }) });
      expect(me.json().response).toEqual({ userNumber: user.userNumber });
    });

    it('honours expiresInSeconds', async () => {
      const res = await admin('POST', `/admin/users/${world.userNumber}/tokens`, { serviceId: world.serviceId, expiresInSeconds: 60 });
      expect(res.json().response.expiresAt).toBe(new Date(NOW + 60_000).toISOString());
    });

    it('refuses an unknown user (1202), an unknown service (1102) and bad bodies (1101/1102)', async () => {
      expect(await error(admin('POST', '/admin/users/nobody/tokens', { serviceId: world.serviceId })))
        .toEqual([404, { code: '1202', message: 'User nobody does not exist.' }]);
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/tokens`, { serviceId: 'svc_nobody' })))
        .toEqual([400, { code: '1102', message: 'serviceId svc_nobody is not a service.' }]);
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/tokens`, {})))
        .toEqual([400, { code: '1101', message: 'serviceId is missing.' }]);
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/tokens`, { serviceId: world.serviceId, expiresInSeconds: 0 })))
        .toEqual([400, { code: '1102', message: 'expiresInSeconds must be >= 1.' }]);
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/tokens`, { serviceId: world.serviceId, expiresInSeconds: '60' })))
        .toEqual([400, { code: '1102', message: 'expiresInSeconds must be integer.' }]);
    });
    it('a token issued while its user is deleted answers 1202, or a token the deletion revoked; never 2000', async () => {
      const leaving = Array.from({ length: 5 }, (_, i) => `leaving-${i}`);
      for (const userNumber of leaving) await admin('POST', '/admin/users', { countryCode: world.countryCode, userNumber });
      await Promise.all(leaving.map(async (userNumber) => {
        const [issued, deleted] = await Promise.all([
          admin('POST', `/admin/users/${userNumber}/tokens`, { serviceId: world.serviceId }),
          admin('DELETE', `/admin/users/${userNumber}`),
        ]);
        expect(deleted.statusCode).toBe(200);
        expect([[200, undefined], [404, { code: '1202', message: `User ${userNumber} does not exist.` }]]).toContainEqual([issued.statusCode, issued.json().error]);
        if (issued.statusCode !== 200) return;
        const me = await t.app.inject({ method: 'GET', url: '/users', headers: partnerHeaders({ ...world, accessToken: issued.json().response.accessToken }) });
        expect(me.statusCode).not.toBe(200);
      }));
    });
  });

  describe('POST /admin/users/{userNumber}/devices', () => {
    it('registers a virtual device, online, with its secret shown once', async () => {
      const res = await admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_DRYER', alias: 'Dryer', deviceId: 'dryer-1', virtual: true });
      const device = res.json().response;
      expect(device).toEqual({
        deviceId: 'dryer-1',
        deviceSecret: expect.any(String),
        deviceType: 'DEVICE_DRYER',
        modelName: t.ctx.devices.modelOf(await t.ctx.devices.get('dryer-1')).modelName,
        alias: 'Dryer',
        virtual: true,
        online: true,
      });
      expect((await t.ctx.devices.state('dryer-1')).online).toBe(true);
    });

    it('a real device is offline until it connects, and is real by default outside the sandbox', async () => {
      const device = (await admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_DRYER', alias: 'Dryer' })).json().response;
      expect([device.virtual, device.online]).toEqual([false, false]);
      expect(device.deviceId).toMatch(/^[0-9a-f]{64}$/);
    });

    it('gives washtower halves the groupId asked for, one washer and one dryer to a group', async () => {
      for (const deviceType of ['DEVICE_WASHTOWER_WASHER', 'DEVICE_WASHTOWER_DRYER']) {
        const half = await admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType, alias: 'Tower', groupId: 'tower-1', virtual: true });
        expect(half.json().response.groupId).toBe('tower-1');
      }
      const dryer = (await t.ctx.store.listUserDevices(world.userNumber)).find((d) => d.deviceType === 'DEVICE_WASHTOWER_DRYER')!.deviceId;
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_WASHTOWER_DRYER', alias: 'Second dryer', groupId: 'tower-1' })))
        .toEqual([400, { code: '1102', message: `groupId "tower-1" already has its DEVICE_WASHTOWER_DRYER: ${dryer}.` }]);
    });

    it.each([
      [{ alias: 'x' }, '1101', 'deviceType is missing.'],
      [{ deviceType: 'DEVICE_DRYER' }, '1101', 'alias is missing.'],
      [{ deviceType: 'DEVICE_DRYER', alias: '' }, '1102', 'alias must NOT have fewer than 1 characters.'],
      [{ deviceType: 'DEVICE_DRYER', alias: '   ' }, '1102', 'alias must have a character other than spaces; got "   ".'],
      [{ deviceType: 'DEVICE_DRYER', alias: 'x', modelName: 'NO-SUCH-MODEL' }, '1102', 'modelName "NO-SUCH-MODEL" is not a model of DEVICE_DRYER in the catalog.'],
      [{ deviceType: 'DEVICE_DRYER', alias: 'x', deviceId: 'bad id' }, '1102', 'deviceId must be 1 to 128 of A-Z, a-z, 0-9, _ and -; got "bad id".'],
      [{ deviceType: 'DEVICE_DRYER', alias: 'x', groupId: 'g' }, '1102', 'groupId is only for DEVICE_WASHTOWER_WASHER and DEVICE_WASHTOWER_DRYER.'],
      [{ deviceType: 'DEVICE_DRYER', alias: 'x', virtual: 'yes' }, '1102', 'virtual must be boolean.'],
    ])('%j answers %s', async (body, code, message) => {
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/devices`, body))).toEqual([400, { code, message }]);
    });

    it('an unknown deviceType answers 1102 naming the types', async () => {
      const [status, err] = await error(admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_TOASTER', alias: 'x' }));
      expect([status, (err as { code: string }).code]).toEqual([400, '1102']);
      expect((err as { message: string }).message).toMatch(/^deviceType must be one of DEVICE_/);
    });

    it('an unknown user answers 1202; a taken deviceId 1102', async () => {
      expect(await error(admin('POST', '/admin/users/nobody/devices', { deviceType: 'DEVICE_DRYER', alias: 'x' })))
        .toEqual([404, { code: '1202', message: 'User nobody does not exist.' }]);
      const taken = world.devices[0]!.deviceId;
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_DRYER', alias: 'x', deviceId: taken })))
        .toEqual([400, { code: '1102', message: `Device ${taken} is already registered.` }]);
    });
    it('registrations of one deviceId at the same time: one registers it, the others answer 1102 as a taken deviceId does', async () => {
      const body = { deviceType: 'DEVICE_DRYER', alias: 'Dryer', deviceId: 'dryer-1' };
      const answers = await Promise.all(Array.from({ length: 8 }, () => admin('POST', `/admin/users/${world.userNumber}/devices`, body)));
      const refusals = answers.filter((res) => res.statusCode !== 200).map((res) => [res.statusCode, res.json().error]);
      expect(refusals).toEqual(Array(7).fill([400, { code: '1102', message: 'Device dryer-1 is already registered.' }]));
      expect((await t.ctx.devices.get('dryer-1')).userNumbers).toEqual([world.userNumber]);
    });

    it('a registration while its user is deleted registers the device (then unregistered with the user) or answers 1202, never 2000', async () => {
      const races = Array.from({ length: 5 }, (_, i) => ({ userNumber: `leaving-${i}`, deviceId: `dryer-of-leaving-${i}` }));
      for (const { userNumber } of races) await admin('POST', '/admin/users', { countryCode: world.countryCode, userNumber });
      await Promise.all(races.map(async ({ userNumber, deviceId }) => {
        const [registered, deleted] = await Promise.all([
          admin('POST', `/admin/users/${userNumber}/devices`, { deviceType: 'DEVICE_DRYER', alias: 'Dryer', deviceId }),
          admin('DELETE', `/admin/users/${userNumber}`),
        ]);
        expect(deleted.statusCode).toBe(200);
        expect([[200, undefined], [404, { code: '1202', message: `User ${userNumber} does not exist.` }]])
          .toContainEqual([registered.statusCode, registered.json().error]);
        expect(await t.ctx.store.getDevice(deviceId)).toBeUndefined();
      }));
    });
  });

  describe('sharing and unregistering', () => {
    it('shares a device with another user, who then sees it; unregistering from one user keeps it for the other', async () => {
      const deviceId = world.devices[0]!.deviceId;
      const other = await createWorld(t.ctx, { deviceTypes: [] });
      const shared = await admin('POST', `/admin/users/${other.userNumber}/devices/${deviceId}`);
      expect([shared.statusCode, shared.json().response]).toEqual([200, {}]);
      const list = await t.app.inject({ method: 'GET', url: '/devices', headers: other.headers() });
      expect(list.json().response.map((d: { deviceId: string }) => d.deviceId)).toEqual([deviceId]);

      expect((await admin('DELETE', `/admin/users/${world.userNumber}/devices/${deviceId}`)).json().response).toEqual({});
      expect((await t.ctx.devices.get(deviceId)).userNumbers).toEqual([other.userNumber]);
      expect((await admin('DELETE', `/admin/users/${other.userNumber}/devices/${deviceId}`)).json().response).toEqual({});
      expect(await t.ctx.store.getDevice(deviceId)).toBeUndefined();
    });

    it('refuses an unknown user (1202), an unknown device (1205) and sharing twice (1102)', async () => {
      const deviceId = world.devices[0]!.deviceId;
      expect(await error(admin('POST', `/admin/users/nobody/devices/${deviceId}`))).toEqual([404, { code: '1202', message: 'User nobody does not exist.' }]);
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/devices/nothing`))).toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
      expect(await error(admin('POST', `/admin/users/${world.userNumber}/devices/${deviceId}`)))
        .toEqual([400, { code: '1102', message: `Device ${deviceId} is already registered to user ${world.userNumber}.` }]);
    });

    it('shares of one device with one user at the same time: one shares it, the others answer 1102 as sharing twice does', async () => {
      const deviceId = world.devices[0]!.deviceId;
      const other = await createWorld(t.ctx, { deviceTypes: [] });
      const answers = await Promise.all(Array.from({ length: 4 }, () => admin('POST', `/admin/users/${other.userNumber}/devices/${deviceId}`)));
      const refusals = answers.filter((res) => res.statusCode !== 200).map((res) => [res.statusCode, res.json().error]);
      expect(refusals).toEqual(Array(3).fill([400, { code: '1102', message: `Device ${deviceId} is already registered to user ${other.userNumber}.` }]));
    });

    it("refuses to share a washtower half with a user whose group has that half (1102, as registering it is); the group's other half completes their tower", async () => {
      const other = await createWorld(t.ctx, { deviceTypes: [] });
      const register = async (userNumber: string, deviceType: string) =>
        (await admin('POST', `/admin/users/${userNumber}/devices`, { deviceType, alias: 'Tower', groupId: 'tower-1', virtual: true })).json().response.deviceId as string;
      const theirWasher = await register(other.userNumber, 'DEVICE_WASHTOWER_WASHER');
      const washer = await register(world.userNumber, 'DEVICE_WASHTOWER_WASHER');
      const dryer = await register(world.userNumber, 'DEVICE_WASHTOWER_DRYER');

      expect(await error(admin('POST', `/admin/users/${other.userNumber}/devices/${washer}`)))
        .toEqual([400, { code: '1102', message: `groupId "tower-1" already has its DEVICE_WASHTOWER_WASHER: ${theirWasher}.` }]);
      expect((await t.ctx.devices.get(washer)).userNumbers).toEqual([world.userNumber]);
      expect((await admin('POST', `/admin/users/${other.userNumber}/devices/${dryer}`)).json().response).toEqual({});
      expect((await t.ctx.store.listUserDevices(other.userNumber)).map((d) => d.deviceId)).toEqual([theirWasher, dryer]);
      // Sharing it again answers as sharing any device twice.
      expect(await error(admin('POST', `/admin/users/${other.userNumber}/devices/${dryer}`)))
        .toEqual([400, { code: '1102', message: `Device ${dryer} is already registered to user ${other.userNumber}.` }]);
    });

    it("refuses to unregister an unknown device or another user's device with 1205", async () => {
      const stranger = await createWorld(t.ctx, { deviceTypes: [] });
      const deviceId = world.devices[0]!.deviceId;
      expect(await error(admin('DELETE', `/admin/users/${stranger.userNumber}/devices/${deviceId}`)))
        .toEqual([404, { code: '1205', message: `Device ${deviceId} is not registered to user ${stranger.userNumber}.` }]);
      expect(await error(admin('DELETE', `/admin/users/${world.userNumber}/devices/nothing`)))
        .toEqual([404, { code: '1205', message: 'Device nothing is not registered.' }]);
      expect(await error(admin('DELETE', `/admin/users/nobody/devices/${deviceId}`))).toEqual([404, { code: '1202', message: 'User nobody does not exist.' }]);
      expect(await t.ctx.store.getDevice(deviceId)).toBeDefined();
    });
  });
});

describe('admin: users in each region (DESIGN A.2)', () => {
  it.each(['KIC', 'EIC', 'AIC'] as const)('region %s creates users of its own countries and refuses the others', async (region) => {
    const t = await testApp({ settings: { REGION: region } });
    try {
      const own = await callAdmin(t.app, 'POST', '/admin/users', { countryCode: demoCountry(region) });
      expect(own.statusCode).toBe(200);
      for (const other of (['KIC', 'EIC', 'AIC'] as const).filter((r) => r !== region)) {
        const res = await callAdmin(t.app, 'POST', '/admin/users', { countryCode: demoCountry(other) });
        expect([res.statusCode, res.json().error.code]).toEqual([400, '1102']);
      }
    } finally {
      await t.close();
    }
  });
});
