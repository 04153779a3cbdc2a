/**
 * Property: whatever headers, path and body a caller sends, the answer is an envelope with a code of
 * the table and its HTTP status — never a 500 — and a refused request leaves no trace in the store.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/errors.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;
const ROUTES = [
  ['GET', '/devices'], ['GET', '/devices/profile/:id'], ['GET', '/devices/:id'], ['POST', '/devices/:id'],
  ['GET', '/users'], ['GET', '/push'], ['POST', '/push/:id'], ['DELETE', '/push/:id'],
  ['GET', '/event'], ['POST', '/event/:id'], ['DELETE', '/event/:id'], ['PATCH', '/devices/:id'], ['GET', '/nowhere/:id'],
] as const;
const HEADERS = ['authorization', 'x-country-code', 'x-message-id', 'x-service-id', 'x-service-key', 'x-conditional-control'] as const;

/** Allowed HTTP statuses per code beyond the table's own (1305 has two; an oversized body is 413). */
const EXTRA_STATUS: Partial<Record<ErrorCode, number[]>> = { '1305': [405], '1102': [413] };

describe('random requests against the partner interface', () => {
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    world = await createWorld(t.ctx);
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
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

  const headerValue = fc.oneof(
    fc.constant<'valid'>('valid'),
    fc.constant<'absent'>('absent'),
    fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\x21-\x7e]/g, 'x')),
    fc.constantFrom('', ' ', 'Bearer', 'Bearer ', 'US', 'kr', 'true', 'TRUE', 'A'.repeat(22), 'A'.repeat(300)),
  );
  const deviceId = fc.oneof(
    fc.constantFrom(...['existing', 'other']),
    fc.string({ maxLength: 140 }).map((s) => encodeURIComponent(s)),
    fc.constantFrom('', '%00', '..', 'a'.repeat(129), 'a%2Fb'),
  );
  const body = fc.oneof(
    fc.constant<undefined>(undefined),
    fc.jsonValue().map((v) => ({ type: 'application/json', text: JSON.stringify(v) ?? 'null' })),
    fc.string({ maxLength: 200 }).map((s) => ({ type: 'application/json', text: s })),
    fc.record({ type: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', ''), text: fc.string({ minLength: 1, maxLength: 50 }) }),
    fc.constantFrom(
      { type: 'application/json', text: '{"__proto__":{"polluted":true}}' },
      { type: 'application/json', text: '{"constructor":{"prototype":{"polluted":true}}}' },
      { type: 'application/json', text: '{"operation":{"ceilingfanOperationMode":"POWER_ON"}}' },
      { type: 'application/json', text: '{"expire":{"unit":"DAY","timer":999999999999}}' },
      { type: 'application/json', text: `{"a":"${'x'.repeat(70_000)}"}` },
    ),
  );

  it('always answers an envelope with a code of the table and no partial write', async () => {
    const fan = world.devices.find((d) => d.deviceType === 'DEVICE_CEILING_FAN')!.deviceId;
    const stranger = await createWorld(t.ctx);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.tuple(...HEADERS.map(() => headerValue)),
        deviceId,
        body,
        async ([method, template], values, id, payload) => {
          const valid: Record<string, string> = world.headers({ 'x-conditional-control': 'true' });
          const headers: Record<string, string> = {};
          HEADERS.forEach((name, i) => {
            const value = values[i]!;
            if (value === 'valid') headers[name] = valid[name]!;
            else if (value !== 'absent') headers[name] = value;
          });
          const target = id === 'existing' ? fan : id === 'other' ? stranger.devices[0]!.deviceId : id;
          if (payload?.type) headers['content-type'] = payload.type;
          const before = await fingerprint();
          const res = await t.app.inject({ method, url: template.replace(':id', target), headers, ...(payload ? { payload: payload.text } : {}) });

          expect(res.statusCode).toBeLessThan(500);
          const envelope = res.json();
          expect(envelope.messageId).toMatch(/^[A-Za-z0-9_-]{22}$/);
          expect(envelope.timestamp).toMatch(TIMESTAMP);
          if (res.statusCode === 200) {
            expect(Object.keys(envelope).sort()).toEqual(['messageId', 'response', 'timestamp']);
            return;
          }
          expect(Object.keys(envelope).sort()).toEqual(['error', 'messageId', 'timestamp']);
          const code = envelope.error.code as ErrorCode;
          expect(ERRORS[code], `code ${code}`).toBeDefined();
          expect([ERRORS[code].http, ...(EXTRA_STATUS[code] ?? [])]).toContain(res.statusCode);
          expect(envelope.error.message).toMatch(/\S/);
          expect(await fingerprint()).toBe(before);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        },
      ),
      { numRuns: 400 },
    );
  });
});
