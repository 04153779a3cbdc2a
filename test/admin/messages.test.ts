import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getModel } from '../../src/catalog/index.js';
import { formatTimestamp, type Clock } from '../../src/ids.js';
import { callAdmin, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const NOW = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

interface Listed {
  messageId: string;
  kind: string;
  pushType: string;
  status: string;
  deviceId: string;
  createdAt: string;
  nextAttemptAt: string;
  attempts: unknown[];
  body: Record<string, unknown>;
}

/**
 * Messages as the admin API lists them. The store offers no call that fails a delivery (the delivery
 * engine will), so these tests use a SQLite file and mark deliveries failed through a side connection.
 */
describe('admin: messages, resend and recover (DESIGN C, D)', () => {
  let t: TestApp;
  let world: World;
  let dir: string;
  let side: Database.Database;
  let fan: string;
  let washer: string;
  let now = NOW;
  const clock: Clock = { now: () => now };

  beforeEach(async () => {
    now = NOW;
    dir = mkdtempSync(join(tmpdir(), 'admin-messages-'));
    t = await testApp({ clock, databaseUrl: `sqlite:${join(dir, 'store.db')}` });
    side = new Database(join(dir, 'store.db'));
    side.pragma('busy_timeout = 5000');
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN', 'DEVICE_WASHER'] });
    [fan, washer] = world.devices.map((d) => d.deviceId) as [string, string];
  });
  afterEach(async () => {
    side.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => callAdmin(t.app, method, url, body);
  const partner = (method: 'GET' | 'POST', url: string) => t.app.inject({ method, url, headers: world.headers() });
  const messages = async (query = ''): Promise<Listed[]> => {
    const res = await admin('GET', `/admin/services/${world.serviceId}/messages${query}`);
    expect(res.statusCode).toBe(200);
    return res.json().response;
  };

  /** A failed delivery with one attempt that got a 500. */
  function markFailed(messageId: string): void {
    side.prepare("UPDATE outbox SET status = 'failed', attempts = 1 WHERE message_id = ?").run(messageId);
    side.prepare('INSERT INTO delivery_attempts VALUES (?, 1, ?, 12.5, 500, ?, NULL)').run(messageId, now, 'oops');
  }

  /** The partner loads its list and subscribes; then each admin device call records its message, a second apart. */
  async function recordLifecycle(): Promise<void> {
    await partner('GET', '/devices');
    now += 1000;
    await admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_DRYER', alias: 'Dryer', deviceId: 'dryer-1', virtual: true });
    now += 1000;
    await admin('PATCH', '/admin/devices/dryer-1', { alias: 'Laundry dryer' });
    now += 1000;
    await partner('POST', `/push/${washer}`);
    await admin('POST', `/admin/devices/${washer}/push`, { pushCode: 'WASHING_IS_COMPLETE' });
    now += 1000;
    await partner('POST', `/event/${fan}`);
    await admin('POST', `/admin/devices/${fan}/report`, { airFlow: { windStrength: 'HIGH' } });
    now += 1000;
    await admin('DELETE', `/admin/users/${world.userNumber}/devices/dryer-1`);
  }

  it('records no lifecycle message before the partner loaded the device list', async () => {
    await admin('POST', `/admin/users/${world.userNumber}/devices`, { deviceType: 'DEVICE_DRYER', alias: 'Dryer', virtual: true });
    expect(await messages()).toEqual([]);
  });

  it('lists the messages of the admin device calls, newest first, with their exact bodies', async () => {
    await recordLifecycle();
    const res = await admin('GET', `/admin/services/${world.serviceId}/messages`);
    const list = res.json().response as Listed[];
    expect(list.map((m) => m.pushType)).toEqual(['DEVICE_UNREGISTERED', 'DEVICE_STATUS', 'DEVICE_PUSH', 'DEVICE_ALIAS_CHANGED', 'DEVICE_REGISTERED']);

    const registered = list[4]!;
    const modelName = getModel('DEVICE_DRYER')!.modelName;
    expect(registered).toEqual({
      messageId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      deviceId: 'dryer-1',
      kind: 'push',
      pushType: 'DEVICE_REGISTERED',
      sequence: 1,
      // The world's service has no callback URL: its messages wait, held, until it has one.
      status: 'held',
      createdAt: iso(NOW + 1000),
      nextAttemptAt: iso(NOW + 1000),
      deliveredAt: null,
      body: {
        messageId: registered.messageId,
        timestamp: formatTimestamp(NOW + 1000),
        push: { pushType: 'DEVICE_REGISTERED', serviceId: world.serviceId, deviceId: 'dryer-1', userNumber: world.userNumber, modelName, deviceType: 'DEVICE_DRYER', alias: 'Dryer' },
      },
      attempts: [],
    });
    const bodies = list.map((m) => m.body.push ?? m.body.event);
    expect(bodies.slice(0, 4)).toEqual([
      { pushType: 'DEVICE_UNREGISTERED', serviceId: world.serviceId, deviceId: 'dryer-1', userNumber: world.userNumber, deviceType: 'DEVICE_DRYER', alias: 'Laundry dryer' },
      { pushType: 'DEVICE_STATUS', serviceId: world.serviceId, deviceId: fan, deviceType: 'DEVICE_CEILING_FAN', report: { airFlow: { windStrength: 'HIGH' } }, userList: [world.userNumber] },
      { pushType: 'DEVICE_PUSH', serviceId: world.serviceId, deviceId: washer, pushCode: 'WASHING_IS_COMPLETE', deviceType: 'DEVICE_WASHER', userList: [world.userNumber] },
      { pushType: 'DEVICE_ALIAS_CHANGED', serviceId: world.serviceId, deviceId: 'dryer-1', userNumber: world.userNumber, alias: 'Laundry dryer' },
    ]);
    expect(list[1]!.kind).toBe('event');
  });

  it('filters by deviceId, status, since and limit', async () => {
    await recordLifecycle();
    expect((await messages(`?deviceId=${fan}`)).map((m) => m.pushType)).toEqual(['DEVICE_STATUS']);
    expect((await messages(`?since=${iso(NOW + 3000)}`)).map((m) => m.pushType)).toEqual(['DEVICE_UNREGISTERED', 'DEVICE_STATUS', 'DEVICE_PUSH']);
    expect((await messages('?since=2026-01-01T00:00:04')).map((m) => m.pushType)).toEqual(['DEVICE_UNREGISTERED', 'DEVICE_STATUS']);
    expect((await messages('?limit=2')).map((m) => m.pushType)).toEqual(['DEVICE_UNREGISTERED', 'DEVICE_STATUS']);
    expect(await messages('?status=failed')).toEqual([]);
    expect(await messages('?status=held&limit=1000')).toHaveLength(5);
  });

  it('pages with before, the last messageId of a page, keeping the filters', async () => {
    await recordLifecycle();
    const pages: string[][] = [];
    let query = '?limit=2';
    for (;;) {
      const page = await messages(query);
      pages.push(page.map((m) => m.pushType));
      if (page.length < 2) break;
      query = `?limit=2&before=${page.at(-1)!.messageId}`;
    }
    expect(pages).toEqual([['DEVICE_UNREGISTERED', 'DEVICE_STATUS'], ['DEVICE_PUSH', 'DEVICE_ALIAS_CHANGED'], ['DEVICE_REGISTERED']]);

    const [unregistered] = await messages('?deviceId=dryer-1&limit=1');
    expect((await messages(`?deviceId=dryer-1&before=${unregistered!.messageId}`)).map((m) => m.pushType)).toEqual(['DEVICE_ALIAS_CHANGED', 'DEVICE_REGISTERED']);
    expect((await messages(`?since=${iso(NOW + 2000)}&before=${unregistered!.messageId}`)).map((m) => m.pushType)).toEqual(['DEVICE_STATUS', 'DEVICE_PUSH', 'DEVICE_ALIAS_CHANGED']);
  });

  it('a before that names no message of the service answers 1102', async () => {
    await recordLifecycle();
    const other = (await admin('POST', '/admin/services', { name: 'Other', allowedDevices: ['DEVICE_DRYER'] })).json().response.serviceId as string;
    for (const before of ['nonsense', 'AAAAAAAAAAAAAAAAAAAAAA', 'A'.repeat(5000), encodeURIComponent('ü'.repeat(22))]) {
      const res = await admin('GET', `/admin/services/${other}/messages?before=${before}`);
      expect([res.statusCode, res.json().error], before).toEqual([400, {
        code: '1102',
        message: `before must be the messageId of a message of service ${other}, the last of the previous page; got ${JSON.stringify(decodeURIComponent(before))}.`,
      }]);
    }
    // Another service's message is no place in this one's pages.
    const [own] = await messages('?limit=1');
    const res = await admin('GET', `/admin/services/${other}/messages?before=${own!.messageId}`);
    expect([res.statusCode, res.json().error.code]).toEqual([400, '1102']);
  });

  it('reads a since without a zone as UTC whatever the time zone of the process, its T in either case', async () => {
    await recordLifecycle();
    const zone = process.env.TZ;
    // A machine east of UTC: read as its local time, 00:00:04 is the day before and every message matches.
    process.env.TZ = 'Asia/Seoul';
    try {
      for (const since of ['2026-01-01T00:00:04', '2026-01-01t00:00:04']) {
        expect((await messages(`?since=${since}`)).map((m) => m.pushType), since).toEqual(['DEVICE_UNREGISTERED', 'DEVICE_STATUS']);
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it.each([
    ['?limit=0', 'limit must be an integer from 1 to 1000; got "0".'],
    ['?limit=1001', 'limit must be an integer from 1 to 1000; got "1001".'],
    ['?limit=ten', 'limit must be an integer from 1 to 1000; got "ten".'],
    ['?limit=1.5', 'limit must be an integer from 1 to 1000; got "1.5".'],
    ['?since=yesterday', 'since must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z; got "yesterday".'],
    ['?since=2026-13-01', 'since must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z; got "2026-13-01".'],
    // Date.parse rolls a day past the month's end into the next month: the operator meant another time.
    ['?since=2026-02-30T00:00:00Z', 'since must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z; got "2026-02-30T00:00:00Z".'],
    ['?since=2026-04-31', 'since must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z; got "2026-04-31".'],
    ['?status=lost', 'status must be one of pending, delivering, delivered, failed, held.'],
    ['?colour=red', 'querystring may not contain "colour".'],
  ])('the query %s answers 1102', async (query, message) => {
    const res = await admin('GET', `/admin/services/${world.serviceId}/messages${query}`);
    expect([res.statusCode, res.json().error]).toEqual([400, { code: '1102', message }]);
  });

  it('an unknown service or message answers 1305 (404)', async () => {
    const unknown = { code: '1305', message: 'Service svc_nobody does not exist.' };
    const list = await admin('GET', '/admin/services/svc_nobody/messages');
    expect([list.statusCode, list.json().error]).toEqual([404, unknown]);
    const recover = await admin('POST', '/admin/services/svc_nobody/recover', { since: iso(NOW) });
    expect([recover.statusCode, recover.json().error]).toEqual([404, unknown]);
    const resend = await admin('POST', '/admin/messages/AAAAAAAAAAAAAAAAAAAAAA/resend');
    expect([resend.statusCode, resend.json().error]).toEqual([404, { code: '1305', message: 'Message AAAAAAAAAAAAAAAAAAAAAA does not exist.' }]);
  });

  it('resend puts a failed message back to pending, due now, keeping its attempts', async () => {
    await recordLifecycle();
    const target = (await messages(`?deviceId=${fan}`))[0]!;
    markFailed(target.messageId);
    const failed = (await messages('?status=failed'))[0]!;
    expect([failed.messageId, failed.attempts]).toEqual([target.messageId, [
      { attempt: 1, startedAt: iso(now), durationMs: 12.5, responseStatus: 500, responseBody: 'oops', error: null },
    ]]);

    now += 60_000;
    const res = await admin('POST', `/admin/messages/${target.messageId}/resend`);
    expect([res.statusCode, res.json().response]).toEqual([200, {}]);
    const again = (await messages(`?deviceId=${fan}`))[0]!;
    expect([again.status, again.nextAttemptAt, again.attempts.length]).toEqual(['pending', iso(now), 1]);
  });

  it('recover puts the failed messages created since a time back to pending and counts them', async () => {
    await recordLifecycle();
    const list = await messages();
    const older = list.find((m) => m.pushType === 'DEVICE_REGISTERED')!;
    const newer = list.find((m) => m.pushType === 'DEVICE_STATUS')!;
    markFailed(older.messageId);
    markFailed(newer.messageId);

    now += 60_000;
    const res = await admin('POST', `/admin/services/${world.serviceId}/recover`, { since: iso(NOW + 2000) });
    expect([res.statusCode, res.json().response]).toEqual([200, { resent: 1 }]);
    const after = await messages();
    expect(after.find((m) => m.messageId === newer.messageId)!.status).toBe('pending');
    expect(after.find((m) => m.messageId === older.messageId)!.status).toBe('failed');

    expect((await admin('POST', `/admin/services/${world.serviceId}/recover`, { since: iso(NOW + 2000) })).json().response).toEqual({ resent: 0 });
  });

  it('recover needs a since that is an ISO 8601 time', async () => {
    const missing = await admin('POST', `/admin/services/${world.serviceId}/recover`, {});
    expect([missing.statusCode, missing.json().error]).toEqual([400, { code: '1101', message: 'since is missing.' }]);
    const bad = await admin('POST', `/admin/services/${world.serviceId}/recover`, { since: 'last week' });
    expect([bad.statusCode, bad.json().error]).toEqual([400, { code: '1102', message: 'since must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z; got "last week".' }]);
  });
});
