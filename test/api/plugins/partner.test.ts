/**
 * The partner plugin: the partner routes are one encapsulated plugin whose route groups run the
 * checks of DESIGN A.2 in their own onRequest hooks, before the body is read; the routes go through
 * the domain (src/core), never the store, and are typed by their schemas.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { DevicePartnerContext } from '../../../src/api/plugins/partner.js';
import type { Device } from '../../../src/core/model.js';
import { createWorld, testApp, type TestApp, type World } from '../../helpers/app.js';

const API = new URL('../../../src/api/', import.meta.url).pathname;
const ROUTES = join(API, 'routes');
/** A source without its comments and string literals: what is left is code. */
const codeOf = (source: string) => source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '').replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`/g, "''");
const routeSources = () => readdirSync(ROUTES).map((name) => {
  const source = readFileSync(join(ROUTES, name), 'utf8');
  return { name, imports: [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? ''), text: codeOf(source) };
});

describe('the partner plugin', () => {
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN'] });
  });
  afterAll(() => t?.close());

  it('is encapsulated: what its checks find is no decoration of the server outside it', () => {
    expect(t.app.hasRequestDecorator('partner')).toBe(false);
  });

  it('checks before the body is read: a wrong key with a body over 64 KiB or malformed JSON answers 1301', async () => {
    const headers = { ...world.headers(), 'x-service-key': 'not-the-key', 'content-type': 'application/json' };
    const url = `/devices/${world.devices[0]!.deviceId}`;
    for (const payload of [JSON.stringify({ junk: 'x'.repeat(70_000) }), '{not json']) {
      const res = await t.app.inject({ method: 'POST', url, headers, payload });
      expect([res.statusCode, res.json().error.code]).toEqual([401, '1301']);
    }
  });

  it('checks in the order of DESIGN A.2 on a device route: headers, service, token, device', async () => {
    const url = '/devices/not a device id';
    const answer = async (headers: Record<string, string>) => (await t.app.inject({ method: 'GET', url, headers })).json().error.code;
    expect(await answer({ ...world.headers(), 'x-message-id': 'short', 'x-service-key': 'wrong', authorization: 'Bearer wrong' })).toBe('1104');
    expect(await answer({ ...world.headers(), 'x-service-key': 'wrong', authorization: 'Bearer wrong' })).toBe('1301');
    expect(await answer({ ...world.headers(), authorization: 'Bearer wrong' })).toBe('1103');
    expect(await answer(world.headers())).toBe('1224');
  });

  it('hands the routes of the device group a device, by type', () => {
    expectTypeOf<DevicePartnerContext['device']>().toEqualTypeOf<Device>();
  });
});

describe('the partner routes', () => {
  it('reach the data through the domain only: no store, no lookup cache', () => {
    for (const { name, imports, text } of routeSources()) {
      expect(imports.filter((path) => /\/(store|core\/cache)(\/|\.js)/.test(path)), name).toEqual([]);
      expect(text, name).not.toMatch(/\bstore\b|lookupCacheOf/);
    }
  });

  it('take bodies, params and the device from their types: no casts, no non-null assertions', () => {
    for (const { name, text } of routeSources()) {
      expect(text, name).not.toMatch(/\bas [A-Z{]|\w!(?!=)/);
    }
  });

  it('get their checks from the plugin, not from rewriting every route as it is registered', () => {
    expect(readFileSync(join(API, 'plugins', 'partner.ts'), 'utf8')).not.toContain("'onRoute'");
  });
});
