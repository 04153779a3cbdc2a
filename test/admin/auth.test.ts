import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTimestamp, newMessageId, type Clock } from '../../src/ids.js';
import { ADMIN_TOKEN, adminHeaders, createWorld, testApp, type TestApp } from '../helpers/app.js';

const NOW = Date.UTC(2026, 0, 1);
const clock: Clock = { now: () => NOW };

describe('admin authentication and the admin pipeline (DESIGN D)', () => {
  let t: TestApp;

  beforeEach(async () => {
    t = await testApp({ clock });
  });
  afterEach(() => t.close());

  const list = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/admin/services', headers });

  it('answers the envelope with the admin token, echoing x-message-id', async () => {
    const messageId = newMessageId();
    const res = await list(adminHeaders({ 'x-message-id': messageId }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ messageId, timestamp: formatTimestamp(NOW), response: [] });
  });

  it('answers a malformed device id in the path with 1224, whatever its length, as the partner interface does', async () => {
    for (const [method, url] of [['GET', '/admin/devices/bad!id'], ['POST', `/admin/devices/${'x'.repeat(10_000)}/push`], ['DELETE', '/admin/users/u1/devices/a%20b']] as const) {
      const res = await t.app.inject({ method, url, headers: adminHeaders() });
      expect([res.statusCode, res.json().error.code], url.slice(0, 40)).toEqual([404, '1224']);
    }
    const res = await t.app.inject({ method: 'GET', url: '/admin/devices/bad!id', headers: adminHeaders() });
    expect(res.json().error.message).toBe('Device id "bad!id" is malformed: it must be 1 to 128 of A-Z, a-z, 0-9, _ and -.');
    // A well-formed id that is not registered stays 1205.
    expect((await t.app.inject({ method: 'GET', url: '/admin/devices/no-such-device', headers: adminHeaders() })).json().error.code).toBe('1205');
  });

  it('accepts the scheme in any case', async () => {
    expect((await list({ authorization: `bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
  });

  it.each([
    ['no Authorization', {}, 'The admin API needs header Authorization: Bearer <ADMIN_TOKEN>.'],
    ['a bare token', { authorization: ADMIN_TOKEN }, 'The admin API needs header Authorization: Bearer <ADMIN_TOKEN>.'],
    ['an empty Bearer', { authorization: 'Bearer ' }, 'The admin API needs header Authorization: Bearer <ADMIN_TOKEN>.'],
    ['a wrong token', { authorization: 'Bearer not-the-token' }, 'The admin token is wrong.'],
    ['a longer token', { authorization: `Bearer ${ADMIN_TOKEN}x` }, 'The admin token is wrong.'],
  ])('%s answers 401 1301 in the envelope', async (_name, headers, message) => {
    const messageId = newMessageId();
    const res = await list({ ...headers, 'x-message-id': messageId });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ messageId, timestamp: formatTimestamp(NOW), error: { code: '1301', message } });
  });

  it('checks the token before the body and the path parameters', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/users', headers: { 'content-type': 'text/plain' }, payload: 'x' });
    expect([res.statusCode, res.json().error.code]).toEqual([401, '1301']);
    const unknown = await t.app.inject({ method: 'GET', url: '/admin/services/svc_nobody', headers: { authorization: 'Bearer wrong' } });
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([401, '1301']);
  });

  it('guards the simulator calls too', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/admin/sim/time-scale', headers: { 'content-type': 'application/json' }, payload: '{"scale":5}' });
    expect([res.statusCode, res.json().error.code]).toEqual([401, '1301']);
    expect(t.ctx.simulator.timeScale).not.toBe(5);
  });

  it('leaves the partner interface alone: its own checks answer there', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/users', headers: adminHeaders() });
    expect(res.json().error.code).toBe('1101');
  });

  it('a body without content-type application/json answers 1000', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/users', headers: adminHeaders({ 'content-type': 'text/plain' }), payload: '{"countryCode":"KR"}' });
    expect([res.statusCode, res.json().error]).toEqual([400, { code: '1000', message: 'A request with a body must have content-type application/json; got "text/plain".' }]);
  });

  it('malformed JSON answers 1000; a missing body 1101; a body of the wrong type 1000', async () => {
    const headers = adminHeaders({ 'content-type': 'application/json' });
    const malformed = await t.app.inject({ method: 'POST', url: '/admin/users', headers, payload: '{"countryCode":' });
    expect([malformed.statusCode, malformed.json().error.code]).toEqual([400, '1000']);
    const missing = await t.app.inject({ method: 'POST', url: '/admin/users', headers: adminHeaders() });
    expect([missing.statusCode, missing.json().error]).toEqual([400, { code: '1101', message: 'The body is missing: this call needs a JSON body.' }]);
    const array = await t.app.inject({ method: 'POST', url: '/admin/users', headers, payload: '[]' });
    expect([array.statusCode, array.json().error]).toEqual([400, { code: '1000', message: 'The body must be a JSON object.' }]);
  });

  it.each([
    ['GET', '/admin/nowhere'],
    ['DELETE', '/admin/services'],
    ['PUT', '/admin/users/u1/tokens'],
    ['POST', '/admin/services/svc_1/keys/rotate'],
    ['GET', '/admin'],
    ['GET', '/admin/'],
    ['OPTIONS', '/admin/services'],
  ] as const)('without the token, %s %s answers 401 1301 like a known call: the API shape stays hidden', async (method, url) => {
    const known = await t.app.inject({ method: 'GET', url: '/admin/services' });
    const res = await t.app.inject({ method, url, headers: { authorization: 'Bearer wrong' } });
    expect([res.statusCode, res.json().error]).toEqual([401, { code: '1301', message: 'The admin token is wrong.' }]);
    const bare = await t.app.inject({ method, url });
    expect([bare.statusCode, bare.json().error]).toEqual([known.statusCode, known.json().error]);
  });

  it('an unknown admin path answers 1305 (404), a wrong method 1305 (405)', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/admin/nowhere', headers: adminHeaders() });
    expect([missing.statusCode, missing.json().error.code]).toEqual([404, '1305']);
    const wrong = await t.app.inject({ method: 'PUT', url: '/admin/services', headers: adminHeaders() });
    expect([wrong.statusCode, wrong.json().error.code]).toEqual([405, '1305']);
    expect(String(wrong.headers.allow).split(', ')).toEqual(expect.arrayContaining(['GET', 'POST']));
  });

  it('a body nested 20,000 levels answers 1000 naming the nesting on every call that takes one, and stores nothing', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN'] });
    const deviceId = world.devices[0]!.deviceId;
    const nested = (field: string) => `{"${field}":${'['.repeat(19_999)}${']'.repeat(19_999)}}`;
    const snapshot = async () => JSON.stringify([
      await t.ctx.store.listServices(),
      await t.ctx.store.listUserDevices(world.userNumber),
      await t.ctx.store.getDeviceState(deviceId),
      await t.ctx.store.listMessages(world.serviceId, {}),
      t.ctx.simulator.timeScale,
    ]);
    const before = await snapshot();
    for (const [method, url, field] of [
      ['POST', '/admin/services', 'name'],
      ['PATCH', `/admin/services/${world.serviceId}`, 'allowedDevices'],
      ['POST', `/admin/services/${world.serviceId}/recover`, 'since'],
      ['POST', '/admin/users', 'countryCode'],
      ['POST', `/admin/users/${world.userNumber}/tokens`, 'serviceId'],
      ['POST', `/admin/users/${world.userNumber}/devices`, 'deviceType'],
      ['PATCH', `/admin/devices/${deviceId}`, 'alias'],
      ['POST', `/admin/devices/${deviceId}/report`, 'operation'],
      ['POST', `/admin/devices/${deviceId}/push`, 'pushCode'],
      ['POST', `/admin/devices/${deviceId}/connection`, 'online'],
      ['POST', `/admin/devices/${deviceId}/sim`, 'args'],
      ['PUT', '/admin/sim/time-scale', 'scale'],
      ['POST', '/admin/sim/scenarios/morning', 'userNumber'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: adminHeaders({ 'content-type': 'application/json' }), payload: nested(field) });
      expect([`${method} ${url}`, res.statusCode, res.json().error], `${method} ${url}`)
        .toEqual([`${method} ${url}`, 400, { code: '1000', message: 'The body nests deeper than 64 levels.' }]);
    }
    expect(await snapshot()).toBe(before);
  });

  it('U+0000 in a path, a query or a body answers 1000 and stores nothing (PostgreSQL text cannot hold it)', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN'] });
    const deviceId = world.devices[0]!.deviceId;
    const snapshot = async () => JSON.stringify([await t.ctx.store.listServices(), await t.ctx.store.listUserDevices(world.userNumber)]);
    const before = await snapshot();
    const path = 'The path or query holds %00 (the character U+0000), which no id or value may contain.';
    const body = 'The body holds the character U+0000, which no name or value may contain.';
    for (const [method, url, payload, message] of [
      ['GET', '/admin/services/%00', undefined, path],
      ['GET', `/admin/devices/a%00b`, undefined, path],
      ['GET', `/admin/services/${world.serviceId}/messages?deviceId=%00`, undefined, path],
      ['POST', '/admin/services', '{"name":"a\\u0000b","allowedDevices":["DEVICE_WASHER"]}', body],
      ['PATCH', `/admin/devices/${deviceId}`, '{"alias":"a\\u0000"}', body],
      ['POST', `/admin/users/${world.userNumber}/devices`, '{"deviceType":"DEVICE_WASHER","alias":"\\u0000"}', body],
      ['POST', `/admin/devices/${deviceId}/report`, '{"extra\\u0000":{"a":1}}', body],
    ] as const) {
      const headers = adminHeaders(payload === undefined ? {} : { 'content-type': 'application/json' });
      const res = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
      expect([`${method} ${url}`, res.statusCode, res.json().error]).toEqual([`${method} ${url}`, 400, { code: '1000', message }]);
    }
    expect(await snapshot()).toBe(before);
    expect((await t.app.inject({ method: 'PATCH', url: `/admin/devices/${deviceId}`, headers: adminHeaders({ 'content-type': 'application/json' }), payload: '{"alias":"a\\\\u0000"}' })).statusCode).toBe(200);
  });

  it('keeps its document behind the token: /admin/openapi.json answers 1301 without it, and the public /openapi.json has no admin call', async () => {
    const refused = await t.app.inject({ method: 'GET', url: '/admin/openapi.json' });
    expect([refused.statusCode, refused.json().error.code]).toEqual([401, '1301']);
    const wrong = await t.app.inject({ method: 'GET', url: '/admin/openapi.json', headers: { authorization: 'Bearer not-the-token' } });
    expect([wrong.statusCode, wrong.json().error.code]).toEqual([401, '1301']);
    const publicDoc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(publicDoc.paths).filter((path) => path.startsWith('/admin'))).toEqual([]);
    expect(Object.keys(publicDoc.components.securitySchemes)).not.toContain('admin');
  });

  it('shows every admin call in /admin/openapi.json under tag admin with the admin security scheme and an operationId', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/admin/openapi.json', headers: adminHeaders() })).json();
    const adminPaths = Object.entries(doc.paths as Record<string, Record<string, { tags: string[]; security: unknown; operationId?: string }>>)
      .filter(([path]) => path.startsWith('/admin/'));
    const operations = adminPaths.flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ call: `${method.toUpperCase()} ${path}`, op })));
    expect(operations.map((o) => o.call).sort()).toEqual([
      'DELETE /admin/users/{userNumber}',
      'DELETE /admin/users/{userNumber}/devices/{deviceId}',
      'GET /admin/devices',
      'GET /admin/devices/{deviceId}',
      'GET /admin/overview',
      'GET /admin/services',
      'GET /admin/services/{serviceId}',
      'GET /admin/services/{serviceId}/endpoint',
      'GET /admin/services/{serviceId}/messages',
      'GET /admin/sim/time-scale',
      'GET /admin/users',
      'PATCH /admin/devices/{deviceId}',
      'PATCH /admin/services/{serviceId}',
      'POST /admin/devices/{deviceId}/connection',
      'POST /admin/devices/{deviceId}/control',
      'POST /admin/devices/{deviceId}/push',
      'POST /admin/devices/{deviceId}/report',
      'POST /admin/devices/{deviceId}/sim',
      'POST /admin/messages/{messageId}/resend',
      'POST /admin/services',
      'POST /admin/services/{serviceId}/recover',
      'POST /admin/services/{serviceId}/rotate-secret',
      'POST /admin/sim/scenarios/{name}',
      'POST /admin/users',
      'POST /admin/users/{userNumber}/devices',
      'POST /admin/users/{userNumber}/devices/{deviceId}',
      'POST /admin/users/{userNumber}/tokens',
      'PUT /admin/sim/time-scale',
    ]);
    for (const { op } of operations) {
      expect(op.tags).toEqual(['admin']);
      expect(op.security).toEqual([{ admin: [] }]);
    }
    const operationIds = operations.map(({ op }) => op.operationId);
    expect(new Set(operationIds).size).toBe(operations.length);
    expect(operationIds.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
  });
});

describe('the admin API without ADMIN_TOKEN', () => {
  it('answers 1301 saying it is disabled, whatever token is sent', async () => {
    const t = await testApp({ clock, settings: { ADMIN_TOKEN: '' } });
    try {
      for (const headers of [{}, adminHeaders()]) {
        const res = await t.app.inject({ method: 'GET', url: '/admin/services', headers });
        expect([res.statusCode, res.json().error]).toEqual([401, { code: '1301', message: 'The admin API is disabled: set ADMIN_TOKEN.' }]);
      }
    } finally {
      await t.close();
    }
  });
});
