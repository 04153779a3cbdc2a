import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorld, testApp, type TestApp, type World } from '../../helpers/app.js';
import { rawRequest } from '../../helpers/raw-http.js';

describe('the answers to paths and methods no route takes (DESIGN A.3)', () => {
  let t: TestApp;
  let world: World;

  beforeEach(async () => {
    t = await testApp();
    world = await createWorld(t.ctx);
  });
  afterEach(() => t.close());

  it.each([
    ['GET', '/devices/profile/abc/extra'],
    ['GET', '/devices/abc/def'],
    ['POST', '/push/abc/def'],
    ['GET', '/openapiXjson'],
    ['GET', '/docs/static/nope.js'],
  ])('%s %s is no path: 404, not a 405 naming the methods of a route it does not match', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET' | 'POST', url, headers: world.headers() });
    expect([res.statusCode, res.json().error.code, res.headers.allow]).toEqual([404, '1305', undefined]);
  });

  it('a path a route has, with a method it does not take, is still 405 naming the methods', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/devices/abc', headers: world.headers() });
    expect([res.statusCode, res.json().error.code, res.headers.allow]).toEqual([405, '1305', 'GET, HEAD, POST']);
  });
});

describe('a request while the server drains (DESIGN A.3, E)', () => {
  let t: TestApp;
  let world: World;

  beforeEach(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
  });
  afterEach(() => t.close());

  it('on a connection still open answers 503 as an envelope (2000), after the request in flight is answered', async () => {
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect((t.app.server.address() as AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    const headers = { ...world.headers(), 'content-type': 'application/json', 'content-length': '2' };
    // The first request is in flight, its body not yet whole, when the server starts to close.
    socket.write(rawRequest(`POST /event/${world.devices[0]!.deviceId} HTTP/1.1`, headers, '{'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = t.app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write(`}${rawRequest('GET /users HTTP/1.1', world.headers())}`);
    await Promise.all([closed, closing]);

    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    const body = JSON.parse(second!.slice(second!.indexOf('\r\n\r\n') + 4));
    expect(Object.keys(body).sort()).toEqual(['error', 'messageId', 'timestamp']);
    expect(body.error).toEqual({ code: '2000', message: 'The server is shutting down: send the request again.' });
  });
});
