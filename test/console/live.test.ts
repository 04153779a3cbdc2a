/**
 * Live device pages on every node (DESIGN H): two apps on one database — a SQLite file, or with
 * TEST_DATABASE_URL one PostgreSQL database as in DESIGN F — and a device page's event stream on one
 * node follows a change made through the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceWatch, type LiveState } from '../../src/console/live.js';
import { SESSION_TTL_MS } from '../../src/console/session.js';
import { callAdmin, createWorld, testApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, isPostgresUrl, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';
import { signIn } from './session.js';

interface StatusEvent {
  version: number;
  online: boolean;
  html: string;
}

/** Reads an event stream, calling `seen` with each status event, until it returns true. */
async function readUntil(response: Response, seen: (event: StatusEvent) => boolean, timeoutMs = 10_000): Promise<StatusEvent[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: StatusEvent[] = [];
  let buffer = '';
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`The stream ended before the change was seen; events: ${JSON.stringify(events.map((e) => e.version))}`);
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^event: status\ndata: (.*)$/m.exec(block)?.[1];
        if (data === undefined) continue;
        const event = JSON.parse(data) as StatusEvent;
        events.push(event);
        if (seen(event)) return events;
      }
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}

describe('a live device page on another node', () => {
  let dir: string;
  let database: TestDatabase | undefined;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-live-'));
    database = isPostgresUrl(process.env.TEST_DATABASE_URL) ? await createTestDatabase(postgresAdminUrl()) : undefined;
    const databaseUrl = database?.url ?? `sqlite:${join(dir, 'shared.db')}`;
    a = await testApp({ databaseUrl });
    b = await testApp({ databaseUrl });
    await b.app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pushes a change made through one node to the page open on the other', async () => {
    const world = await createWorld(a.ctx, { deviceTypes: ['DEVICE_REFRIGERATOR'] });
    const fridge = world.devices[0]!.deviceId;
    const visitor = await signIn(b.app);
    const address = b.app.server.address() as { port: number };
    const stream = await fetch(`http://127.0.0.1:${address.port}/console/devices/${fridge}/events`, { headers: { cookie: visitor.cookie } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');

    let first: number | undefined;
    const events = await readUntil(stream, (event) => {
      if (first === undefined) {
        first = event.version;
        // The page is watching: now the other node changes the device.
        void callAdmin(a.app, 'POST', `/admin/devices/${fridge}/sim`, { action: 'open-door' });
        return false;
      }
      return event.version > first;
    });
    const last = events.at(-1)!;
    expect(last.html).toMatch(/data-path="doorStatus\[locationName=MAIN\]\.doorState">OPEN</);
    expect(last.online).toBe(true);
  });

  it('pushes a change of connection, which keeps the version', async () => {
    const world = await createWorld(a.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const washer = world.devices[0]!.deviceId;
    const visitor = await signIn(b.app);
    const address = b.app.server.address() as { port: number };
    const stream = await fetch(`http://127.0.0.1:${address.port}/console/devices/${washer}/events`, { headers: { cookie: visitor.cookie } });
    let count = 0;
    const events = await readUntil(stream, (event) => {
      if (count++ === 0) void callAdmin(a.app, 'POST', `/admin/devices/${washer}/connection`, { online: false });
      return !event.online;
    });
    expect(events.at(-1)!.html).toContain('offline');
  });

  it('refuses the stream without a session', async () => {
    const address = b.app.server.address() as { port: number };
    const answer = await fetch(`http://127.0.0.1:${address.port}/console/devices/x/events`, { redirect: 'manual' });
    expect(answer.status).toBe(303);
  });
});

describe("a live device page's session", () => {
  it('ends the event stream when the session that opened it ends', async () => {
    let offset = 0;
    const t = await testApp({ clock: { now: () => Date.now() + offset } });
    try {
      const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
      // Signed in almost a working day ago: the session has a second and a half left.
      offset = -(SESSION_TTL_MS - 1500);
      const visitor = await signIn(t.app);
      offset = 0;
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const address = t.app.server.address() as { port: number };
      const stream = await fetch(`http://127.0.0.1:${address.port}/console/devices/${world.devices[0]!.deviceId}/events`, { headers: { cookie: visitor.cookie } });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      const ended = (async () => {
        for (;;) if ((await reader.read()).done) return 'ended';
      })();
      const late = new Promise((resolve) => setTimeout(() => resolve('still open'), 5000));
      expect(await Promise.race([ended, late])).toBe('ended');
      await reader.cancel();
    } finally {
      await t.close();
    }
  });
});

describe('watching a device', () => {
  it('reads it once at a time: a slow store is not read again meanwhile, and an older status never follows a newer one', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    let version = 0;
    let inFlight = 0;
    let most = 0;
    const store = {
      async getDeviceStatusJson(): Promise<LiveState> {
        inFlight += 1;
        most = Math.max(most, inFlight);
        const read = ++version;
        // The first read is slow (a busy database), the next ones fast.
        await sleep(read === 1 ? 150 : 5);
        inFlight -= 1;
        return { version: read, online: true, statusJson: '{}' };
      },
    };
    const watch = new DeviceWatch(store, 20);
    const seen: number[] = [];
    const unwatch = watch.watch('device', (state) => seen.push(state.version));
    await sleep(300);
    unwatch();
    watch.close();
    expect(most).toBe(1);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });
});
