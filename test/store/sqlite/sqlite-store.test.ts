/**
 * What the contract cannot reach through the Store interface alone: a store reopened from its file,
 * group commit, the status cache, messages recorded held, and what the SQL takes for granted.
 * A second connection to the same file plays the part of a fault or of that engine.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../../src/store/index.js';
import type { Store } from '../../../src/store/store.js';
import type { AttemptRecord } from '../../../src/store/areas/delivery.js';
import { LOOKUP_TTL_MS } from '../../../src/core/cache.js';
import { DEVICE_TYPES } from '../../../src/catalog/index.js';
import { addDevice, addService, addUser, connect, HOUR, T0 } from '../contract/world.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
let file: string;
let store: Store;
let side: Database.Database;

beforeEach(async () => {
  file = join(dir, `store-${++files}.db`);
  store = await openStore(`sqlite:${file}`);
  side = new Database(file);
});

afterEach(async () => {
  side.close();
  await store.close();
});

const count = (table: string): number => (side.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('durability', () => {
  it('finds everything again after closing and reopening the file', async () => {
    await addService(store, 'S1');
    await store.rotateWebhookSecret('S1', 'whsec_new', T0 + 1, T0 + 24 * HOUR);
    await store.updateService('S1', { eventCallbackUrl: 'https://S1.example/events' });
    await addUser(store, 'U1');
    await connect(store, 'S1', 'U1');
    await addDevice(store, 'D1', 'U1');
    await store.addPushSubscription('S1', 'U1', 'D1', T0 + 2);
    await store.upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0 + 2, 100);
    await store.applyReport('D1', { a: 1 }, { a: 1 }, T0 + 3);
    await store.setOnline('D1', false);
    await store.recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 4);

    const before = {
      service: await store.getService('S1'),
      user: await store.getUser('U1'),
      token: await store.getToken('tok-S1-U1'),
      connection: await store.getConnection('S1', 'U1'),
      device: await store.getDevice('D1'),
      state: await store.getDeviceState('D1'),
      push: await store.listPushSubscriptions('S1', 'U1'),
      events: await store.listEventSubscriptions('S1', 'U1', T0 + 5),
      messages: await store.listMessages('S1', {}),
    };
    await store.close();
    store = await openStore(`sqlite:${file}`);

    expect({
      service: await store.getService('S1'),
      user: await store.getUser('U1'),
      token: await store.getToken('tok-S1-U1'),
      connection: await store.getConnection('S1', 'U1'),
      device: await store.getDevice('D1'),
      state: await store.getDeviceState('D1'),
      push: await store.listPushSubscriptions('S1', 'U1'),
      events: await store.listEventSubscriptions('S1', 'U1', T0 + 5),
      messages: await store.listMessages('S1', {}),
    }).toEqual(before);
    expect(before.messages.map((m) => m.pushType)).toEqual(['DEVICE_PUSH', 'DEVICE_STATUS', 'DEVICE_REGISTERED']);
    expect(before.state).toMatchObject({ version: 2, online: false });
    expect(before.service?.webhookSecrets.map((s) => s.secret)).toEqual(['whsec_new', 'whsec_S1']);

    // The order continues where it stopped.
    await store.recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 6);
    expect((await store.listMessages('S1', { limit: 1 }))[0]?.sequence).toBe(4);
  });
});

describe('group commit of device reports', () => {
  it('stores reports made in one turn together; one that fails is refused alone', async () => {
    await addUser(store, 'U1');
    for (let i = 0; i < 20; i++) await addDevice(store, `D${i}`, 'U1');
    const report = (state: string) => ({ runState: { currentState: state } });
    const results = await Promise.allSettled([
      ...Array.from({ length: 20 }, (_, i) => store.applyReport(`D${i}`, report('RUNNING'), report('RUNNING'), T0 + 1)),
      store.applyReport('unknown', report('RUNNING'), report('RUNNING'), T0 + 1),
    ]);
    expect(results.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill('fulfilled'));
    expect(results[20]!.status).toBe('rejected');
    for (let i = 0; i < 20; i++) expect((await store.getDeviceState(`D${i}`))!.status).toEqual(report('RUNNING'));
  });

  it('is durable when acknowledged: a report resolved before close is in the file', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    const version = await store.applyReport('D1', { runState: { currentState: 'END' } }, { runState: { currentState: 'END' } }, T0 + 1);
    const row = side.prepare('SELECT version, status FROM device_states WHERE device_id = ?').get('D1') as { version: number; status: string };
    expect([row.version, JSON.parse(row.status)]).toEqual([version, { runState: { currentState: 'END' } }]);
  });

  it('commits what waits when the store closes', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    const pending = store.applyReport('D1', { runState: { currentState: 'END' } }, { runState: { currentState: 'END' } }, T0 + 1);
    await store.close();
    await expect(pending).resolves.toBe(2);
    store = await openStore(`sqlite:${file}`);
    expect((await store.getDeviceState('D1'))!.version).toBe(2);
  });
});

describe('the status cache', () => {
  it('sees a write by another process on the file once its entry expires, within a second', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    expect(await store.getDeviceStatusJson('D1')).toMatchObject({ version: 1 });
    side.prepare("UPDATE device_states SET status = '{\"b\":1}', version = 9 WHERE device_id = 'D1'").run();
    expect(await store.getDeviceStatusJson('D1')).toMatchObject({ version: 1 });
    await new Promise((resolve) => setTimeout(resolve, LOOKUP_TTL_MS + 50));
    expect(await store.getDeviceStatusJson('D1')).toEqual({ statusJson: '{"b":1}', version: 9, online: true });
  });

  it('keeps what a status write committed, for the next read', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    expect(await store.applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1)).toBe(2);
    // The status read does not see another process's write until the entry expires: this is the write's entry.
    side.prepare("UPDATE device_states SET status = '{\"b\":1}', version = 9 WHERE device_id = 'D1'").run();
    expect(await store.getDeviceStatusJson('D1')).toEqual({ statusJson: '{"a":1}', version: 2, online: true });
  });

  it('never hands a control or a report a status that another process changed before the turn of the event loop', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    expect(await store.applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1)).toBe(2);
    expect(await store.getDeviceState('D1')).toEqual({ deviceId: 'D1', status: { a: 1 }, version: 2, online: true });
    side.prepare("UPDATE device_states SET status = '{\"b\":1}', version = 9 WHERE device_id = 'D1'").run();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.getDeviceState('D1')).toEqual({ deviceId: 'D1', status: { b: 1 }, version: 9, online: true });
  });

  it('forgets a device deleted with its user at once', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    expect(await store.getDeviceState('D1')).toMatchObject({ version: 1 });
    expect(await store.deleteUser('U1', T0 + 1)).toBe(true);
    expect([await store.getDeviceState('D1'), await store.getDeviceStatusJson('D1')]).toEqual([undefined, undefined]);
  });

  it('keeps nothing a rolled-back group wrote', async () => {
    await addUser(store, 'U1');
    await addDevice(store, 'D1', 'U1');
    await addService(store, 'S1');
    await connect(store, 'S1', 'U1');
    await store.upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
    expect(await store.getDeviceStatusJson('D1')).toMatchObject({ version: 1 });
    // The report's event cannot be recorded: the report's write rolls back with it.
    side.exec("CREATE TRIGGER injected_fault AFTER INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'injected fault'); END");
    await expect(store.applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1)).rejects.toThrow(/injected fault/);
    side.exec('DROP TRIGGER injected_fault');
    expect(await store.getDeviceStatusJson('D1')).toMatchObject({ statusJson: expect.not.stringContaining('"a":1'), version: 1 });
  });
});

describe('messages their service cannot take', () => {
  it('are recorded held, waking no claim; once the service can take them, new ones are pending again', async () => {
    await addService(store, 'S1');
    await store.updateService('S1', { callbackUrl: null });
    await addUser(store, 'U1');
    await connect(store, 'S1', 'U1');
    let woken = 0;
    await store.watchOutbox(() => (woken += 1));
    const outbox = () => side.prepare('SELECT sequence, status, queue_head FROM outbox ORDER BY sequence').all();

    await addDevice(store, 'D1', 'U1');
    await new Promise((resolve) => setImmediate(resolve));
    expect([outbox(), woken]).toEqual([[{ sequence: 1, status: 'held', queue_head: 1 }], 0]);

    await store.updateService('S1', { callbackUrl: 'https://S1.example/push' });
    await store.renameDevice('D1', 'Renamed', T0 + 1);
    await new Promise((resolve) => setImmediate(resolve));
    // Behind the held head until the release: a queue's order holds across the change.
    expect([outbox(), woken]).toEqual([[{ sequence: 1, status: 'held', queue_head: 1 }, { sequence: 2, status: 'pending', queue_head: 0 }], 1]);
  });
});

describe('messages parked behind a held one', () => {
  // A held message recorded behind a held one is parked (queue_head -1), out of outbox_open.
  const outbox = () => side.prepare('SELECT sequence, kind, status, queue_head FROM outbox ORDER BY sequence').all();
  const claim = (now: number) => store.claimDeliveries({ owner: 'node-a', now, leaseMs: 60_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
  const sequencesOf = (claimed: { message: { sequence: number } }[]) => claimed.map((c) => c.message.sequence);

  beforeEach(async () => {
    await addService(store, 'S1');
    await store.updateService('S1', { callbackUrl: null });
    await addUser(store, 'U1');
    await connect(store, 'S1', 'U1');
    await addDevice(store, 'D1', 'U1');
  });

  it('go out in their order once released, one after the other', async () => {
    await store.renameDevice('D1', 'Two', T0 + 1);
    await store.renameDevice('D1', 'Three', T0 + 2);
    expect(outbox()).toEqual([
      { sequence: 1, kind: 'push', status: 'held', queue_head: 1 },
      { sequence: 2, kind: 'push', status: 'held', queue_head: -1 },
      { sequence: 3, kind: 'push', status: 'held', queue_head: -1 },
    ]);

    await store.updateService('S1', { callbackUrl: 'https://S1.example/push' });
    expect(await store.releaseHeld(T0 + 3, 'S1')).toBe(3);
    expect(outbox()).toMatchObject([{ status: 'pending', queue_head: 1 }, { status: 'pending', queue_head: 0 }, { status: 'pending', queue_head: 0 }]);
    for (const sequence of [1, 2, 3]) {
      const claimed = await claim(T0 + 4 + sequence);
      expect(sequencesOf(claimed)).toEqual([sequence]);
      const delivered = { kind: 'delivered' as const };
      const attempt = { messageId: claimed[0]!.message.messageId, fencingToken: claimed[0]!.fencingToken, startedAt: T0 + 5 + sequence, durationMs: 1, responseStatus: 200, responseBody: 'ok', error: null, verdict: delivered };
      expect(await store.recordAttempts([attempt], T0 + 5 + sequence, HOUR)).toEqual(['delivered']);
    }
  });

  it('behind one of the other kind are unparked when their own kind is released, and wait for it', async () => {
    await store.upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
    await store.applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1);
    await store.renameDevice('D1', 'Renamed', T0 + 2);
    expect(outbox()).toMatchObject([{ kind: 'push', queue_head: 1 }, { kind: 'event', queue_head: -1 }, { kind: 'push', queue_head: -1 }]);

    await store.updateService('S1', { eventCallbackUrl: 'https://S1.example/events' });
    expect(await store.releaseHeld(T0 + 3, 'S1')).toBe(1);
    expect(outbox()).toEqual([
      { sequence: 1, kind: 'push', status: 'held', queue_head: 1 },
      { sequence: 2, kind: 'event', status: 'pending', queue_head: 0 },
      { sequence: 3, kind: 'push', status: 'held', queue_head: 0 },
    ]);
    expect(await claim(T0 + 4)).toEqual([]);

    await store.updateService('S1', { callbackUrl: 'https://S1.example/push' });
    expect(await store.releaseHeld(T0 + 5, 'S1')).toBe(2);
    expect(sequencesOf(await claim(T0 + 6))).toEqual([1]);
  });

  it('behind a held message resent are unparked', async () => {
    await store.renameDevice('D1', 'Two', T0 + 1);
    const [, first] = await store.listMessages('S1', {});
    expect(await store.resendMessage(first!.messageId, T0 + 2)).toBe(true);
    expect(outbox()).toMatchObject([{ status: 'pending', queue_head: 1 }, { status: 'held', queue_head: 0 }]);
  });
});

describe('closed messages', () => {
  // Delivered and failed messages are closed in queue_head too (-2): outbox_open is queue_head >= 0.
  const outbox = () => side.prepare('SELECT sequence, status, queue_head FROM outbox ORDER BY sequence').all();
  const claim = (now: number) => store.claimDeliveries({ owner: 'node-a', now, leaseMs: 60_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
  const attemptOf = (claimed: Awaited<ReturnType<typeof claim>>[number], at: number, verdict: AttemptRecord['verdict']): AttemptRecord => ({
    messageId: claimed.message.messageId,
    fencingToken: claimed.fencingToken,
    startedAt: at,
    durationMs: 1,
    responseStatus: verdict.kind === 'delivered' ? 200 : 500,
    responseBody: '',
    error: null,
    verdict,
  });

  beforeEach(async () => {
    await addService(store, 'S1');
    await addUser(store, 'U1');
    await connect(store, 'S1', 'U1');
    await addDevice(store, 'D1', 'U1');
    await store.renameDevice('D1', 'Two', T0 + 1);
  });

  it('leave their queue when delivered or failed, the next one its head; a resend opens a failed one again, first in its queue', async () => {
    const [first] = await claim(T0 + 2);
    expect(outbox()).toEqual([{ sequence: 1, status: 'delivering', queue_head: 1 }, { sequence: 2, status: 'pending', queue_head: 0 }]);
    expect(await store.recordAttempts([attemptOf(first!, T0 + 3, { kind: 'exhausted' })], T0 + 3, HOUR)).toEqual(['failed']);
    expect(outbox()).toEqual([{ sequence: 1, status: 'failed', queue_head: -2 }, { sequence: 2, status: 'pending', queue_head: 1 }]);

    const [second] = await claim(T0 + 4);
    expect(await store.recordAttempts([attemptOf(second!, T0 + 5, { kind: 'delivered' })], T0 + 5, HOUR)).toEqual(['delivered']);
    expect(outbox()).toEqual([{ sequence: 1, status: 'failed', queue_head: -2 }, { sequence: 2, status: 'delivered', queue_head: -2 }]);

    expect(await store.resendMessage(first!.message.messageId, T0 + 6)).toBe(true);
    expect(outbox()).toEqual([{ sequence: 1, status: 'pending', queue_head: 1 }, { sequence: 2, status: 'delivered', queue_head: -2 }]);
    expect((await claim(T0 + 7)).map((c) => c.message.sequence)).toEqual([1]);
  });
});

describe('what recording keeps of subscribers and endpoints', () => {
  const statuses = () => side.prepare("SELECT status FROM outbox WHERE push_type = 'DEVICE_STATUS' ORDER BY sequence").all().map((r) => (r as { status: string }).status);
  const report = (at: number, value: number) => store.applyReport('D1', { a: value }, { a: value }, at);

  beforeEach(async () => {
    await addService(store, 'S1');
    await addUser(store, 'U1');
    await connect(store, 'S1', 'U1');
    await addDevice(store, 'D1', 'U1');
    await store.upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
  });

  it('sees at the next report a subscription another process removed or renewed', async () => {
    await report(T0 + 1, 1);
    side.prepare('UPDATE event_subscriptions SET expires_at = ?').run(T0 + 3 * HOUR);
    await report(T0 + 2 * HOUR, 2);
    side.prepare('DELETE FROM event_subscriptions').run();
    await report(T0 + 2 * HOUR + 1, 3);
    expect(statuses()).toEqual(['pending', 'pending']);
  });

  it("sees at the next report a service's callback URL or consent another process changed", async () => {
    await report(T0 + 1, 1);
    side.prepare('UPDATE services SET callback_url = NULL').run();
    await report(T0 + 2, 2);
    side.prepare("INSERT INTO device_shares (service_id, user_number, grant_id, scopes, device_ids, created_at) VALUES ('S1', 'U1', 'G1', '[]', '[]', ?)").run(T0 + 3);
    await report(T0 + 4, 3);
    expect(statuses()).toEqual(['pending', 'held']);
  });
});

describe('the delivery log', () => {
  it('a page starts at the last message of the previous page by the index, with no sort', async () => {
    await addService(store, 'S1');
    const insert = side.prepare(`INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at, queue_head)
      VALUES (?, 'S1', 'D1', 'push', 'DEVICE_PUSH', ?, '{}', 'delivered', ?, ?, -2)`);
    side.transaction(() => {
      for (let i = 0; i < 1000; i++) insert.run(`log-${i}`, i + 1, T0 + Math.floor(i / 10), T0 + Math.floor(i / 10));
    })();
    // The statements the store prepares from here on (a fresh store has none cached).
    const prepared: string[] = [];
    const original = Database.prototype.prepare;
    const prepare = vi.spyOn(Database.prototype, 'prepare').mockImplementation(function (this: Database.Database, source: string) {
      prepared.push(source);
      return original.call(this, source);
    });
    try {
      const page = await store.listMessages('S1', { before: 'log-505', limit: 10 });
      expect(page.map((m) => m.messageId)).toEqual(['log-504', 'log-503', 'log-502', 'log-501', 'log-500', 'log-499', 'log-498', 'log-497', 'log-496', 'log-495']);
    } finally {
      prepare.mockRestore();
    }
    const listing = prepared.find((text) => text.includes('ORDER BY created_at DESC'))!;
    const plan = side.prepare(`EXPLAIN QUERY PLAN ${listing}`).all('S1', 'log-505', 10) as { detail: string }[];
    expect(plan.map((row) => row.detail)).toContain('SEARCH outbox USING INDEX outbox_service_created (service_id=? AND created_at<?)');
    expect(plan.filter((row) => row.detail.includes('TEMP B-TREE'))).toEqual([]);
  });
});

describe('what the SQL takes for granted', () => {
  it('device type names are [A-Z_] only: allowsType finds a quoted name in the JSON of allowed types', () => {
    expect(DEVICE_TYPES.filter((type) => !/^[A-Z_]+$/.test(type))).toEqual([]);
  });
});
