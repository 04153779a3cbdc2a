/**
 * MQTT ingest (issue 5, target of issue 7: ≥ 10,000 reports/s): device clients publish state
 * reports QoS 1 to the embedded broker of `appliance-cloud serve` in a child process (SQLite file;
 * and, with DATABASE_URL=postgres://…, a fresh PostgreSQL database, issue 16); a report counts once
 * its status change is stored and its DEVICE_STATUS event recorded for the service subscribed to the
 * device. Baseline, same run: the same clients and publishes to a bare aedes broker in a child
 * process, consumed by a no-op subscriber (the broker's own limit).
 *
 *   npm run bench -- mqtt-ingest
 *
 * MQTT_BENCH_DEVICES (200), MQTT_BENCH_REPORTS (reports per device, 100) and MQTT_BENCH_WINDOW
 * (reports in flight per device, 10) tune the load; BENCH_SERVER_NODE_OPTIONS='--cpu-prof
 * --cpu-prof-dir=/tmp/prof' profiles the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { connectAsync } from 'mqtt';
import pg from 'pg';
import { DEVICE_TYPES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { DeviceClient } from '../src/device-protocol/device-client.js';
import { newMessageId, systemClock } from '../src/ids.js';
import { demoCountry } from '../src/regions.js';
import { openStore } from '../src/store/index.js';
import { openSqliteDatabase } from '../src/store/sqlite/database.js';
import { sqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { ROOT } from './lib/build.js';
import { postgresAdminUrl, postgresDatabase, sqliteDatabase, type BenchDatabase } from './lib/database.js';
import { cpuSecondsOf } from './lib/proc.js';
import type { BenchSettings, Figure, Scenario } from './lib/scenario.js';
import { ADMIN_TOKEN, freePort, SERVER_CONDITIONS, startServer } from './lib/server.js';

const DEVICES = Number(process.env.MQTT_BENCH_DEVICES ?? 200);
const REPORTS = Number(process.env.MQTT_BENCH_REPORTS ?? 100);
const WINDOW = Number(process.env.MQTT_BENCH_WINDOW ?? 10);
const TARGET = 10_000;
/** The event subscription limit per service and user is 100 (EVENT_SUBSCRIPTION_LIMIT). */
const DEVICES_PER_USER = 50;
const DEVICE_TYPE = 'DEVICE_CEILING_FAN';
/** Alternating values, so that every report is a change to store and an event to record. */
const WIND = ['HIGH', 'LOW'] as const;

interface Seeded {
  database: BenchDatabase;
  devices: { deviceId: string; secret: string }[];
  identities: { headers: Record<string, string>; deviceIds: string[] }[];
}

/** The store to seed `database` through; a SQLite file without fsyncs, which seeding does not need. */
async function seedingStore(database: BenchDatabase): Promise<Store> {
  if (database.kind === 'PostgreSQL') return openStore(database.url);
  const db = openSqliteDatabase(database.url.slice('sqlite:'.length));
  db.pragma('synchronous = OFF');
  const store = sqliteStore(db);
  await store.migrate();
  return store;
}

/** One service, users of DEVICES_PER_USER ceiling fans each, seeded through the domain functions. */
async function seed(database: BenchDatabase): Promise<Seeded> {
  const store = await seedingStore(database);
  const config = loadConfig('serve', { ADMIN_TOKEN });
  const ctx = createContext(config, store, systemClock);
  const countryCode = demoCountry(config.region);
  const { service, serviceKey } = await ctx.accounts.createService({ name: 'mqtt ingest', allowedDevices: [...DEVICE_TYPES] });
  const devices: Seeded['devices'] = [];
  const identities: Seeded['identities'] = [];
  for (let u = 0; devices.length < DEVICES; u += 1) {
    const user = await ctx.accounts.createUser(countryCode);
    const deviceIds: string[] = [];
    for (let d = 0; d < DEVICES_PER_USER && devices.length < DEVICES; d += 1) {
      const { device, deviceSecret } = await ctx.devices.register(user.userNumber, { deviceType: DEVICE_TYPE, alias: `fan ${u}.${d}`, virtual: false });
      devices.push({ deviceId: device.deviceId, secret: deviceSecret });
      deviceIds.push(device.deviceId);
    }
    const { accessToken } = await ctx.accounts.issueToken(user.userNumber, service.serviceId);
    const headers = {
      authorization: `Bearer ${accessToken}`,
      'x-country-code': countryCode,
      'x-service-id': service.serviceId,
      'x-service-key': serviceKey,
    };
    identities.push({ headers, deviceIds });
  }
  await store.close();
  return { database, devices, identities };
}

