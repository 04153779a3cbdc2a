/**
 * Scenario 4, the event pipeline (issue 7; issue 6's PostgreSQL figures): DEVICE_STATUS events of
 * subscribed ceiling fans delivered by `appliance-cloud serve` (a child process) to a receiver (a
 * child process), against a baseline measured in the same run — a raw loop POSTing the same bodies
 * through the same undici sender to the same receiver.
 *
 * - deliveries/s: a backlog recorded while the service is disabled, drained from the moment the admin
 *   API enables it, vs the raw loop at the service's concurrency (the per-endpoint limit);
 * - report-to-delivery latency p50/p99 at a steady rate of reports through the admin API (issue 7's
 *   1,000/s, and a light 100/s), vs the raw POST's latency at that rate, each after BENCH_WARMUP_SECONDS
 *   of the same load;
 * - with DATABASE_URL=postgres://…: the drain on a fresh database (created for the run, dropped
 *   after) by one node and by two `serve` processes sharing the backlog, SQL statements per
 *   delivery from the servers' `store_statements_total` metric, and (in the details) the CPU that
 *   PostgreSQL's processes on this machine spent per delivery, beside the servers' own.
 *
 * Before the drain is timed, a warm-up backlog of another service (its own devices) is drained by the
 * same servers, as the HTTP scenarios warm up before they measure: a drain of a few seconds from a
 * cold start measured the JIT compiling the delivery path as much as the path itself.
 *
 * `npm run bench -- delivery` runs it. Every message is counted by `deviceId:webhook-sequence` at
 * the receiver: a lost message fails the run. BENCH_DEVICES (1000), BENCH_BACKLOG (10000),
 * BENCH_WARMUP_BACKLOG (5000, 0 for none), BENCH_RATE (1000 reports/s), BENCH_LIGHT_RATE (100
 * reports/s) and BENCH_SECONDS tune it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { DEFAULT_TUNING } from '../src/delivery/index.js';
import { createSender, type Sender } from '../src/delivery/sender.js';
import { randomId, systemClock } from '../src/ids.js';
import { openStore } from '../src/store/index.js';
import { postgresAdminUrl, postgresDatabase, sqliteDatabase, type BenchDatabase } from './lib/database.js';
import { ROOT } from './lib/build.js';
import { cpuSecondsOf, cpuSecondsOfCommand } from './lib/proc.js';
import { ceilingFigure, type Figure, type Scenario } from './lib/scenario.js';
import { ADMIN_TOKEN, SERVER_CONDITIONS, startServer, type ServerUnderTest } from './lib/server.js';

const STRENGTHS = ['HIGH', 'LOW', 'MID', 'TURBO'];
/** Convoy's statements per event, the anchor issue 6 names. */
const CONVOY_STATEMENTS = 32;
/** Phase QA: the receiver is plain http on loopback, which phase OP refuses to deliver to. */
const PHASE = 'QA';

function setting(name: string, fallback: number, least = 1): number {
  const value = Number(process.env[name] || fallback);
  if (!(value >= least)) throw new Error(`${name} must be a number of at least ${least}`);
  return value;
}

const epochMs = (): number => performance.timeOrigin + performance.now();

// ---- the receiver, in its own process ----

/** Arrival times (epoch ms) at the receiver, by `deviceId:sequence`. */
type Arrivals = Record<string, number>;

/** Answers 204 at once and notes when each message arrived; hands the notes over on request. */
function runReceiver(): void {
  let arrivals: Arrivals = {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = epochMs();
      const { event } = JSON.parse(Buffer.concat(chunks).toString()) as { event: { deviceId: string } };
      arrivals[`${event.deviceId}:${String(req.headers['webhook-sequence'])}`] = at;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.on('message', () => {
    process.send?.({ arrivals });
    arrivals = {};
  });
}

interface Receiver {
  url: string;
  /** Every arrival since the last take. */
  take(): Promise<Arrivals>;
  /** How many arrived since the last take. */
  count(): Promise<number>;
  close(): void;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--receiver'], { cwd: ROOT, execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve((m as { port: number }).port)));
  let seen: Arrivals = {};
  const collect = async (): Promise<void> => {
    const fresh = await new Promise<Arrivals>((resolve) => {
      child.once('message', (m) => resolve((m as { arrivals: Arrivals }).arrivals));
      child.send('take');
    });
    Object.assign(seen, fresh);
  };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    async take() {
      await collect();
      const all = seen;
      seen = {};
      return all;
    },
    async count() {
      await collect();
      return Object.keys(seen).length;
    },
    close: () => child.kill(),
  };
}

