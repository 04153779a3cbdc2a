import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/ids.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const HOUR = 3_600_000;

describe('push and event subscriptions (DESIGN A.5)', () => {
  let t: TestApp;
  let world: World;
  let now = Date.UTC(2026, 0, 1);
  const clock: Clock = { now: () => now };

  beforeEach(async () => {
    now = Date.UTC(2026, 0, 1);
    t = await testApp({ clock, settings: { EVENT_SUBSCRIPTION_LIMIT: '3' } });
    world = await createWorld(t.ctx);
    await call('GET', '/devices');
  });
  afterEach(() => t.close());

  function call(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) {
    return t.app.inject({ method, url, headers: world.headers(), ...(payload === undefined ? {} : { payload: payload as object }) });
  }
  const device = (i = 0) => world.devices[i]!.deviceId;

  describe('push', () => {
    it('GET /push is null when there is none', async () => {
      expect((await call('GET', '/push')).json().response).toBeNull();
    });

    it('subscribes once (1207 the second time), lists, and unsubscribes once (1206 the second time)', async () => {
      expect((await call('POST', `/push/${device()}`)).json().response).toEqual({});
      const again = await call('POST', `/push/${device()}`);
      expect([again.statusCode, again.json().error.code]).toEqual([404, '1207']);
      expect((await call('GET', '/push')).json().response).toEqual([{ deviceId: device() }]);
      expect((await call('DELETE', `/push/${device()}`)).json().response).toEqual({});
      const gone = await call('DELETE', `/push/${device()}`);
      expect([gone.statusCode, gone.json().error.code]).toEqual([404, '1206']);
    });
  });

  describe('event', () => {
    it('subscribes for one hour by default and shows it in GET /event and as reportable', async () => {
      expect((await call('POST', `/event/${device()}`)).json().response).toEqual({});
      expect((await call('GET', '/event')).json().response).toEqual([{ deviceId: device(), expiresAt: new Date(now + HOUR).toISOString() }]);
      const list = (await call('GET', '/devices')).json().response as { deviceId: string; deviceInfo: { reportable: boolean } }[];
      expect(list.find((d) => d.deviceId === device())!.deviceInfo.reportable).toBe(true);
    });

    it('GET /devices shows reportable as a subscription comes, goes and expires', async () => {
      const reportable = async () => {
        const list = (await call('GET', '/devices')).json().response as { deviceId: string; deviceInfo: { reportable: boolean } }[];
        return list.find((d) => d.deviceId === device())!.deviceInfo.reportable;
      };
      expect(await reportable()).toBe(false);
      await call('POST', `/event/${device()}`);
      expect(await reportable()).toBe(true);
      await call('DELETE', `/event/${device()}`);
      expect(await reportable()).toBe(false);
      await call('POST', `/event/${device()}`, { expire: { unit: 'MINUTE', timer: 30 } });
      expect(await reportable()).toBe(true);
      now += 30 * 60_000;
      expect(await reportable()).toBe(false);
    });

    it.each([
      [{ expire: { unit: 'MINUTE', timer: 30 } }, 30 * 60_000],
      [{ expire: { unit: 'DAY', timer: 2 } }, 48 * HOUR],
      [{ expire: { timer: 4464 } }, 4464 * HOUR],
      [{ expire: { unit: 'DAY', timer: 186 } }, 4464 * HOUR],
      [{}, HOUR],
    ])('expire %j lasts the time it names', async (body, ms) => {
      await call('POST', `/event/${device()}`, body);
      expect((await call('GET', '/event')).json().response[0].expiresAt).toBe(new Date(now + ms).toISOString());
    });

    it.each([
      [{ expire: { unit: 'WEEK', timer: 1 } }],
      [{ expire: { unit: 'HOUR', timer: 0 } }],
      [{ expire: { unit: 'HOUR', timer: 1.5 } }],
      [{ expire: { unit: 'HOUR', timer: '1' } }],
      [{ expire: { unit: 'HOUR', timer: 4465 } }],
      [{ expire: { unit: 'DAY', timer: 187 } }],
      [{ expire: 'tomorrow' }],
      [{ expire: { unit: 'HOUR', timer: 1, extra: true } }],
    ])('a bad expire %j answers 1102 and subscribes nothing', async (body) => {
      const res = await call('POST', `/event/${device()}`, body);
      expect([res.statusCode, res.json().error.code]).toEqual([400, '1102']);
      expect((await call('GET', '/event')).json().response).toBeNull();
    });

    it.each(['null', '[]', '"1 HOUR"'])('a body of %s is no JSON object: 1000, and subscribes nothing', async (payload) => {
      const res = await t.app.inject({ method: 'POST', url: `/event/${device()}`, headers: { ...world.headers(), 'content-type': 'application/json' }, payload });
      expect([res.statusCode, res.json().error]).toEqual([400, { code: '1000', message: 'The body must be a JSON object.' }]);
      expect((await call('GET', '/event')).json().response).toBeNull();
    });

    it('subscribing again renews the expiry', async () => {
      await call('POST', `/event/${device()}`);
      now += 30 * 60_000;
      await call('POST', `/event/${device()}`);
      expect((await call('GET', '/event')).json().response).toEqual([{ deviceId: device(), expiresAt: new Date(now + HOUR).toISOString() }]);
    });

    it('an expired subscription is gone: not listed, not reportable, 1204 on delete', async () => {
      await call('POST', `/event/${device()}`);
      now += HOUR + 1;
      expect((await call('GET', '/event')).json().response).toBeNull();
      expect((await call('DELETE', `/event/${device()}`)).json().error.code).toBe('1204');
    });

    it('refuses more than the limit with 1312', async () => {
      for (let i = 0; i < 3; i++) expect((await call('POST', `/event/${device(i)}`)).statusCode).toBe(200);
      const res = await call('POST', `/event/${device(3)}`);
      expect([res.statusCode, res.json().error.code]).toEqual([400, '1312']);
      expect((await call('POST', `/event/${device(0)}`)).statusCode).toBe(200);
    });

    it('an expired subscription subscribed again counts as new: 1312 when the limit is held', async () => {
      await call('POST', `/event/${device(0)}`, { expire: { unit: 'MINUTE', timer: 1 } });
      for (const i of [1, 2]) await call('POST', `/event/${device(i)}`);
      now += 60_000;
      expect((await call('POST', `/event/${device(3)}`)).statusCode).toBe(200);
      const res = await call('POST', `/event/${device(0)}`);
      expect([res.statusCode, res.json().error.code]).toEqual([400, '1312']);
      expect((await call('GET', '/event')).json().response).toHaveLength(3);
    });

    it('unsubscribes once (1204 the second time)', async () => {
      await call('POST', `/event/${device()}`);
      expect((await call('DELETE', `/event/${device()}`)).json().response).toEqual({});
      const gone = await call('DELETE', `/event/${device()}`);
      expect([gone.statusCode, gone.json().error.code]).toEqual([404, '1204']);
    });
  });
});
