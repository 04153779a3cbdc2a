/**
 * Fuzz of the partner interface (DESIGN J): whatever headers, path, query and body a caller sends —
 * through Fastify's inject, or as raw bytes over a socket to a running server — the process lives,
 * every answer is an envelope with a code of the table and its HTTP status (never a 500), and a
 * refused request leaves no trace in the store.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEVICE_TYPES } from '../../src/catalog/index.js';
import { newMessageId } from '../../src/ids.js';
import { startCli, stdoutUntil } from '../cli/process.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';
import { createTestDatabase, isPostgresUrl, postgresAdminUrl } from '../helpers/postgres.js';
import { rawExchange } from '../helpers/raw-http.js';
import { expectEnvelope, expectNoPollution } from './envelope.js';

const ROUTES = [
  ['GET', '/devices'], ['GET', '/devices/profile/:id'], ['GET', '/devices/:id'], ['POST', '/devices/:id'], ['HEAD', '/devices/:id'],
  ['GET', '/users'], ['DELETE', '/user/service'], ['GET', '/push'], ['POST', '/push/:id'], ['DELETE', '/push/:id'],
  ['GET', '/event'], ['POST', '/event/:id'], ['DELETE', '/event/:id'], ['PATCH', '/devices/:id'], ['OPTIONS', '/users'], ['GET', '/nowhere/:id'],
] as const;
const HEADERS = ['authorization', 'x-country-code', 'x-message-id', 'x-service-id', 'x-service-key', 'x-conditional-control'] as const;

/** Device ids in every kind of encoding: reserved and encoded slashes, double and overlong encodings, broken escapes, lengths past 128. */
const ENCODED_IDS = [
  '', '.', '..', '%2e%2e', '..%2F..%2Fadmin%2Fservices', 'a%2Fb', '%252F', '%C0%AF', '%E0%A4%A', '%zz', '%', '%00', 'a%0D%0Ab',
  ';a=b', 'a+b', 'a%20b', '%F0%9F%92%A9', '%ED%A0%80', '%FF%FE', '__proto__', 'constructor', 'hasOwnProperty',
  'a'.repeat(129), 'a'.repeat(5_000), 'a'.repeat(60_000),
];
const QUERIES = [
  '', '?a=%zz', '?%E0%A4%A', '?__proto__[polluted]=1', '?__proto__.polluted=1', '?constructor[prototype][polluted]=1',
  '?a=1&a=2', `?${'k=v&'.repeat(2_000)}`, `?x=${'y'.repeat(10_000)}`,
];

const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const json = (text: string) => ({ type: 'application/json', text });

/** Bodies built to hurt: deep, wide, huge, not UTF-8, not quite JSON, prototype keys below the top level. */
const HOSTILE_BODIES: { type: string; text: string | Buffer }[] = [
  json(nestedArrays(65)),
  json(`{"operation":${nestedArrays(20_000)}}`),
  json(`${'{"a":'.repeat(1_000)}1${'}'.repeat(1_000)}`),
  json(JSON.stringify(Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])))),
  json(JSON.stringify(Array.from({ length: 20_000 }, () => 0))),
  json(`{"a":"${'x'.repeat(70_000)}"}`),
  { type: 'application/json', text: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) },
  { type: 'application/json', text: Buffer.from('{"operation":{"ceilingfanOperationMode":"\xc3\x28"}}', 'latin1') },
  json('\uFEFF{}'), json('NaN'), json('1e400'), json('-0'), json('"\\ud800"'), json('{"a":1,"a":2}'), json('{"a":1}{"b":2}'),
  json('{"__proto__":{"polluted":true}}'),
  json('{"constructor":{"prototype":{"polluted":true}}}'),
  json('{"operation":{"__proto__":{"polluted":true}}}'),
  json('{"expire":{"__proto__":{"polluted":true},"unit":"HOUR","timer":1}}'),
  json('{"operation":{"ceilingfanOperationMode":"POWER_ON"}}'),
  json('{"operation":{"ceilingfanOperationMode":"hasOwnProperty"}}'),
  json('{"expire":{"unit":"DAY","timer":999999999999}}'),
  json('{"expire":{"unit":"constructor","timer":1}}'),
  { type: 'application/json; charset=utf-16', text: '{}' },
  { type: 'application/json, text/plain', text: '{}' },
  { type: 'APPLICATION/JSON', text: '{}' },
];

