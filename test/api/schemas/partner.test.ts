import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../helpers/app.js';

describe('the error codes each partner operation documents', () => {
  let t: TestApp;

  beforeEach(async () => {
    t = await testApp();
  });
  afterEach(() => t.close());

  it("name 1308 where a token's scopes may not cover the operation (DESIGN G), and only there", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const unauthorized = (path: string, method: string): string => doc.paths[path][method].responses['401'].description;
    for (const [path, method] of [
      ['/devices', 'get'], ['/devices/profile/{deviceId}', 'get'], ['/devices/{deviceId}', 'get'], ['/devices/{deviceId}', 'post'],
      ['/push', 'get'], ['/push/{deviceId}', 'post'], ['/push/{deviceId}', 'delete'],
      ['/event', 'get'], ['/event/{deviceId}', 'post'], ['/event/{deviceId}', 'delete'],
    ]) {
      expect(unauthorized(path!, method!), `${method} ${path}`).toContain('`1308`');
    }
    expect(unauthorized('/users', 'get')).not.toContain('`1308`');
    expect(unauthorized('/user/service', 'delete')).not.toContain('`1308`');
  });
});
