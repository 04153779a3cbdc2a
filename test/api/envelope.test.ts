import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import type { Clock } from '../../src/ids.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe('the envelope and the service and token checks (DESIGN A.2–A.4)', () => {
  let t: TestApp;
  let world: World;
  let now = Date.UTC(2026, 0, 1);
  const clock: Clock = { now: () => now };

  beforeEach(async () => {
    now = Date.UTC(2026, 0, 1);
    t = await testApp({ clock, settings: { RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '5' } });
    world = await createWorld(t.ctx);
  });
  afterEach(() => t.close());

  const users = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/users', headers });

  it('an unknown path answers 1305 with 404, a wrong method 1305 with 405 and Allow', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/nowhere', headers: world.headers() });
    expect([missing.statusCode, missing.json().error.code]).toEqual([404, '1305']);
    const wrong = await t.app.inject({ method: 'PUT', url: '/users', headers: world.headers() });
    expect([wrong.statusCode, wrong.json().error.code, wrong.headers.allow]).toEqual([405, '1305', 'GET, HEAD']);
  });

  it('HEAD, which Fastify adds beside each GET, passes the same checks as GET', async () => {
    const refused = await t.app.inject({ method: 'HEAD', url: '/users', headers: { ...world.headers(), 'x-service-key': 'not-the-key' } });
    const accepted = await t.app.inject({ method: 'HEAD', url: '/users', headers: world.headers() });
    expect([refused.statusCode, accepted.statusCode]).toEqual([401, 200]);
  });

  it('a body over 64 KiB answers 1102 with 413', async () => {
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    const payload = JSON.stringify({ junk: 'x'.repeat(70_000) });
    const res = await t.app.inject({ method: 'POST', url: `/event/${world.devices[0]!.deviceId}`, headers: { ...world.headers(), 'content-type': 'application/json' }, payload });
    expect([res.statusCode, res.json().error.code]).toEqual([413, '1102']);
  });

  it('a control body nested 20,000 levels answers 1000 naming the nesting, and changes nothing', async () => {
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    const { deviceId } = world.devices.find((d) => d.deviceType === 'DEVICE_CEILING_FAN')!;
    const before = await t.ctx.store.getDeviceState(deviceId);
    const payload = `{"operation":${'['.repeat(19_999)}${']'.repeat(19_999)}}`;
    const res = await t.app.inject({ method: 'POST', url: `/devices/${deviceId}`, headers: { ...world.headers(), 'content-type': 'application/json' }, payload });
    expect([res.statusCode, res.json().error]).toEqual([400, { code: '1000', message: 'The body nests deeper than 64 levels.' }]);
    expect(await t.ctx.store.getDeviceState(deviceId)).toEqual(before);
    expect(await t.ctx.store.listMessages(world.serviceId, {})).toEqual([]);
  });

  it('an unknown service id and a wrong key get the same 1301', async () => {
    const unknown = await users({ ...world.headers(), 'x-service-id': 'svc_nobody' });
    const wrongKey = await users({ ...world.headers(), 'x-service-key': 'not-the-key' });
    expect([unknown.statusCode, unknown.json().error]).toEqual([401, wrongKey.json().error]);
    expect(wrongKey.json().error.code).toBe('1301');
  });

  it('an unknown or expired token answers 1103', async () => {
    expect((await users({ ...world.headers(), authorization: 'Bearer nope' })).json().error.code).toBe('1103');
    now += 2 * 86_400_000;
    const expired = await users(world.headers());
    expect([expired.statusCode, expired.json().error]).toEqual([401, { code: '1103', message: 'The access token has expired.' }]);
  });

  it("another service's token answers 1103", async () => {
    const other = await createWorld(t.ctx, { userNumber: world.userNumber });
    expect((await users({ ...world.headers(), authorization: other.accessToken })).json().error.code).toBe('1103');
  });

  it('over the rate limit answers 1306 with 429 and Retry-After', async () => {
    for (let i = 0; i < 5; i++) expect((await users(world.headers())).statusCode).toBe(200);
    const limited = await users(world.headers());
    expect([limited.statusCode, limited.json().error.code, limited.headers['retry-after']]).toEqual([429, '1306', '1']);
    now += 1000;
    expect((await users(world.headers())).statusCode).toBe(200);
  });

  it('an error envelope has exactly messageId, timestamp and error {code, message}', async () => {
    const res = await users({ ...world.headers(), 'x-country-code': 'US' });
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'messageId', 'timestamp']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
    expect(res.statusCode).toBe(ERRORS['1307'].http);
  });

  it('/openapi.json documents every partner operation and the error table', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, method] of [
      ['/devices', 'get'], ['/devices/profile/{deviceId}', 'get'], ['/devices/{deviceId}', 'get'], ['/devices/{deviceId}', 'post'],
      ['/users', 'get'], ['/user/service', 'delete'], ['/push', 'get'], ['/push/{deviceId}', 'post'], ['/push/{deviceId}', 'delete'],
      ['/event', 'get'], ['/event/{deviceId}', 'post'], ['/event/{deviceId}', 'delete'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    for (const code of Object.keys(ERRORS)) expect(doc.info.description).toContain(`| ${code} |`);
    expect(JSON.stringify(doc.paths['/push/{deviceId}'].post.responses)).toContain('1207');
  });

  it('an internal fault answers 2000 with 500 and no stack trace', async () => {
    const failing = await testApp();
    const w = await createWorld(failing.ctx, { deviceTypes: [] });
    await failing.ctx.store.close();
    const res = await failing.app.inject({ method: 'GET', url: '/users', headers: w.headers() });
    expect([res.statusCode, res.json().error]).toEqual([500, { code: '2000', message: 'Internal error.' }]);
    expect(res.body).not.toMatch(/\bat \S+ \(/);
    await failing.app.close();
  });

  it('/docs is served locally', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);
  });
});
