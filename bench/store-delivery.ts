/**
 * Store-only delivery (issue 6; SQLite with --sqlite, issue 16): claims and records outcomes in
 * batches as the dispatcher does, with no HTTP and no signing, so that what is measured is the
 * store's SQL. Not a `npm run bench` scenario (it has no HTTP baseline); run it on its own:
 *
 *   node --import tsx bench/store-delivery.ts [--messages 2000] [--per-device 1] [--batch 100] [--rounds 3] [--against <tree>] [--sqlite] [--together] [--reports]
 *
 * Each round records `per-device` pushes for each of `messages` devices (queues that the claim must
 * take in order, as the serve scenario's backlog of 10 per device), then drains them: claim a batch, record
 * every attempt as delivered, until nothing is left. It reports deliveries/s, this process's CPU per
 * delivery, and SQL statements per delivery (claim + record). `--together` records each batch and
claims the next in one transaction (recordAndClaim), as the dispatcher does under load. `--against <tree>` runs the same rounds,
 * alternating, on the store of another checkout (e.g. `git archive HEAD src | tar -x -C /tmp/before`
 * with node_modules linked): a before/after comparison in one run. The server is DATABASE_URL when it
 * is postgres://…, else the local one; each store gets a database of its own, dropped at the end.
 * With --sqlite each store gets a SQLite file of its own in a temp directory instead.
 *
 * `--reports` times the other end instead (issue 16, the control's and MQTT ingest's store work):
 * each device reports `per-device` status changes, `batch` reports asked for at once as requests
 * arriving together do (one group commit on SQLite), each recording a DEVICE_STATUS event; the
 * drain is then not timed. Figures are then per report.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { Store } from '../src/store/store.js';
import { deliveredAttempt } from './lib/attempts.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    'per-device': { type: 'string', default: '1' },
    batch: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    against: { type: 'string' },
    sqlite: { type: 'boolean', default: false },
    together: { type: 'boolean', default: false },
    reports: { type: 'boolean', default: false },
  },
});
const DEVICES = Number(values.messages);
const PER_DEVICE = Number(values['per-device']);
const MESSAGES = DEVICES * PER_DEVICE;
const BATCH = Number(values.batch);
const ROUNDS = Number(values.rounds);
const SERVER = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/postgres';
const T0 = Date.UTC(2026, 0, 1);

type OpenStore = (databaseUrl: string) => Promise<Store>;

interface Contender {
  label: string;
  store: Store;
  drop: () => Promise<void>;
  rounds: Round[];
}

/** Per delivery, or per report with --reports. */
interface Round {
  perSecond: number;
  cpuMicros: number;
  statements: number | null;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new database of the server, or a new SQLite file with --sqlite; and how to remove it. */
async function database(): Promise<{ url: string; remove: () => Promise<void> }> {
  if (values.sqlite) {
    const dir = mkdtempSync(join(tmpdir(), 'store-delivery-'));
    return { url: `sqlite:${join(dir, 'bench.db')}`, remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `ac_bench_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return { url: url.toString(), remove: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined) };
}

/** A store on a new database, with one service listening to `DEVICES` devices of one user. */
async function contender(label: string, openStore: OpenStore): Promise<Contender> {
  const db = await database();
  const store = await openStore(db.url);
  await store.createService(
    {
      serviceId: 'S1',
      name: 'Bench',
      keyHash: 'hash',
      allowedDevices: ['DEVICE_WASHER'],
      callbackUrl: 'https://bench.example/push',
      eventCallbackUrl: null,
      webhookSecret: 'whsec_bench',
    },
    T0,
  );
  await store.createUser({ userNumber: 'U1', countryCode: 'KR', createdAt: T0 });
  await store.createToken({ tokenHash: 'tok', serviceId: 'S1', userNumber: 'U1', expiresAt: T0 + 86_400_000 }, T0);
  for (let i = 0; i < DEVICES; i++) {
    const deviceId = `D${i}`;
    await store.registerDevice(
      { deviceId, deviceType: 'DEVICE_WASHER', modelName: 'M', alias: deviceId, groupId: null, secretHash: 'h', virtual: true, online: true, status: {} },
      'U1',
      T0,
    );
    await store.addPushSubscription('S1', 'U1', deviceId, T0);
    if (values.reports) await store.upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt: T0 + 365 * 86_400_000 }, T0, DEVICES);
  }
  const drop = async () => {
    await store.close();
    await db.remove();
  };
  return { label, store, drop, rounds: [] };
}

/** Timed with --reports: PER_DEVICE status changes of each device, BATCH asked for at once. Else recorded as pushes, not timed. */
async function record(c: Contender, at: number): Promise<Round | undefined> {
  if (!values.reports) {
    for (let k = 0; k < PER_DEVICE; k++) for (let i = 0; i < DEVICES; i++) await c.store.recordPush(`D${i}`, 'WASHING_IS_COMPLETE', at);
    return undefined;
  }
  const reports: Array<() => Promise<number>> = [];
  for (let k = 0; k < PER_DEVICE; k++) {
    const status = { state: { runState: k % 2 === 0 ? 'RUNNING' : 'PAUSE' } };
    for (let i = 0; i < DEVICES; i++) reports.push(() => c.store.applyReport(`D${i}`, status, status, at));
  }
  return measure(c, MESSAGES, async () => {
    for (let i = 0; i < reports.length; i += BATCH) await Promise.all(reports.slice(i, i + BATCH).map((report) => report()));
  });
}

/** Claims and records until the outbox is drained: timed, unless --reports timed the recording. */
async function drain(c: Contender, at: number): Promise<Round> {
  let delivered = 0;
  const now = at + 1000;
  const request = { owner: 'bench', now, leaseMs: 3_600_000, limit: BATCH, perEndpointLimit: BATCH, inFlight: {} };
  const round = await measure(c, MESSAGES, async () => {
    let claimed = await c.store.claimDeliveries(request);
    while (claimed.length > 0) {
      const attempts = claimed.map((d) => deliveredAttempt(d, now));
      let statuses;
      if (values.together) ({ statuses, claimed } = await c.store.recordAndClaim(attempts, now + 1, 5 * 86_400_000, request));
      else {
        statuses = await c.store.recordAttempts(attempts, now + 1, 5 * 86_400_000);
        claimed = await c.store.claimDeliveries(request);
      }
      delivered += statuses.filter((s) => s === 'delivered').length;
    }
  });
  if (delivered !== MESSAGES) throw new Error(`${c.label}: delivered ${delivered} of ${MESSAGES}`);
  return round;
}

async function measure(c: Contender, count: number, work: () => Promise<void>): Promise<Round> {
  const statementsBefore = c.store.capabilities.statementCounts?.statementsSent();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const statementsAfter = c.store.capabilities.statementCounts?.statementsSent();
  return {
    perSecond: count / seconds,
    cpuMicros: (cpu.user + cpu.system) / count,
    statements: statementsBefore === undefined || statementsAfter === undefined ? null : (statementsAfter - statementsBefore) / count,
  };
}

async function round(c: Contender, n: number): Promise<Round> {
  const at = T0 + n * 60_000;
  const recorded = await record(c, at);
  const drained = await drain(c, at);
  return recorded ?? drained;
}

async function storeOpener(tree: string): Promise<OpenStore> {
  const module = (await import(pathToFileURL(resolve(tree, 'src/store/index.ts')).href)) as { openStore: OpenStore };
  return module.openStore;
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const contenders = [await contender('this tree', await storeOpener('.'))];
if (values.against) contenders.push(await contender(values.against, await storeOpener(values.against)));
try {
  // A warm-up round each, then measured rounds in turn so that load from elsewhere hits all alike.
  for (const c of contenders) await round(c, 0);
  for (let n = 1; n <= ROUNDS; n++) for (const c of contenders) c.rounds.push(await round(c, n));
  const unit = values.reports ? 'report' : 'delivery';
  console.log(`${MESSAGES} messages per round (${PER_DEVICE} per device), batches of ${BATCH}, ${ROUNDS} rounds, per ${unit}; medians:`);
  for (const c of contenders) {
    const statements = c.rounds.map((r) => r.statements);
    console.log(
      JSON.stringify({
        store: c.label,
        perSecond: Math.round(median(c.rounds.map((r) => r.perSecond))),
        cpuMicros: Math.round(median(c.rounds.map((r) => r.cpuMicros)) * 10) / 10,
        statements: statements.every((s) => s !== null) ? median(statements) : 'not counted by this store',
        perRound: c.rounds.map((r) => Math.round(r.perSecond)),
      }),
    );
  }
} finally {
  for (const c of contenders) await c.drop();
}
