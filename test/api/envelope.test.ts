import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientErrorRefusal } from '../../src/api/plugins/errors.js';
import { ERRORS } from '../../src/errors.js';
import { newMessageId, type Clock } from '../../src/ids.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';
import { rawExchange, rawRequest, rawTranscript, type RawAnswer } from '../helpers/raw-http.js';

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

  it('a path with a trailing slash is no path of the interface: 404 whatever the method', async () => {
    for (const [method, url] of [['GET', '/users/'], ['GET', '/push/'], ['POST', '/users/'], ['DELETE', '/user/service/']] as const) {
      const res = await t.app.inject({ method, url, headers: world.headers() });
      expect([method, url, res.statusCode, res.json().error.code, res.headers.allow]).toEqual([method, url, 404, '1305', undefined]);
    }
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

describe('refusals before any route, over a real socket (DESIGN J: every HTTP refusal is an envelope)', () => {
  let t: TestApp;
  let world: World;
  let port: number;

  beforeAll(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    world = await createWorld(t.ctx, { deviceTypes: [] });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  const send = (requestLine: string, headers: Record<string, string> = {}) => rawExchange(port, rawRequest(requestLine, headers));

  /** The answer is `{messageId, timestamp, error: {code, message}}` with this status and code; returns the error. */
  function refusal(answer: RawAnswer, status: number, code: string): { code: string; message: string } {
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(answer.body);
    expect(Object.keys(body).sort()).toEqual(['error', 'messageId', 'timestamp']);
    expect(body.messageId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(body.error.code).toBe(code);
    return body.error;
  }

  it.each([200, 5_000, 60_000])('a device id of %i characters answers 1224 (404), not 414 or 431', async (length) => {
    const answer = await send(`GET /devices/${'a'.repeat(length)} HTTP/1.1`, world.headers());
    const error = refusal(answer, 404, '1224');
    expect(error.message).toMatch(/^Device id "a{64}…" is malformed/);
  });

  it('a head over 64 KiB answers 431 with 1000, whichever header or path made it so', async () => {
    const header = await send('GET /devices HTTP/1.1', { ...world.headers(), 'x-padding': 'a'.repeat(64 * 1024) });
    expect(refusal(header, 431, '1000').message).toBe('The request line and headers are larger than 64 KiB.');
    const path = await send(`GET /devices/${'a'.repeat(70_000)} HTTP/1.1`, world.headers());
    refusal(path, 431, '1000');
  });

  it('a path that is not valid percent-encoding answers 1000, echoing x-message-id', async () => {
    const messageId = newMessageId();
    const answer = await send('GET /devices/%E0%A4%A HTTP/1.1', { ...world.headers(), 'x-message-id': messageId });
    expect(refusal(answer, 400, '1000').message).toBe('The path /devices/%E0%A4%A is not valid percent-encoding.');
    expect(JSON.parse(answer.body).messageId).toBe(messageId);
    refusal(await send('GET /%zz HTTP/1.1'), 400, '1000');
  });

  it('a query that is not valid percent-encoding is taken as it is', async () => {
    const answer = await send('GET /users?x=%E0%A4%A HTTP/1.1', world.headers());
    expect([answer.status, JSON.parse(answer.body).response]).toEqual([200, { userNumber: world.userNumber }]);
  });

  it.each([
    ['a method that is no token', 'G@T /devices HTTP/1.1', 'Invalid method encountered'],
    ['an unknown method', 'FETCH /devices HTTP/1.1', 'Invalid method encountered'],
    ['a version that does not exist', 'GET /devices HTTP/9.9', 'Invalid HTTP version'],
    ['no HTTP version', 'GET /devices HTTX/1.1', 'Expected HTTP/, RTSP/ or ICE/'],
    ['garbage after the version', 'GET /devices HTTP/1.1 \x01garbage', 'Expected CRLF after version'],
    ['a space in the path', 'GET /dev ices HTTP/1.1', 'Expected HTTP/, RTSP/ or ICE/'],
    ['a path without its slash', 'GET devices HTTP/1.1', 'Invalid characters in url'],
    ['bytes that are no request', '\x00\x01\x02 nonsense', 'Invalid method encountered'],
  ])('%s answers 400 1000 naming what Node could not parse', async (_name, requestLine, reason) => {
    const error = refusal(await send(requestLine), 400, '1000');
    expect(error.message).toBe(`The request is not valid HTTP/1.1: ${reason}.`);
  });

  it.each([
    ['a control character in a header value', { 'x-service-id': 'svc\x01' }, 'Invalid header value char'],
    ['a header name with a space', { 'x service': 'a' }, 'Invalid header token'],
    ['a Content-Length that is no number', { 'content-length': 'abc' }, 'Invalid character in Content-Length'],
    ['Content-Length beside Transfer-Encoding', { 'content-length': '3', 'transfer-encoding': 'chunked' }, "Transfer-Encoding can't be present with Content-Length"],
  ])('%s answers 400 1000', async (_name, headers, reason) => {
    const error = refusal(await send('POST /devices HTTP/1.1', { ...world.headers(), ...headers }), 400, '1000');
    expect(error.message).toBe(`The request is not valid HTTP/1.1: ${reason}.`);
  });

  it('HTTP/1.1 without Host answers 1000; HTTP/1.0 needs none', async () => {
    const error = refusal(await send('GET /users HTTP/1.1', { ...world.headers(), host: '' }), 400, '1000');
    expect(error.message).toBe('Header Host is missing: HTTP/1.1 requires it.');
    const old = await send('GET /users HTTP/1.0', { ...world.headers(), host: '' });
    expect(old.status).toBe(200);
  });

  it('CONNECT answers 1305 (405) where Node would close without a word', async () => {
    const error = refusal(await send('CONNECT 127.0.0.1:22 HTTP/1.1'), 405, '1305');
    expect(error.message).toBe('Method CONNECT is not allowed: this server is not a proxy.');
  });

  it('an Expect other than 100-continue answers 417 with 1216; 100-continue goes on to the route', async () => {
    const error = refusal(await send('GET /users HTTP/1.1', { ...world.headers(), expect: 'something' }), 417, '1216');
    expect(error.message).toBe('Header expect may only be 100-continue; got "something".');
    expect((await send('GET /users HTTP/1.1', { ...world.headers(), expect: '100-continue' })).status).toBe(200);
  });

  it('the HTTP/2 preface answers 1000 saying to use HTTP/1.1', async () => {
    const answer = await rawExchange(port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    expect(refusal(answer, 400, '1000').message).toBe('HTTP/2 is not served here: use HTTP/1.1.');
  });

  it('garbage after a request on the same connection: the request is answered first, then the garbage with 1000', async () => {
    const { deviceId } = (await t.ctx.devices.register(world.userNumber, { deviceType: 'DEVICE_CEILING_FAN', alias: 'Fan', virtual: true })).device;
    await send('GET /devices HTTP/1.1', world.headers());
    const transcript = await rawTranscript(port, `${rawRequest(`POST /push/${deviceId} HTTP/1.1`, world.headers())}G@T / HTTP/1.1\r\n\r\n`);
    expect([...transcript.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1])).toEqual(['200', '400']);
    expect(transcript).toContain('"code":"1000","message":"The request is not valid HTTP/1.1: Invalid method encountered."');
    expect(await t.ctx.store.listPushSubscriptions(world.serviceId, world.userNumber)).toEqual([expect.objectContaining({ deviceId })]);
  });

  it('a body cut short by the end of the connection answers 1000 at once, and subscribes nothing', async () => {
    const { deviceId } = (await t.ctx.devices.register(world.userNumber, { deviceType: 'DEVICE_WASHER', alias: 'Washer', virtual: true })).device;
    await send('GET /devices HTTP/1.1', world.headers());
    const request = rawRequest(`POST /event/${deviceId} HTTP/1.1`, { ...world.headers(), 'content-type': 'application/json', 'content-length': '100' }, '{"expire":');
    const error = refusal(await rawExchange(port, request, { quietMs: 200 }), 400, '1000');
    expect(error.message).toMatch(/^The request is not valid HTTP\/1\.1: /);
    expect(await t.ctx.store.listEventSubscriptions(world.serviceId, world.userNumber, 0)).toEqual([]);
  });

  it('keeps serving after all of these', async () => {
    expect((await send('GET /users HTTP/1.1', world.headers())).status).toBe(200);
  });
});

describe('clientErrorRefusal', () => {
  it('a client too slow to send its request gets 408 with 1000', () => {
    const error = clientErrorRefusal(Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }));
    expect([error.httpStatus, error.code, error.message]).toEqual([408, '1000', 'The request did not arrive in time.']);
  });
});
