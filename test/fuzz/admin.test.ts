/**
 * Fuzz of the admin API (DESIGN D, J): every admin route, with and without the admin token, with
 * hostile ids, queries and bodies. Without the token every /admin path answers 401 1301 (whatever
 * its shape); with it, every answer is an envelope with a code of the table and its HTTP status,
 * never a 500, and a refused call changes nothing in the store.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/ids.js';
import { ADMIN_TOKEN, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';
import { expectEnvelope, expectNoPollution } from './envelope.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Every admin call of DESIGN D, a wrong method on a known path, and paths that do not exist. */
const ROUTES: readonly [Method, string][] = [
  ['POST', '/admin/services'], ['GET', '/admin/services'], ['GET', '/admin/services/:service'], ['PATCH', '/admin/services/:service'],
  ['POST', '/admin/services/:service/rotate-secret'], ['GET', '/admin/services/:service/messages'], ['POST', '/admin/services/:service/recover'],
  ['POST', '/admin/users'], ['DELETE', '/admin/users/:user'], ['POST', '/admin/users/:user/tokens'], ['POST', '/admin/users/:user/devices'],
  ['POST', '/admin/users/:user/devices/:device'], ['DELETE', '/admin/users/:user/devices/:device'],
  ['GET', '/admin/devices/:device'], ['PATCH', '/admin/devices/:device'], ['POST', '/admin/devices/:device/report'],
  ['POST', '/admin/devices/:device/push'], ['POST', '/admin/devices/:device/connection'], ['POST', '/admin/devices/:device/sim'],
  ['POST', '/admin/messages/:message/resend'], ['PUT', '/admin/sim/time-scale'], ['POST', '/admin/sim/scenarios/:scenario'],
  ['PUT', '/admin/services'], ['DELETE', '/admin/devices/:device'], ['GET', '/admin/nowhere/:device'], ['GET', '/admin'],
];

/** Every field name of an admin body. */
const FIELDS = [
  'name', 'allowedDevices', 'callbackUrl', 'eventCallbackUrl', 'enabled', 'expirePreviousNow', 'countryCode', 'userNumber', 'serviceId',
  'expiresInSeconds', 'deviceType', 'modelName', 'alias', 'deviceId', 'groupId', 'virtual', 'pushCode', 'online', 'since', 'scale',
  'action', 'args', 'operation', 'ceilingfanOperationMode',
];

const HOSTILE_IDS = [
  '', '.', '..', '%2e%2e', 'a%2Fb', '%252F', '%C0%AF', '%zz', '%', '%00', 'a%0D%0Ab', ';a=b', '%F0%9F%92%A9', '%ED%A0%80',
  '__proto__', 'constructor', 'hasOwnProperty', 'toString', "x' OR '1'='1", 'a'.repeat(129), 'a'.repeat(5_000),
];
const HOSTILE_QUERIES = [
  '', '?limit=0', '?limit=-1', '?limit=1001', '?limit=1e3', '?limit=abc', '?limit=1&limit=2', '?status=nope', '?status=__proto__',
  '?since=yesterday', '?since=2026-13-45T99:99:99Z', '?since=%E0%A4%A', '?deviceId=%00', '?unknown=1', '?__proto__[polluted]=1',
  '?constructor[prototype][polluted]=1', `?deviceId=${'a'.repeat(10_000)}`,
];

const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const HOSTILE_BODIES: (string | Buffer)[] = [
  '', '{}', '[]', 'null', '0', '"x"', 'true', '{', '{"name":', '\uFEFF{}', 'NaN', '1e400', '{"a":1}{"b":2}',
  nestedArrays(65), `{"name":${nestedArrays(20_000)}}`, `${'{"a":'.repeat(1_000)}1${'}'.repeat(1_000)}`,
  JSON.stringify(Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]))),
  `{"name":"${'x'.repeat(70_000)}"}`,
  Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '{"args":{"__proto__":{"polluted":true}}}',
  '{"name":"x","allowedDevices":"DEVICE_WASHER"}', '{"name":"x","allowedDevices":[]}', '{"name":"","allowedDevices":["DEVICE_WASHER"]}',
  '{"name":"x","allowedDevices":["DEVICE_WASHER"],"callbackUrl":"javascript:alert(1)"}', '{"countryCode":"KR","userNumber":"a/b"}',
  '{"serviceId":"svc_nobody","expiresInSeconds":-1}', '{"serviceId":"svc_nobody","expiresInSeconds":1e308}',
  '{"deviceType":"DEVICE_WASHER","alias":"","virtual":"yes"}', '{"alias":"x","unknown":1}', '{"online":"true"}', '{"pushCode":null}',
  '{"scale":0}', '{"scale":-1}', '{"scale":1e308}', '{"since":"2026-01-01T00:00:00+99:99"}', '{"action":"","args":[]}',
];