// ---- the world: one service subscribed to the events of many ceiling fans ----

interface World {
  serviceId: string;
  /** The warm-up's service and the keys its messages arrive under; none when the warm-up is off. */
  warmUp?: { serviceId: string; expected: string[] };
  devices: string[];
  /** Each device's last sequence and wind strength: every report changes it, so each is one message. */
  sequences: Map<string, number>;
  strengths: Map<string, string>;
}

/** The next report of `deviceId` and the key its message will arrive under. */
function nextReport(w: World, deviceId: string): { key: string; report: { airFlow: { windStrength: string } } } {
  const sequence = (w.sequences.get(deviceId) ?? 0) + 1;
  w.sequences.set(deviceId, sequence);
  const windStrength = STRENGTHS[(STRENGTHS.indexOf(w.strengths.get(deviceId) ?? '') + 1) % STRENGTHS.length]!;
  w.strengths.set(deviceId, windStrength);
  return { key: `${deviceId}:${sequence}`, report: { airFlow: { windStrength } } };
}

/**
 * Seeds the world through the domain functions, then records `backlog` reports with the service
 * disabled, so that they wait in the outbox until the drain enables it; likewise `warmUp` reports
 * of the warm-up's service, on devices of its own (a tenth as many).
 */
async function seed(database: BenchDatabase, devices: number, backlog: number, warmUp: number, callbackUrl: string): Promise<World> {
  const store = await openStore(database.url);
  try {
    const config = loadConfig('test', { DELIVERY_RETRY_SCHEDULE: '1s,5s' });
    const ctx = createContext(config, store, systemClock);
    const user = await ctx.accounts.createUser('KR');
    /** A disabled service subscribed to `count` new fans, with `reports` reports of them waiting. */
    const backlogOf = async (name: string, count: number, reports: number): Promise<World> => {
      const { service } = await ctx.accounts.createService({ name, allowedDevices: ['DEVICE_CEILING_FAN'], callbackUrl });
      await ctx.accounts.issueToken(user.userNumber, service.serviceId);
      const w: World = { serviceId: service.serviceId, devices: [], sequences: new Map(), strengths: new Map() };
      for (let i = 0; i < count; i++) {
        const { device } = await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_CEILING_FAN', alias: `${name} ${i}`, virtual: false });
        const { status } = await ctx.devices.state(device.deviceId);
        w.strengths.set(device.deviceId, (status as { airFlow: { windStrength: string } }).airFlow.windStrength);
        const subscription = { serviceId: service.serviceId, userNumber: user.userNumber, deviceId: device.deviceId, expiresAt: Date.now() + 86_400_000 };
        await store.upsertEventSubscription(subscription, Date.now(), count + 1);
        w.devices.push(device.deviceId);
      }
      await ctx.accounts.updateService(service.serviceId, { enabled: false });
      // A device's reports one after another (its order), the devices side by side (one commit per turn).
      const perDevice = Math.ceil(reports / count);
      await Promise.all(
        w.devices.map(async (deviceId, d) => {
          for (let i = 0; i < perDevice && i * count + d < reports; i++) await ctx.devices.report(deviceId, nextReport(w, deviceId).report);
        }),
      );
      return w;
    };
    const w = await backlogOf('bench', devices, backlog);
    if (warmUp > 0) {
      const warm = await backlogOf('warm-up', Math.max(1, Math.round(devices / 10)), warmUp);
      w.warmUp = { serviceId: warm.serviceId, expected: expectedOf(warm) };
    }
    return w;
  } finally {
    await store.close();
  }
}

/** The keys every message of `w`'s devices so far arrives under. */
function expectedOf(w: World): string[] {
  return w.devices.flatMap((deviceId) => Array.from({ length: w.sequences.get(deviceId) ?? 0 }, (_, i) => `${deviceId}:${i + 1}`));
}

// ---- talking to the servers ----

async function admin(server: ServerUnderTest, method: 'POST' | 'PATCH', path: string, body: unknown): Promise<void> {
  const response = await request(`${server.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${method} /admin${path} answered ${response.statusCode}: ${text}`);
}

