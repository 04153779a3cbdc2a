/**
 * MQTT ingest (issue 5, target of issue 7: ≥ 10,000 reports/s): device clients publish state
 * reports QoS 1 to the embedded broker of `appliance-cloud serve` in a child process (SQLite file);
 * a report counts once its status change is stored and its DEVICE_STATUS event recorded for the
 * service subscribed to the device. Baseline, same run: the same clients and publishes to a bare
 * aedes broker in a child process, consumed by a no-op subscriber (the broker's own limit).
 *
 *   npm run bench -- mqtt-ingest
 *
 * MQTT_BENCH_DEVICES (200), MQTT_BENCH_REPORTS (reports per device, 100) and MQTT_BENCH_WINDOW
 * (reports in flight per device, 10) tune the load; BENCH_SERVER_NODE_OPTIONS='--cpu-prof
 * --cpu-prof-dir=/tmp/prof' profiles the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { connectAsync } from 'mqtt';
import { DEVICE_TYPES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { DeviceClient } from '../src/device-protocol/device-client.js';
import { newMessageId, systemClock } from '../src/ids.js';
import { demoCountry } from '../src/regions.js';
import { openSqliteDatabase } from '../src/store/sqlite/database.js';
import { sqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { ROOT } from './lib/build.js';
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
  databaseFile: string;
  devices: { deviceId: string; secret: string }[];
  identities: { headers: Record<string, string>; deviceIds: string[] }[];
  remove(): void;
}

/** One service, users of DEVICES_PER_USER ceiling fans each, seeded through the domain functions. */
async function seed(): Promise<Seeded> {
  const directory = mkdtempSync(join(tmpdir(), 'appliance-cloud-mqtt-bench-'));
  const databaseFile = join(directory, 'world.db');
  const db = openSqliteDatabase(databaseFile);
  db.pragma('synchronous = OFF');
  const store = sqliteStore(db);
  await store.migrate();
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
  return { databaseFile, devices, identities, remove: () => rmSync(directory, { recursive: true, force: true }) };
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
async function whenCounted(count: () => number, total: number): Promise<{ at: number; reached: number }> {
  let last = -1;
  let movedAt = performance.now();
  for (;;) {
    const now = count();
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

/** The app: publishes to the server's broker, counts what the store holds. */
async function measureServer(entry: string, world: Seeded): Promise<Run> {
  const mqttPort = await freePort();
  const server = await startServer(entry, world.databaseFile, { MQTT_PORT: String(mqttPort) });
  const reader = new Database(world.databaseFile, { readonly: true });
  try {
    await subscribeEvents(server.url, world.identities);
    const clients = await connectAll(`mqtt://127.0.0.1:${mqttPort}`, world.devices);
    const stored = reader.prepare('SELECT COALESCE(SUM(version), 0) AS n FROM device_states').pluck();
    const events = reader.prepare(`SELECT COUNT(*) FROM outbox WHERE push_type = 'DEVICE_STATUS'`).pluck();
    // Connecting reported nothing; wait for the online flags to settle, then take the starting point.
    await sleep(500);
    const [stored0, events0] = [stored.get() as number, events.get() as number];
    const total = world.devices.length * REPORTS;
    const cpu0 = cpuSecondsOf(server.pid);
    const started = performance.now();
    const published = publishAll(clients).then(() => performance.now());
    const done = await whenCounted(() => Math.min((stored.get() as number) - stored0, (events.get() as number) - events0), total);
    const cpuUsPerReport = ((cpuSecondsOf(server.pid) - cpu0) * 1e6) / total;
    const publishedAt = await published;
    const seconds = (done.at - started) / 1000;
    const result = {
      reports: total,
      seconds,
      perSecond: done.reached / seconds,
      publishedSeconds: (publishedAt - started) / 1000,
      stored: (stored.get() as number) - stored0,
      events: (events.get() as number) - events0,
      cpuUsPerReport,
    };
    await Promise.all(clients.map((c) => c.mqtt.endAsync(true)));
    return result;
  } finally {
    reader.close();
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

async function run(settings: BenchSettings): Promise<Figure[]> {
  const world = await seed();
  try {
    const baseline = await measureBaseline(world);
    const app = await measureServer(settings.serverEntry, world);
    const lost = app.reports - Math.min(app.stored ?? 0, app.events ?? 0);
    // Zero loss: every report acknowledged must be stored with its event.
    if (lost > 0) throw new Error(`${lost} of ${app.reports} acknowledged reports were not stored with their event`);
    return [
      {
        figure: 'reports/s, publish to stored status and event (SQLite)',
        value: app.perSecond,
        unit: 'reports/s',
        baseline: { label: 'bare aedes, no-op subscriber', value: baseline.perSecond },
        ratio: app.perSecond / baseline.perSecond,
        target: `≥ ${TARGET.toLocaleString('en')} reports/s (issue 7)`,
        met: app.perSecond >= TARGET,
        details: { app, baseline },
      },
    ];
  } finally {
    world.remove();
  }
}

/** For bench/run.ts: any bench/*.ts exporting `scenario` is one of its scenarios. */
export const scenario: Scenario = {
  number: 6,
  name: 'mqtt-ingest',
  title: 'MQTT reports per second, from publish to stored status and recorded DEVICE_STATUS event',
  conditions: {
    ...SERVER_CONDITIONS,
    MQTT_PORT: 'a free port',
    DATABASE_URL: 'sqlite:<file> (synchronous = FULL)',
    devices: String(DEVICES),
    reportsPerDevice: String(REPORTS),
    inFlightPerDevice: String(WINDOW),
    qos: '1',
  },
  run,
};
