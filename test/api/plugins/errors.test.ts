import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorld, testApp, type TestApp, type World } from '../../helpers/app.js';

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
  ])('%s %s is no path: 404, not a 405 naming the methods of a route it does not match', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET' | 'POST', url, headers: world.headers() });
    expect([res.statusCode, res.json().error.code, res.headers.allow]).toEqual([404, '1305', undefined]);
  });

  it('a path a route has, with a method it does not take, is still 405 naming the methods', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/devices/abc', headers: world.headers() });
    expect([res.statusCode, res.json().error.code, res.headers.allow]).toEqual([405, '1305', 'GET, HEAD, POST']);
  });
});