/** The sum of `store_statements_total` on /metrics; null when the build does not count statements. */
async function statementsOf(server: ServerUnderTest): Promise<number | null> {
  const text = await (await request(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.text();
  const lines = text.split('\n').filter((line) => line.startsWith('store_statements_total'));
  return lines.length ? lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0) : null;
}

async function until(what: string, done: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

/** Zero loss is part of every figure: a run that lost a message fails. */
function checkNoLoss(what: string, expected: Iterable<string>, arrivals: Arrivals): void {
  const lost = [...expected].filter((key) => arrivals[key] === undefined);
  if (lost.length) throw new Error(`${what}: ${lost.length} messages never arrived (e.g. ${lost.slice(0, 3).join(', ')})`);
}

// ---- the measurements ----

interface Drain {
  perSecond: number;
  seconds: number;
  cpuUsPerDelivery: number;
  /** Of every PostgreSQL process on this machine (none for SQLite, or a server elsewhere). */
  postgresCpuUsPerDelivery: number | null;
  statementsPerDelivery: number | null;
}

/** Enables the warm-up's service and waits for its backlog, untimed. */
async function warmUp(servers: ServerUnderTest[], receiver: Receiver, w: World): Promise<void> {
  if (!w.warmUp) return;
  await receiver.take();
  await admin(servers[0]!, 'PATCH', `/services/${w.warmUp.serviceId}`, { enabled: true });
  await until('the warm-up backlog to drain', async () => (await receiver.count()) >= w.warmUp!.expected.length);
  checkNoLoss('the warm-up', w.warmUp.expected, await receiver.take());
}

/** Enables the service through the first server and times the backlog's delivery by all of them. */
async function drain(servers: ServerUnderTest[], receiver: Receiver, w: World, expected: string[], kind: BenchDatabase['kind']): Promise<Drain> {
  await receiver.take();
  const cpuBefore = servers.map((s) => cpuSecondsOf(s.pid));
  const postgresBefore = cpuSecondsOfCommand('postgres');
  const statementsBefore = await Promise.all(servers.map(statementsOf));
  const started = performance.now();
  await admin(servers[0]!, 'PATCH', `/services/${w.serviceId}`, { enabled: true });
  await until('the backlog to drain', async () => (await receiver.count()) >= expected.length);
  const seconds = (performance.now() - started) / 1000;
  const cpu = servers.reduce((sum, s, i) => sum + cpuSecondsOf(s.pid) - cpuBefore[i]!, 0);
  const postgresAfter = cpuSecondsOfCommand('postgres');
  const statementsAfter = await Promise.all(servers.map(statementsOf));
  checkNoLoss('the drain', expected, await receiver.take());
  const statements = statementsAfter.every((n) => n !== null) && statementsBefore.every((n) => n !== null)
    ? statementsAfter.reduce((sum, n, i) => sum + n - statementsBefore[i]!, 0)
    : null;
  return {
    perSecond: expected.length / seconds,
    seconds: round(seconds, 3),
    cpuUsPerDelivery: round((cpu * 1e6) / expected.length, 1),
    postgresCpuUsPerDelivery:
      kind === 'PostgreSQL' && postgresBefore !== null && postgresAfter !== null ? round(((postgresAfter - postgresBefore) * 1e6) / expected.length, 1) : null,
    statementsPerDelivery: statements === null ? null : round(statements / expected.length, 2),
  };
}

/** POSTs every body through one sender with `concurrency` in flight; deliveries/s and this process's CPU µs per POST. */
async function rawLoop(url: string, bodies: string[], concurrency: number): Promise<{ perSecond: number; cpuUsPerDelivery: number }> {
  const sender = createSender({ phase: 'QA', allowList: [], connectionsPerOrigin: DEFAULT_TUNING.maxInFlight });
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next]!;
      next += 1;
      await sender.send(url, { 'webhook-id': randomId(16), 'webhook-sequence': `raw-${next}` }, body);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await sender.close();
  return { perSecond: bodies.length / seconds, cpuUsPerDelivery: round((used.user + used.system) / bodies.length, 1) };
}

/** The bodies the raw loop sends: events of the same shape and size as the app's. */
function sampleBodies(w: World, count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      messageId: randomId(16),
      timestamp: new Date().toISOString(),
      event: { pushType: 'DEVICE_STATUS', serviceId: w.serviceId, deviceId: w.devices[i % w.devices.length], deviceType: 'DEVICE_CEILING_FAN', report: { airFlow: { windStrength: 'HIGH' } }, userList: ['0000000000000000000000'] },
    }),
  );
}