/**
 * Header values that Node's parser lets through to a route: tab, visible ASCII and space, bytes
 * 0x80–0xFF (read as Latin-1); huge ones. What it refuses is sent over the socket below.
 */
const HOSTILE_HEADER_VALUES = [
  '', ' ', '\t', 'Bearer', 'Bearer ', 'bearer  x', 'US', 'kr', 'ZZ', 'true', 'TRUE', 'A'.repeat(22), 'A'.repeat(21) + '=',
  'é', 'Ünïcödé', '\xff\xfe', Buffer.from('💩'.repeat(11)).toString('latin1'), 'A'.repeat(10_000), `Bearer ${'x'.repeat(100_000)}`,
];
/** Header values that never reach a route over the wire: control characters and DEL (refused), CR or LF (they end the header). */
const UNREADABLE_HEADER_VALUES = ['\x00', 'a\x7fb', 'Bearer \x01', 'a\rb', 'a\nb', 'KR\r\nx-evil: 1'];
/** A string as Node's parser would let it through in a header value. */
const readable = (value: string) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, 'x');

/** A message names what was wrong, not the whole of it: none echoes a 100 KiB header or a 60,000-character id. */
function expectShortMessage(body: string, context: string): void {
  expect((JSON.parse(body) as { error: { message: string } }).error.message.length, context).toBeLessThan(300);
}

/** The names every object inherits: DESIGN J makes them unknown names like any other. */
const INHERITED_NAMES = ['hasOwnProperty', 'toString', 'constructor', '__proto__', 'valueOf', 'isPrototypeOf', '__defineGetter__', 'propertyIsEnumerable'];

