/**
 * Delivery benchmark (issue 4; issue 7's event pipeline): DEVICE_STATUS events of subscribed devices
 * delivered to a local receiver, on a SQLite file, against a baseline measured in the same run — a
 * raw loop POSTing the same bodies through the same undici sender to the same receiver.
 *
 * - deliveries/s: a backlog of reports already in the outbox, drained by the dispatcher, vs the raw
 *   loop at the same concurrency;
 * - report-to-delivery latency p50/p99 at a steady report rate (issue 7's 1,000/s, and a light 100/s),
 *   vs the raw POST's latency at that rate.
 *
 * `node --import tsx bench/delivery.ts` writes bench/results/delivery.json; `npm run bench -- delivery`
 * runs it as a scenario of bench/run.ts. The receiver is a child process, so that it does not share
 * the dispatcher's event loop. BENCH_DEVICES (1000), BENCH_BACKLOG (10000), BENCH_RATE (1000 reports/s),
 * BENCH_LIGHT_RATE (100 reports/s) and BENCH_SECONDS (5) tune it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.js';
import { createContext, type AppContext } from '../src/context.js';
import { DEFAULT_TUNING, startDelivery } from '../src/delivery/index.js';
import { createSender } from '../src/delivery/sender.js';
import { randomId, systemClock } from '../src/ids.js';
import { openStore } from '../src/store/index.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const STRENGTHS = ['HIGH', 'LOW', 'MID', 'TURBO'];

interface Figure {
  figure: string;
  value: number;
  unit: string;
  baseline: { label: string; value: number };
  ratio: number;
  target: string;
  met: boolean;
  details?: Record<string, unknown>;
}

/** Arrival times (epoch ms) at the receiver, by `deviceId:sequence`. */
type Arrivals = Record<string, number>;