/** Calls `work(i)` `rate` times a second for `seconds`, in ticks of 10 ms; waits for every call. */
async function paced(rate: number, seconds: number, work: (i: number) => Promise<void>): Promise<void> {
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const pending: Promise<void>[] = [];
  let issued = 0;
  while (issued < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    while (issued < due) pending.push(work(issued++));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await Promise.all(pending);
}

/** Reports at `rate`/s through the admin API for `seconds`, each device's one after another; when each was sent, by key. */
async function pacedReports(server: ServerUnderTest, w: World, rate: number, seconds: number): Promise<Map<string, number>> {
  const reportedAt = new Map<string, number>();
  // A device's reports one after another, so that each lands in the order its sequence was counted.
  const previous = new Map<string, Promise<void>>();
  await paced(rate, seconds, (i) => {
    const deviceId = w.devices[i % w.devices.length]!;
    const sent = (previous.get(deviceId) ?? Promise.resolve()).then(async () => {
      const { key, report } = nextReport(w, deviceId);
      reportedAt.set(key, epochMs());
      await admin(server, 'POST', `/devices/${deviceId}/report`, report);
    });
    previous.set(deviceId, sent);
    return sent;
  });
  return reportedAt;
}

/** Bodies of the report's size POSTed at `rate`/s for `seconds` through `sender`; when each was sent, by key. */
async function pacedPosts(sender: Sender, receiver: Receiver, bodies: string[], rate: number, seconds: number): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  await paced(rate, seconds, async (i) => {
    const body = bodies[i % bodies.length]!;
    const key = `${(JSON.parse(body) as { event: { deviceId: string } }).event.deviceId}:raw-${i}`;
    sentAt.set(key, epochMs());
    await sender.send(receiver.url, { 'webhook-id': randomId(16), 'webhook-sequence': `raw-${i}` }, body);
  });
  return sentAt;
}

/**
 * Reports at `rate`/s through the admin API for `seconds`; each one's report-to-arrival time, and the
 * raw POST's at that rate. Each is measured after `warmupSeconds` of the same load, as the HTTP
 * scenarios are: unwarmed, the first half second measured the admin route's first compilation and
 * the load generator's new connections (p99 of hundreds of ms there, against 15–20 after).
 */
async function latency(server: ServerUnderTest, receiver: Receiver, w: World, rate: number, seconds: number, warmupSeconds: number): Promise<Figure[]> {
  const warmedUp = await pacedReports(server, w, rate, warmupSeconds);
  await until('the warm-up reports to arrive', async () => (await receiver.count()) >= warmedUp.size);
  await receiver.take();
  const cpuBefore = cpuSecondsOf(server.pid);
  const reportedAt = await pacedReports(server, w, rate, seconds);
  await until('the paced reports to arrive', async () => (await receiver.count()) >= reportedAt.size);
  const cpuUsPerReport = round(((cpuSecondsOf(server.pid) - cpuBefore) * 1e6) / reportedAt.size, 1);
  const arrivals = await receiver.take();
  checkNoLoss(`the reports at ${rate}/s`, reportedAt.keys(), arrivals);
  const ours = [...reportedAt].map(([key, at]) => arrivals[key]! - at);

  // The baseline: bodies of the same size POSTed at the same pace, from the call to the receiver's
  // arrival, by one sender warmed up as the server's is (its connections open).
  const bodies = sampleBodies(w, 100);
  const sender = createSender({ phase: 'QA', allowList: [] });
  let sentAt: Map<string, number>;
  try {
    await pacedPosts(sender, receiver, bodies, rate, warmupSeconds);
    await receiver.take();
    sentAt = await pacedPosts(sender, receiver, bodies, rate, seconds);
  } finally {
    await sender.close();
  }
  const rawArrivals = await receiver.take();
  const raw = [...sentAt].map(([key, at]) => (rawArrivals[key] ?? Number.NaN) - at).filter((ms) => !Number.isNaN(ms));

  const details = { rate, seconds, warmupSeconds, devices: w.devices.length, messages: reportedAt.size, lost: 0, cpuUsPerReport, path: 'POST /admin/devices/{id}/report → receiver' };
  return [50, 99].map((p) =>
    ceilingFigure(`report-to-delivery latency p${p} at ${rate} reports/s`, 'ms', round(percentile(ours, p)), p === 50 ? 5 : 25, {
      label: `raw POST at ${rate}/s, p${p}`,
      value: round(percentile(raw, p)),
    }, details),
  );
}