/** As a partner: load each user's device list, then subscribe to every device's events. */
async function subscribeEvents(url: string, identities: Seeded['identities']): Promise<void> {
  const call = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const res = await fetch(`${url}${path}`, { method, headers: { ...headers, 'x-message-id': newMessageId(), ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ?? null });
    if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  };
  for (const { headers, deviceIds } of identities) {
    await call('GET', '/devices', headers);
    for (const deviceId of deviceIds) await call('POST', `/event/${deviceId}`, headers, '{"expire":{"unit":"DAY","timer":1}}');
  }
}

/** Connects every device (its secret is ignored by the bare broker), 50 at a time. */
async function connectAll(url: string, devices: Seeded['devices']): Promise<DeviceClient[]> {
  const clients: DeviceClient[] = [];
  for (let i = 0; i < devices.length; i += 50) {
    clients.push(...(await Promise.all(devices.slice(i, i + 50).map((d) => DeviceClient.connect({ url, deviceId: d.deviceId, secret: d.secret })))));
  }
  return clients;
}

/** Every device publishes REPORTS reports, WINDOW of them awaiting their PUBACK at a time; resolves when all are acked. */
async function publishAll(clients: DeviceClient[]): Promise<void> {
  await Promise.all(clients.map(async (client) => {
    let next = 0;
    const worker = async () => {
      while (next < REPORTS) {
        const i = next++;
        await client.report({ airFlow: { windStrength: WIND[i % 2]! } });
      }
    };
    await Promise.all(Array.from({ length: WINDOW }, worker));
  }));
}

/** Polls `count` until it reaches `total` (or stops moving for 10 s); the time it got there. */
async function whenCounted(count: () => number | Promise<number>, total: number): Promise<{ at: number; reached: number }> {
  let last = -1;
  let movedAt = performance.now();
  for (;;) {
    const now = await count();
    if (now >= total) return { at: performance.now(), reached: now };
    if (now !== last) [last, movedAt] = [now, performance.now()];
    if (performance.now() - movedAt > 10_000) return { at: movedAt, reached: now };
    await sleep(2);
  }
}

interface Run {
  reports: number;
  seconds: number;
  perSecond: number;
  publishedSeconds: number;
  stored?: number;
  events?: number;
  /** The server's CPU time per report (steadier than reports/s on a shared machine). */
  cpuUsPerReport?: number;
}

/** What the database holds: statuses stored (the sum of their versions) and DEVICE_STATUS events recorded, read beside the server. */
interface Tally {
  read(): Promise<{ stored: number; events: number }>;
  close(): Promise<void>;
}

const STORED = 'SELECT COALESCE(SUM(version), 0) AS n FROM device_states';
const EVENTS = `SELECT COUNT(*) AS n FROM outbox WHERE push_type = 'DEVICE_STATUS'`;

async function tally(database: BenchDatabase): Promise<Tally> {
  if (database.kind === 'SQLite') {
    const reader = new Database(database.url.slice('sqlite:'.length), { readonly: true });
    const [stored, events] = [reader.prepare(STORED).pluck(), reader.prepare(EVENTS).pluck()];
    return { read: async () => ({ stored: stored.get() as number, events: events.get() as number }), close: async () => void reader.close() };
  }
  const reader = new pg.Client({ connectionString: database.url });
  await reader.connect();
  const count = async (sql: string) => Number((await reader.query<{ n: string }>(sql)).rows[0]!.n);
  return { read: async () => ({ stored: await count(STORED), events: await count(EVENTS) }), close: () => reader.end() };
}