function setting(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number`);
  return value;
}

const epochMs = (): number => performance.timeOrigin + performance.now();

// ---- the receiver, in its own process ----

/** Answers 204 at once and notes when each message arrived; hands the notes over on request. */
function runReceiver(): void {
  let arrivals: Arrivals = {};
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const at = epochMs();
      const { event } = JSON.parse(body) as { event: { deviceId: string } };
      arrivals[`${event.deviceId}:${String(request.headers['webhook-sequence'])}`] = at;
      response.writeHead(204).end();
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

interface ReceiverHandle {
  url: string;
  /** The arrivals since the last call. */
  take(): Promise<Arrivals>;
  count(): Promise<number>;
  close(): void;
}

async function startReceiverProcess(): Promise<ReceiverHandle> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--receiver'], { cwd: ROOT, execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve((m as { port: number }).port)));
  let seen: Arrivals = {};
  const take = async (): Promise<Arrivals> => {
    const fresh = await new Promise<Arrivals>((resolve) => {
      child.once('message', (m) => resolve((m as { arrivals: Arrivals }).arrivals));
      child.send('take');
    });
    seen = { ...seen, ...fresh };
    return fresh;
  };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    take: async () => {
      await take();
      const all = seen;
      seen = {};
      return all;
    },
    count: async () => {
      await take();
      return Object.keys(seen).length;
    },
    close: () => child.kill(),
  };
}

// ---- the world: one service subscribed to the events of many ceiling fans ----

interface World {
  ctx: AppContext;
  serviceId: string;
  devices: string[];
  /** When each report call was made and when it returned, committed (epoch ms), by `deviceId:sequence`. */
  reportedAt: Map<string, number>;
  returnedAt: Map<string, number>;
  /** Each device's last sequence and wind strength. */
  sequences: Map<string, number>;
  strengths: Map<string, string>;
  close(): Promise<void>;
}

async function world(devices: number, callbackUrl: string): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-delivery-'));
  const store = await openStore(`sqlite:${join(dir, 'bench.db')}`);
  const config = loadConfig('test', { DELIVERY_RETRY_SCHEDULE: '1s,5s' });
  const ctx = createContext(config, store, systemClock, { real: { sendCommand: async () => ({ ok: false, code: '2209', message: 'no devices in the bench' }) } });
  const { service } = await ctx.accounts.createService({ name: 'bench', allowedDevices: ['DEVICE_CEILING_FAN'], callbackUrl });
  const user = await ctx.accounts.createUser('KR');
  await ctx.accounts.issueToken(user.userNumber, service.serviceId);
  const ids: string[] = [];
  const strengths = new Map<string, string>();
  for (let i = 0; i < devices; i++) {
    const { device } = await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_CEILING_FAN', alias: `Fan ${i}`, virtual: false });
    const { status } = await ctx.devices.state(device.deviceId);
    strengths.set(device.deviceId, (status as { airFlow: { windStrength: string } }).airFlow.windStrength);
    await store.upsertEventSubscription({ serviceId: service.serviceId, userNumber: user.userNumber, deviceId: device.deviceId, expiresAt: Date.now() + 86_400_000 }, Date.now(), devices + 1);
    ids.push(device.deviceId);
  }
  return {
    ctx,
    serviceId: service.serviceId,
    devices: ids,
    reportedAt: new Map(),
    returnedAt: new Map(),
    sequences: new Map(),
    strengths,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One report that changes the fan's wind strength: exactly one DEVICE_STATUS for the service. */
async function report(w: World, deviceId: string): Promise<void> {
  const sequence = (w.sequences.get(deviceId) ?? 0) + 1;
  w.sequences.set(deviceId, sequence);
  const windStrength = STRENGTHS[(STRENGTHS.indexOf(w.strengths.get(deviceId) ?? '') + 1) % STRENGTHS.length]!;
  w.strengths.set(deviceId, windStrength);
  const key = `${deviceId}:${sequence}`;
  w.reportedAt.set(key, epochMs());
  await w.ctx.devices.report(deviceId, { airFlow: { windStrength } });
  w.returnedAt.set(key, epochMs());
}

async function until(what: string, done: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
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

// ---- the measurements ----

/** The dispatcher drains a backlog of `backlog` events; then the raw loop sends the same bodies. */
async function throughput(receiver: ReceiverHandle, devices: number, backlog: number): Promise<Figure> {
  const w = await world(devices, receiver.url);
  for (let i = 0; i < backlog; i++) await report(w, w.devices[i % devices]!);
  const bodies = (await w.ctx.store.listMessages(w.serviceId, { limit: backlog })).map((m) => m.body);
  await receiver.take();

  const started = performance.now();
  const delivery = await startDelivery({ store: w.ctx.store, clock: systemClock, config: w.ctx.config });
  await until('the backlog to drain', async () => (await receiver.count()) >= backlog);
  const seconds = (performance.now() - started) / 1000;
  await delivery.stop();
  const lost = backlog - Object.keys(await receiver.take()).length;
  await w.close();

  const rawSeconds = await rawLoop(receiver.url, bodies, DEFAULT_TUNING.perEndpointLimit);
  await receiver.take();
  const value = backlog / seconds;
  const baseline = bodies.length / rawSeconds;
  return {
    figure: 'deliveries/s (backlog drained, SQLite)',
    value: round(value, 0),
    unit: 'deliveries/s',
    baseline: { label: `raw POST loop, ${DEFAULT_TUNING.perEndpointLimit} in flight`, value: round(baseline, 0) },
    ratio: round(value / baseline, 3),
    target: '≥ 5,000 deliveries/s (issue 7)',
    met: value >= 5_000,
    details: { devices, backlog, seconds: round(seconds, 3), lost },
  };
}

/** POSTs every body through one sender with `concurrency` in flight; returns the seconds taken. */
async function rawLoop(url: string, bodies: string[], concurrency: number): Promise<number> {
  const sender = createSender({ phase: 'QA', allowList: [], connectionsPerOrigin: DEFAULT_TUNING.maxInFlight });
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const sequence = String(next);
      await sender.send(url, { 'webhook-id': randomId(16), 'webhook-sequence': sequence }, body);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  await sender.close();
  return seconds;
}

/** Reports at `rate`/s for `seconds` with the dispatcher running; each one's report-to-arrival time. */
async function latency(receiver: ReceiverHandle, devices: number, rate: number, seconds: number): Promise<Figure[]> {
  const w = await world(devices, receiver.url);
  await receiver.take();
  const delivery = await startDelivery({ store: w.ctx.store, clock: systemClock, config: w.ctx.config });
  await paced(rate, seconds, (i) => report(w, w.devices[i % devices]!));
  const expected = w.reportedAt.size;
  await until('the paced reports to arrive', async () => (await receiver.count()) >= expected);
  await delivery.stop();
  const arrivals = await receiver.take();
  const since = (times: Map<string, number>) => [...times].map(([key, at]) => (arrivals[key] ?? Number.NaN) - at).filter((ms) => !Number.isNaN(ms));
  const ours = since(w.reportedAt);
  // Roughly the delivery engine's share: from when the report call returned (its write committed) to the arrival.
  const afterReturn = since(w.returnedAt);
  const bodies = (await w.ctx.store.listMessages(w.serviceId, { limit: 10 })).map((m) => m.body);
  await w.close();

  // The baseline: the same bodies POSTed at the same pace, from the call to the receiver's arrival.
  const sender = createSender({ phase: 'QA', allowList: [] });
  const sentAt = new Map<string, number>();
  await paced(rate, seconds, async (i) => {
    const body = bodies[i % bodies.length]!;
    const key = `${(JSON.parse(body) as { event: { deviceId: string } }).event.deviceId}:raw-${i}`;
    sentAt.set(key, epochMs());
    await sender.send(receiver.url, { 'webhook-id': randomId(16), 'webhook-sequence': `raw-${i}` }, body);
  });
  await sender.close();
  const rawArrivals = await receiver.take();
  const raw = [...sentAt].map(([key, at]) => (rawArrivals[key] ?? Number.NaN) - at).filter((ms) => !Number.isNaN(ms));

  const details = {
    rate, seconds, devices, messages: expected, arrived: ours.length, lost: expected - ours.length,
    returnToDeliveryMs: { p50: round(percentile(afterReturn, 50)), p99: round(percentile(afterReturn, 99)) },
  };
  return [50, 99].map((p) => {
    const value = percentile(ours, p);
    const baseline = percentile(raw, p);
    const max = p === 50 ? 5 : 25;
    return {
      figure: `report-to-delivery latency p${p} at ${rate} reports/s`,
      value: round(value),
      unit: 'ms',
      baseline: { label: `raw POST at ${rate}/s, p${p}`, value: round(baseline) },
      ratio: round(value / baseline),
      target: `≤ ${max} ms (issue 7)`,
      met: value <= max,
      details,
    };
  });
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

async function run(): Promise<Figure[]> {
  const devices = setting('BENCH_DEVICES', 1000);
  const receiver = await startReceiverProcess();
  try {
    const drained = await throughput(receiver, devices, setting('BENCH_BACKLOG', 10_000));
    const seconds = setting('BENCH_SECONDS', 5);
    // Issue 7's rate, and a light one that shows the pipeline's own latency when nothing queues.
    const loaded = await latency(receiver, devices, setting('BENCH_RATE', 1000), seconds);
    const light = await latency(receiver, devices, setting('BENCH_LIGHT_RATE', 100), seconds);
    return [drained, ...loaded, ...light];
  } finally {
    receiver.close();
  }
}

/** For bench/run.ts: any bench/*.ts exporting `scenario` is one of its scenarios. */
export const scenario = {
  number: 4,
  name: 'delivery',
  title: 'Event pipeline: reports of subscribed devices delivered to a local receiver (SQLite)',
  conditions: { DATABASE_URL: 'sqlite file (WAL, synchronous=FULL)', receiver: 'node:http in a child process, 204 at once' },
  run,
};

if (process.argv.includes('--receiver')) {
  runReceiver();
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await run();
  const result = {
    scenario: scenario.name,
    title: scenario.title,
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model.trim() ?? 'unknown', cores: availableParallelism(), node: process.version },
    command: 'node --import tsx bench/delivery.ts',
    conditions: scenario.conditions,
    figures,
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'delivery.json'), `${JSON.stringify(result, null, 2)}\n`);
  for (const f of figures) {
    process.stdout.write(`${f.figure}: ${f.value} ${f.unit} (baseline ${f.baseline.value}, ratio ${f.ratio}; target ${f.target}: ${f.met ? 'met' : 'missed'})\n`);
  }
}