/** The drain by `nodes` servers on `database`, seeded afresh, then (on SQLite) the latencies. */
async function onDatabase(entry: string, receiver: Receiver, database: BenchDatabase, nodes: number, latencyWarmupSeconds: number | null): Promise<{ drained: Drain; latencies: Figure[]; w: World; backlog: number }> {
  const devices = setting('BENCH_DEVICES', 1000);
  const backlog = setting('BENCH_BACKLOG', 10_000);
  const w = await seed(database, devices, backlog, setting('BENCH_WARMUP_BACKLOG', 5_000, 0), receiver.url);
  const expected = expectedOf(w);
  const servers: ServerUnderTest[] = [];
  try {
    for (let i = 0; i < nodes; i++) servers.push(await startServer(entry, '', { DATABASE_URL: database.url, PHASE }));
    await warmUp(servers, receiver, w);
    const drained = await drain(servers, receiver, w, expected, database.kind);
    const latencies: Figure[] = [];
    if (latencyWarmupSeconds !== null) {
      const seconds = setting('BENCH_SECONDS', 5);
      // Issue 7's rate, and a light one that shows the pipeline's own latency when nothing queues.
      latencies.push(...(await latency(servers[0]!, receiver, w, setting('BENCH_RATE', 1000), seconds, latencyWarmupSeconds)));
      latencies.push(...(await latency(servers[0]!, receiver, w, setting('BENCH_LIGHT_RATE', 100), seconds, latencyWarmupSeconds)));
    }
    return { drained, latencies, w, backlog: expected.length };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

function drainFigure(label: string, drained: Drain, raw: { perSecond: number; cpuUsPerDelivery: number }, details: Record<string, unknown>, nodes: number | null): Figure {
  // Issue 16's targets are absolute: 10,000/s on SQLite, 5,000/s per PostgreSQL node.
  const least = nodes === null ? 10_000 : 5_000 * nodes;
  return {
    figure: `deliveries/s (backlog drained, ${label})`,
    unit: 'deliveries/s',
    value: round(drained.perSecond, 0),
    baseline: { label: `raw POST loop, ${DEFAULT_TUNING.perEndpointLimit} in flight`, value: round(raw.perSecond, 0) },
    ratio: round(drained.perSecond / raw.perSecond, 3),
    target: nodes === null ? '≥ 10,000 deliveries/s (issue 16)' : `≥ 5,000 deliveries/s per node (issue 16)${nodes > 1 ? `: ${least.toLocaleString('en')}` : ''}`,
    met: drained.perSecond >= least,
    details: { ...details, ...drained, rawCpuUsPerDelivery: raw.cpuUsPerDelivery },
  };
}

async function run(settings: { serverEntry: string; warmupSeconds: number }): Promise<Figure[]> {
  const receiver = await startReceiver();
  const figures: Figure[] = [];
  try {
    const sqlite = sqliteDatabase();
    try {
      const { drained, latencies, w, backlog } = await onDatabase(settings.serverEntry, receiver, sqlite, 1, settings.warmupSeconds);
      const raw = await rawLoop(receiver.url, sampleBodies(w, backlog), DEFAULT_TUNING.perEndpointLimit);
      await receiver.take();
      figures.push(drainFigure('SQLite', drained, raw, { devices: w.devices.length, backlog, warmUpBacklog: w.warmUp?.expected.length ?? 0 }, null), ...latencies);
    } finally {
      await sqlite.remove();
    }
    const postgres = postgresAdminUrl();
    if (postgres) {
      for (const nodes of [1, 2]) {
        const database = await postgresDatabase(postgres);
        try {
          const { drained, w, backlog } = await onDatabase(settings.serverEntry, receiver, database, nodes, null);
          const raw = await rawLoop(receiver.url, sampleBodies(w, backlog), DEFAULT_TUNING.perEndpointLimit);
          await receiver.take();
          const label = `PostgreSQL, ${nodes} node${nodes > 1 ? 's' : ''}`;
          figures.push(drainFigure(label, drained, raw, { devices: w.devices.length, backlog, warmUpBacklog: w.warmUp?.expected.length ?? 0, nodes }, nodes));
          if (drained.statementsPerDelivery !== null) {
            figures.push(ceilingFigure(`SQL statements per delivery (${label})`, 'statements', drained.statementsPerDelivery, CONVOY_STATEMENTS, null, { anchor: 'Convoy, ~32 per event (issue 6)' }));
          }
        } finally {
          await database.remove();
        }
      }
    }
    return figures;
  } finally {
    receiver.close();
  }
}

/** For bench/run.ts: any bench/*.ts exporting `scenario` is one of its scenarios. */
export const scenario: Scenario = {
  number: 4,
  name: 'delivery',
  title: 'Event pipeline: reports of subscribed devices delivered by serve to a local receiver (SQLite; PostgreSQL with DATABASE_URL=postgres://…)',
  conditions: {
    ...SERVER_CONDITIONS,
    PHASE,
    DATABASE_URL: 'sqlite file (WAL, synchronous=FULL); a fresh PostgreSQL database when DATABASE_URL=postgres://…',
    receiver: 'node:http in a child process, 204 at once',
  },
  run,
};

if (process.argv.includes('--receiver')) runReceiver();