describe('the partner interface under fuzz (inject)', () => {
  let t: TestApp;
  let world: World;
  let stranger: World;
  let fan: string;
  /** The store as the last request left it. */
  let known: string;

  beforeAll(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    stranger = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
  });
  // A world for each test: a random DELETE /user/service disconnects the one before.
  beforeEach(async () => {
    world = await createWorld(t.ctx);
    fan = world.devices.find((d) => d.deviceType === 'DEVICE_CEILING_FAN')!.deviceId;
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    known = await fingerprint();
  });
  afterAll(() => t.close());

  /** Everything a partner request could change. */
  async function fingerprint(): Promise<string> {
    const states = await Promise.all(world.devices.map((d) => t.ctx.store.getDeviceState(d.deviceId)));
    const messages = await t.ctx.store.listMessages(world.serviceId, { limit: 1000 });
    const push = await t.ctx.store.listPushSubscriptions(world.serviceId, world.userNumber);
    const events = await t.ctx.store.listEventSubscriptions(world.serviceId, world.userNumber, 0);
    const connection = await t.ctx.store.getConnection(world.serviceId, world.userNumber);
    return JSON.stringify([states, messages.length, push, events, connection]);
  }

  interface Call {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: { type: string; text: string | Buffer } | undefined;
  }

  /** Sends one request and checks the answer: an envelope (HEAD may have no body), and the store unchanged unless it succeeded. */
  async function check(call: Call): Promise<string | undefined> {
    const headers = { ...call.headers, ...(call.body?.type ? { 'content-type': call.body.type } : {}) };
    const res = await t.app.inject({ method: call.method as 'GET', url: call.url, headers, ...(call.body ? { payload: call.body.text } : {}) });
    const context = `${call.method} ${call.url.slice(0, 80)}`;
    let code: string | undefined;
    if (call.method === 'HEAD' && res.body === '') expect(res.statusCode, context).toBeLessThan(500);
    // A path that resolves to `/` (`/devices/..`) is the docs' front door: it leads to /docs, by design (issue 19).
    else if (new URL(call.url, 'http://x').pathname === '/' && res.statusCode === 302) expect(res.headers.location, context).toBe('/docs');
    else {
      code = expectEnvelope(res.statusCode, res.body, context);
      if (code !== undefined) expectShortMessage(res.body, context);
    }
    const now = await fingerprint();
    if (res.statusCode !== 200) expect(now, `${context} changed the store`).toBe(known);
    known = now;
    expectNoPollution();
    return code;
  }

  // Mostly the valid value, so that a quarter of the requests pass every header check and reach the route.
  const headerValue = fc.oneof(
    { arbitrary: fc.constant<'valid'>('valid'), weight: 20 },
    fc.constant<'absent'>('absent'),
    fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\x21-\x7e]/g, 'x')),
    fc.string({ unit: 'binary', maxLength: 30 }).map(readable),
    { arbitrary: fc.constantFrom(...HOSTILE_HEADER_VALUES), weight: 2 },
  );
  const deviceId = fc.oneof(
    fc.constantFrom('existing', 'existing', 'other'),
    fc.string({ maxLength: 140 }).map((s) => encodeURIComponent(s)),
    fc.string({ unit: 'binary', maxLength: 20 }).map((s) => encodeURIComponent(s)),
    fc.uint8Array({ minLength: 1, maxLength: 20 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
    fc.constantFrom(...ENCODED_IDS),
  );
  const body = fc.oneof(
    fc.constant<undefined>(undefined),
    fc.jsonValue().map((v) => json(JSON.stringify(v) ?? 'null')),
    fc.string({ maxLength: 200 }).map((s) => json(s)),
    fc.record({ type: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', ''), text: fc.string({ minLength: 1, maxLength: 50 }) }),
    fc.constantFrom(...HOSTILE_BODIES),
  );

  it('random requests: always an envelope with a code of the table, never a partial write', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.tuple(...HEADERS.map(() => headerValue)),
        deviceId,
        fc.constantFrom(...QUERIES),
        body,
        async ([method, template], values, id, query, payload) => {
          const valid: Record<string, string> = world.headers({ 'x-conditional-control': 'true' });
          const headers: Record<string, string> = {};
          HEADERS.forEach((name, i) => {
            const value = values[i]!;
            if (value === 'valid') headers[name] = valid[name]!;
            else if (value !== 'absent') headers[name] = value;
          });
          const target = id === 'existing' ? fan : id === 'other' ? stranger.devices[0]!.deviceId : id;
          const code = await check({ method, url: template.replace(':id', target) + query, headers, body: payload });
          // A disconnect that went through: connect again, so that the next requests reach past the token check.
          if (template === '/user/service' && code === undefined) {
            world = await world.reconnect();
            await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
            known = await fingerprint();
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('each hostile header value, on each mandatory header', async () => {
    for (const name of HEADERS) {
      for (const value of HOSTILE_HEADER_VALUES) {
        await check({ method: 'POST', url: `/devices/${fan}`, headers: world.headers({ [name]: value }), body: json('{"operation":{"ceilingfanOperationMode":"POWER_OFF"}}') });
      }
    }
  });

  it('each encoded device id and each hostile query, on every route with an id', async () => {
    for (const [method, template] of ROUTES.filter(([, url]) => url.includes(':id'))) {
      for (const id of ENCODED_IDS) await check({ method, url: template.replace(':id', id), headers: world.headers() });
      for (const query of QUERIES) await check({ method, url: template.replace(':id', fan) + query, headers: world.headers() });
    }
  });

  it('each hostile body, on control and on the event subscription', async () => {
    for (const url of [`/devices/${fan}`, `/event/${fan}`]) {
      for (const payload of HOSTILE_BODIES) await check({ method: 'POST', url, headers: world.headers(), body: payload });
    }
  });

  it.each(['true', 'false'])('inherited names in a control command are unknown names: 2207 or 1102 (x-conditional-control: %s)', async (conditional) => {
    for (const name of INHERITED_NAMES) {
      for (const command of [`{"${name}":{"x":1}}`, `{"operation":{"${name}":"POWER_ON"}}`, `{"${name}":{"${name}":"${name}"}}`]) {
        const code = await check({ method: 'POST', url: `/devices/${fan}`, headers: world.headers({ 'x-conditional-control': conditional }), body: json(command) });
        expect(['2207', '1102'], command).toContain(code);
      }
    }
  });
});

describe('raw requests over a socket to a running server (a child process)', () => {
  const ADMIN_TOKEN = 'fuzz-admin-token';
  let child: ChildProcessWithoutNullStreams;
  let port: number;
  let base: string;
  let drop: (() => Promise<void>) | undefined;
  let partner: Record<string, string>;
  let deviceId: string;
  let serviceId: string;

  /** A database of the child's own: PostgreSQL when the suite runs there, else a SQLite file. */
  async function childDatabase(): Promise<string> {
    if (isPostgresUrl(process.env.TEST_DATABASE_URL)) {
      const database = await createTestDatabase(postgresAdminUrl());
      drop = database.drop;
      return database.url;
    }
    const dir = mkdtempSync(join(tmpdir(), 'fuzz-http-'));
    drop = async () => rmSync(dir, { recursive: true, force: true });
    return `sqlite:${join(dir, 'fuzz.db')}`;
  }

  async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; response: unknown }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, response: ((await res.json()) as { response?: unknown }).response };
  }
  const admin = async (method: string, path: string, body?: unknown) => (await call(method, `/admin${path}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, body)).response as Record<string, string>;
  const partnerHeaders = () => ({ ...partner, 'x-message-id': newMessageId() });

  /** Everything a partner request could change, read through the admin and partner interfaces. */
  async function fingerprint(): Promise<string> {
    const device = await admin('GET', `/devices/${deviceId}`);
    const messages = await admin('GET', `/services/${serviceId}/messages?limit=1000`);
    const push = await call('GET', '/push', partnerHeaders());
    const events = await call('GET', '/event', partnerHeaders());
    return JSON.stringify([device, Object.keys(messages).length, push.response, events.response]);
  }

  beforeAll(async () => {
    const databaseUrl = await childDatabase();
    child = startCli(['serve'], { PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', RATE_LIMIT_PER_SECOND: '0' });
    const stdout = await stdoutUntil(child, /"listening":"http:\/\/127\.0\.0\.1:\d+"/);
    port = Number(/"listening":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(stdout)![1]);
    base = `http://127.0.0.1:${port}`;

    const service = await admin('POST', '/services', { name: 'Fuzz', allowedDevices: DEVICE_TYPES });
    serviceId = service.serviceId!;
    const user = await admin('POST', '/users', { countryCode: 'KR' });
    const token = await admin('POST', `/users/${user.userNumber}/tokens`, { serviceId });
    // A real device, offline: nothing but a request changes its state.
    deviceId = (await admin('POST', `/users/${user.userNumber}/devices`, { deviceType: 'DEVICE_CEILING_FAN', alias: 'Fan' })).deviceId!;
    partner = { authorization: `Bearer ${token.accessToken}`, 'x-country-code': 'KR', 'x-service-id': serviceId, 'x-service-key': service.serviceKey! };
    expect((await call('GET', '/devices', partnerHeaders())).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    if (child?.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await drop?.();
  });

  /** A raw request being built: a well-formed one, then broken by a few mutations. */
  interface Raw {
    method: string;
    target: string;
    version: string;
    eol: string;
    lines: string[];
    body: string;
  }

  it('random raw requests: every answer is an envelope, refusals change nothing, the process lives', async () => {
    const latin1 = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('latin1'));
    const target = fc.oneof(
      fc.constantFrom('/devices', '/users', '/push', '/event', '/user/service', '/admin/services', '/admin/nowhere', '/health', '/nowhere', '*', '//devices', `http://127.0.0.1:${port}/users`),
      fc.tuple(
        fc.constantFrom('/devices/', '/devices/profile/', '/push/', '/event/', '/admin/devices/'),
        fc.oneof(fc.constant(deviceId), fc.constant(deviceId), fc.constantFrom(...ENCODED_IDS)),
        fc.constantFrom(...QUERIES.slice(0, 7)),
      ).map(([prefix, id, query]) => `${prefix}${id}${query}`),
    );
    const wellFormed = fc.record({
      method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS'),
      target,
      partner: fc.boolean(),
      body: fc.constantFrom('', '', '{}', '{"operation":{"ceilingfanOperationMode":"POWER_ON"}}', '{"expire":{"unit":"HOUR","timer":1}}', nestedArrays(100), '{"a":"\\u0000"}'),
    }).map(({ method, target, partner, body }): Raw => ({
      method,
      target,
      version: 'HTTP/1.1',
      eol: '\r\n',
      lines: [
        'host: 127.0.0.1',
        ...(partner ? Object.entries(partnerHeaders()).map(([name, value]) => `${name}: ${value}`) : []),
        ...(body ? ['content-type: application/json', `content-length: ${body.length}`] : []),
      ],
      body,
    }));
    const headerName = fc.constantFrom(...HEADERS, 'host', 'content-type', 'content-length', 'transfer-encoding', 'expect', 'connection', 'upgrade', 'x-anything', 'x\x01y', 'x y', 'é', '');
    const headerValue = fc.oneof(fc.constantFrom(...HOSTILE_HEADER_VALUES, ...UNREADABLE_HEADER_VALUES), latin1);
    /** One way to break a request: its method, version, line ends, target, a header (added, changed or dropped), its body. */
    const mutation = fc.oneof(
      fc.oneof(fc.constantFrom('TRACE', 'CONNECT', 'PRI', 'get', 'G@T', '', 'M'.repeat(40)), fc.string({ unit: 'binary-ascii', maxLength: 10 })).map((method) => (r: Raw) => {
        r.method = method;
      }),
      fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.12', 'http/1.1', 'HTTP/1.1 x', '').map((version) => (r: Raw) => {
        r.version = version;
      }),
      fc.constantFrom('\n', '\r').map((eol) => (r: Raw) => {
        r.eol = eol;
      }),
      latin1.map((bytes) => (r: Raw) => {
        r.target += bytes;
      }),
      fc.tuple(headerName, headerValue).map(([name, value]) => (r: Raw) => {
        r.lines.push(`${name}: ${value}`);
      }),
      fc.tuple(fc.nat(), headerValue).map(([i, value]) => (r: Raw) => {
        if (r.lines.length === 0) return;
        const line = i % r.lines.length;
        r.lines[line] = `${r.lines[line]!.split(':')[0]}: ${value}`;
      }),
      fc.nat().map((i) => (r: Raw) => {
        r.lines.splice(i % r.lines.length, 1);
      }),
      fc.constantFrom(
        ' folded continuation', 'no-colon', ': empty-name', 'host: second', 'content-length: -1', 'content-length: 99999999999999999999',
        'content-length: 100000', 'transfer-encoding: chunked', 'transfer-encoding: gzip, chunked', 'expect: 100-continue',
        'connection: upgrade', 'upgrade: websocket', `x-padding: ${'a'.repeat(70_000)}`,
      ).map((line) => (r: Raw) => {
        r.lines.push(line);
      }),
      fc.oneof(fc.constantFrom('0\r\n\r\n', 'zz\r\n\r\n', '5\r\nhello\r\n0\r\n\r\n', '5;ext=1\r\nhello\r\n0\r\n\r\n'), latin1).map((body) => (r: Raw) => {
        r.body = body;
      }),
    );
    // A copy is mutated: fast-check keeps generated values to shrink them.
    const request = fc.tuple(wellFormed, fc.array(mutation, { maxLength: 2 })).map(([base, mutations]) => {
      const raw = { ...base, lines: [...base.lines] };
      for (const mutate of mutations) mutate(raw);
      return raw;
    });

    const unanswered: string[] = [];
    let known = await fingerprint();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const text = [`${r.method} ${r.target} ${r.version}`.trimEnd(), ...r.lines, '', r.body].join(r.eol);
        const context = JSON.stringify(text.slice(0, 120));
        const answer = await rawExchange(port, Buffer.from(text, 'latin1'), { bodyless: r.method === 'HEAD', quietMs: 300 });
        if (answer.status === null) unanswered.push(context);
        else if (r.method === 'HEAD') expect(answer.status, context).toBeLessThan(500);
        else {
          expect(answer.headers['content-type'], context).toBe('application/json; charset=utf-8');
          if (expectEnvelope(answer.status, answer.body, context) !== undefined) expectShortMessage(answer.body, context);
        }
        const now = await fingerprint();
        if (answer.status !== 200) expect(now, `${context} changed the store`).toBe(known);
        known = now;
      }),
      { numRuns: 250 },
    );
    expect(unanswered).toEqual([]);
    expect(child.exitCode).toBeNull();
    expect((await call('GET', '/admin/services', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
  });
});