/** The names every object inherits: DESIGN J makes them unknown names like any other. */
const INHERITED_NAMES = ['hasOwnProperty', 'toString', 'constructor', '__proto__', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable'];

describe('the admin API under fuzz', () => {
  let t: TestApp;
  let world: World;
  let messageId: string;
  /** The store as the last call left it. */
  let known: string;

  beforeAll(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
  });
  /** A service, a user with a fan and a washer, and a message to resend; the store as it is then. */
  async function freshWorld(): Promise<void> {
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN', 'DEVICE_WASHER'] });
    // Lists the devices, so that the next registration makes a message to resend.
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    await t.ctx.devices.register(world.userNumber, { deviceType: 'DEVICE_DRYER', alias: 'Dryer', virtual: true });
    messageId = (await t.ctx.store.listMessages(world.serviceId, {}))[0]!.messageId;
    known = await fingerprint();
  }
  // A world for each test: a random call may delete a user or rotate a key.
  beforeEach(freshWorld);
  afterAll(() => t.close());

  /** Everything an admin call could change that the fuzz can reach. */
  async function fingerprint(): Promise<string> {
    const devices = await t.ctx.store.listUserDevices(world.userNumber);
    return JSON.stringify([
      await t.ctx.store.listServices(),
      await t.ctx.store.getUser(world.userNumber),
      await t.ctx.store.getUser('fuzz-user'),
      devices,
      await Promise.all(devices.map((d) => t.ctx.store.getDeviceState(d.deviceId))),
      (await t.ctx.store.listMessages(world.serviceId, { limit: 1000 })).map((m) => [m.messageId, m.status]),
      await t.ctx.store.getConnection(world.serviceId, world.userNumber),
      t.ctx.simulator.timeScale,
    ]);
  }

  /** The route's path with its parameters filled from `ids` (a placeholder left out of `ids` takes the world's own). */
  function path(template: string, ids: Partial<Record<string, string>> = {}): string {
    const own: Record<string, string> = {
      service: world.serviceId, user: world.userNumber, device: world.devices[0]!.deviceId, message: messageId, scenario: 'laundry-day',
    };
    return template.replace(/:(\w+)/g, (_, name: string) => ids[name] ?? own[name]!);
  }

  interface Call {
    method: Method;
    url: string;
    authorization?: string | undefined;
    contentType?: string | undefined;
    body?: string | Buffer | undefined;
  }

  /** Sends one call and checks the answer: 1301 without the token, else an envelope; the store unchanged unless it succeeded. */
  async function check(call: Call): Promise<string | undefined> {
    const headers: Record<string, string> = { 'x-message-id': newMessageId() };
    if (call.authorization !== undefined) headers.authorization = call.authorization;
    if (call.contentType !== undefined) headers['content-type'] = call.contentType;
    const res = await t.app.inject({ method: call.method, url: call.url, headers, ...(call.body !== undefined ? { payload: call.body } : {}) });
    const context = `${call.method} ${call.url.slice(0, 80)}`;
    const code = expectEnvelope(res.statusCode, res.body, context);
    const tokenValid = call.authorization !== undefined && new RegExp(`^Bearer\\s+${ADMIN_TOKEN}\\s*$`, 'i').test(call.authorization);
    // The router refuses a path that is not valid percent-encoding before any hook (1000): it shows nothing of the API.
    if (!tokenValid && code !== '1000') expect([res.statusCode, code], context).toEqual([401, '1301']);
    const now = await fingerprint();
    if (res.statusCode !== 200) expect(now, `${context} changed the store`).toBe(known);
    known = now;
    expectNoPollution();
    return code;
  }

  // Mostly the right token and JSON, so that most calls reach the route and its checks.
  const authorization = fc.oneof(
    { arbitrary: fc.constant(`Bearer ${ADMIN_TOKEN}`), weight: 8 },
    fc.constantFrom(undefined, '', 'Bearer', 'Bearer ', ADMIN_TOKEN, `bearer ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN}x`, `Bearer ${ADMIN_TOKEN.slice(1)}`, 'Basic dGVzdA==', `Bearer ${'x'.repeat(100_000)}`, 'Bearer \x00', 'Bearer é'),
    fc.string({ unit: 'binary', maxLength: 30 }),
  );
  const id = fc.oneof(
    fc.constant(undefined),
    fc.constant(undefined),
    fc.string({ maxLength: 40 }).map((s) => encodeURIComponent(s)),
    fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
    fc.constantFrom(...HOSTILE_IDS, 'fuzz-user', 'dinner', 'cleaning-day', 'svc_nobody'),
  );
  /** JSON objects of admin field names with any values, written as text so that any key is an own key. */
  const fieldsBody = fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.oneof(fc.jsonValue(), fc.constantFrom('KR', 'DEVICE_WASHER', 'fuzz-user', 'open-door', 'https://a.example/h', 'http://127.0.0.1/h', 'file:///etc/passwd'))), { maxLength: 5 })
    .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`).join(',')}}`);
  const body = fc.oneof(
    fc.constant(undefined),
    fieldsBody,
    fieldsBody,
    fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
    fc.string({ maxLength: 100 }),
    fc.constantFrom(...HOSTILE_BODIES),
  );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 8 },
    fc.constantFrom(undefined, 'text/plain', 'application/json; charset=utf-8', 'application/jsonx'),
  );

  it('random calls: 1301 without the token, an envelope of the table with it, never a partial write', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        authorization,
        fc.record({ service: id, user: id, device: id, message: id, scenario: id }),
        fc.constantFrom(...HOSTILE_QUERIES),
        contentType,
        body,
        async ([method, template], auth, ids, query, type, payload) => {
          const withQuery = template.endsWith('/messages') ? query : '';
          const code = await check({ method, url: path(template, ids) + withQuery, authorization: auth, contentType: payload === undefined ? undefined : type, body: payload });
          // A deletion that went through: a new world, so that the next calls find what they name.
          if (method === 'DELETE' && code === undefined) await freshWorld();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every route without the token, or with a wrong one, answers 401 1301', async () => {
    for (const [method, template] of ROUTES) {
      for (const auth of [undefined, 'Bearer wrong', ADMIN_TOKEN]) {
        expect(await check({ method, url: path(template), authorization: auth, contentType: 'application/json', body: '{}' })).toBe('1301');
      }
    }
  });

  it('every route, with the token, under each hostile id', async () => {
    for (const [method, template] of ROUTES.filter(([, url]) => url.includes(':'))) {
      for (const hostile of HOSTILE_IDS) {
        const ids = { service: hostile, user: hostile, device: hostile, message: hostile, scenario: hostile };
        await check({ method, url: path(template, ids), authorization: `Bearer ${ADMIN_TOKEN}`, contentType: 'application/json', body: '{}' });
      }
    }
  });

  it('the messages query, with the token, under each hostile value', async () => {
    for (const query of HOSTILE_QUERIES) {
      await check({ method: 'GET', url: path('/admin/services/:service/messages') + query, authorization: `Bearer ${ADMIN_TOKEN}` });
    }
  });

  it('every route that takes a body, with the token, under each hostile body', async () => {
    for (const [method, template] of ROUTES.filter(([m]) => m !== 'GET' && m !== 'DELETE')) {
      for (const payload of HOSTILE_BODIES) {
        await check({ method, url: path(template), authorization: `Bearer ${ADMIN_TOKEN}`, contentType: 'application/json', body: payload });
      }
    }
  });

  it('inherited names are answered as any unknown name is, on every admin call that looks a name up', async () => {
    const fan = world.devices.find((d) => d.deviceType === 'DEVICE_CEILING_FAN')!.deviceId;
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, contentType: 'application/json' };
    const cases: [Method, (name: string) => string, (name: string) => string][] = [
      ['POST', () => `/admin/devices/${fan}/report`, (name) => `{"${name}":{"x":1}}`],
      ['POST', () => `/admin/devices/${fan}/report`, (name) => `{"operation":{"${name}":"POWER_ON"}}`],
      ['POST', () => `/admin/devices/${fan}/push`, (name) => `{"pushCode":"${name}"}`],
      ['POST', () => `/admin/devices/${fan}/sim`, (name) => `{"action":"${name}"}`],
      ['POST', () => `/admin/users/${world.userNumber}/devices`, (name) => `{"deviceType":"${name}","alias":"x"}`],
      ['POST', () => `/admin/users/${world.userNumber}/devices`, (name) => `{"deviceType":"DEVICE_WASHER","modelName":"${name}","alias":"x"}`],
      ['POST', () => '/admin/services', (name) => `{"name":"x","allowedDevices":["${name}"]}`],
      ['POST', () => '/admin/users', (name) => `{"countryCode":"${name}"}`],
      ['POST', (name) => `/admin/sim/scenarios/${name}`, () => `{"userNumber":"${world.userNumber}"}`],
      ['GET', (name) => `/admin/services/${world.serviceId}/messages?status=${name}`, () => ''],
    ];
    for (const [method, url, payload] of cases) {
      const unknown = await check({ method, url: url('unknownName'), ...auth, body: payload('unknownName') || undefined });
      for (const name of INHERITED_NAMES) {
        const code = await check({ method, url: url(name), ...auth, body: payload(name) || undefined });
        expect(code, `${method} ${url(name)} ${payload(name)}`).toBe(unknown);
      }
    }
  });
});