/** The app: publishes to the server's broker, counts what the store holds. */
async function measureServer(entry: string, world: Seeded): Promise<Run> {
  const mqttPort = await freePort();
  const server = await startServer(entry, '', { MQTT_PORT: String(mqttPort), DATABASE_URL: world.database.url });
  const reader = await tally(world.database);
  try {
    await subscribeEvents(server.url, world.identities);
    const clients = await connectAll(`mqtt://127.0.0.1:${mqttPort}`, world.devices);
    // Connecting reported nothing; wait for the online flags to settle, then take the starting point.
    await sleep(500);
    const start = await reader.read();
    const total = world.devices.length * REPORTS;
    const cpu0 = cpuSecondsOf(server.pid);
    const started = performance.now();
    const published = publishAll(clients).then(() => performance.now());
    const done = await whenCounted(async () => {
      const now = await reader.read();
      return Math.min(now.stored - start.stored, now.events - start.events);
    }, total);
    const cpuUsPerReport = ((cpuSecondsOf(server.pid) - cpu0) * 1e6) / total;
    const publishedAt = await published;
    const seconds = (done.at - started) / 1000;
    const end = await reader.read();
    const result = {
      reports: total,
      seconds,
      perSecond: done.reached / seconds,
      publishedSeconds: (publishedAt - started) / 1000,
      stored: end.stored - start.stored,
      events: end.events - start.events,
      cpuUsPerReport,
    };
    await Promise.all(clients.map((c) => c.mqtt.endAsync(true)));
    return result;
  } finally {
    await reader.close();
    await server.stop();
  }
}

/** A bare aedes broker in a child process: no authentication, no bridge, no store. */
async function startBareBroker(): Promise<{ port: number; child: ChildProcess }> {
  const script = `
    import { Aedes } from 'aedes';
    import { createServer } from 'node:net';
    const aedes = await Aedes.createBroker();
    const server = createServer((socket) => aedes.handle(socket));
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the bare broker exited ${code}`)));
  });
  return { port, child };
}

async function measureBaseline(world: Seeded): Promise<Run> {
  const { port, child } = await startBareBroker();
  const url = `mqtt://127.0.0.1:${port}`;
  try {
    let received = 0;
    const subscriber = await connectAsync(url, { clientId: 'no-op-subscriber', reconnectPeriod: 0 });
    subscriber.on('message', () => (received += 1));
    await subscriber.subscribeAsync('appliance/+/state', { qos: 1 });
    const clients = await connectAll(url, world.devices);
    await sleep(500);
    received = 0;
    const total = world.devices.length * REPORTS;
    const started = performance.now();
    const published = publishAll(clients).then(() => performance.now());
    const done = await whenCounted(() => received, total);
    const publishedAt = await published;
    const seconds = (done.at - started) / 1000;
    await Promise.all(clients.map((c) => c.mqtt.endAsync(true)));
    await subscriber.endAsync(true);
    return { reports: total, seconds, perSecond: done.reached / seconds, publishedSeconds: (publishedAt - started) / 1000 };
  } finally {
    child.kill('SIGTERM');
  }
}

/** The server's reports/s on `database`, against the bare broker's with the same clients. */
async function ingestFigure(entry: string, database: BenchDatabase): Promise<Figure> {
  try {
    const world = await seed(database);
    const baseline = await measureBaseline(world);
    const app = await measureServer(entry, world);
    const lost = app.reports - Math.min(app.stored ?? 0, app.events ?? 0);
    // Zero loss: every report acknowledged must be stored with its event.
    if (lost > 0) throw new Error(`${lost} of ${app.reports} acknowledged reports were not stored with their event (${database.kind})`);
    return {
      figure: `reports/s, publish to stored status and event (${database.kind})`,
      value: app.perSecond,
      unit: 'reports/s',
      baseline: { label: 'bare aedes, no-op subscriber', value: baseline.perSecond },
      ratio: app.perSecond / baseline.perSecond,
      target: `≥ ${TARGET.toLocaleString('en')} reports/s (issue 7)`,
      met: app.perSecond >= TARGET,
      details: { app, baseline },
    };
  } finally {
    await database.remove();
  }
}

async function run(settings: BenchSettings): Promise<Figure[]> {
  const figures = [await ingestFigure(settings.serverEntry, sqliteDatabase())];
  const postgres = postgresAdminUrl();
  if (postgres) figures.push(await ingestFigure(settings.serverEntry, await postgresDatabase(postgres)));
  return figures;
}

/** For bench/run.ts: any bench/*.ts exporting `scenario` is one of its scenarios. */
export const scenario: Scenario = {
  number: 6,
  name: 'mqtt-ingest',
  title: 'MQTT reports per second, from publish to stored status and recorded DEVICE_STATUS event',
  conditions: {
    ...SERVER_CONDITIONS,
    MQTT_PORT: 'a free port',
    DATABASE_URL: 'sqlite:<file> (synchronous = FULL); a fresh PostgreSQL database when DATABASE_URL=postgres://…',
    devices: String(DEVICES),
    reportsPerDevice: String(REPORTS),
    inFlightPerDevice: String(WINDOW),
    qos: '1',
  },
  run,
};
