/**
 * Retention (DESIGN J, issue 12): the claim cost does not grow with history. On each database, two
 * stores with the same world: one whose outbox holds no history, one holding 1,000,000 delivered
 * messages (with their attempts) on the same device queues, as a deployment keeps for a week.
 * Each round records one push per device on both (not timed), then drains both as the dispatcher
 * does, a batch of each in turn: claim a batch, record every attempt delivered (timed). The figure is
 * deliveries/s with the history over deliveries/s without, paired by round; the CPU time per delivery
 * of this process (all of SQLite's work) is in the details. After the rounds, the retention sweep
 * deletes part of the history in its batches of 1,000 (its rate is in the details too).
 *
 * SQLite is a temp file as shipped (WAL, synchronous=FULL); PostgreSQL is a fresh database on the
 * server of DATABASE_URL when that is postgres://…, else the local one, skipped if it does not answer.
 * BENCH_HISTORY sets the history's size (1,000,000). No HTTP: what is measured is the store's SQL.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { RETENTION_BATCH } from '../src/delivery/retention.js';
import { openStore } from '../src/store/index.js';
import { CLOSED } from '../src/store/sqlite/sqlite-outbox.js';
import type { Store } from '../src/store/store.js';
import { deliveredAttempt } from './lib/attempts.js';
import { median, ratioFigure, type BenchSettings, type Figure, type Scenario } from './lib/scenario.js';

const HISTORY = Number(process.env.BENCH_HISTORY || 1_000_000);
/** Live devices, one push each per round: the queues the claims walk, and those the history fills. */
const DEVICES = 2_000;
const BATCH = 100;
/** Batches of the history the sweep deletes after the rounds, timed. */
const SWEEP_BATCHES = 50;
const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
/** A DEVICE_PUSH body of the size the store writes. */
const BODY = JSON.stringify({
  messageId: 'AZQ3xTq1dW2f0sVQ8m4hPg',
  timestamp: '2026-01-01T00:00:00.000000',
  push: { pushType: 'DEVICE_PUSH', serviceId: 'S1', deviceId: 'D0', pushCode: 'WASHING_IS_COMPLETE', deviceType: 'DEVICE_WASHER', userList: ['U1'] },
});

/** One attempt for each message of the history. */
const ATTEMPTS = `INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms, response_status, response_body, error)
  SELECT message_id, 1, created_at, 5, 200, '', NULL FROM outbox WHERE status = 'delivered'`;
const VACUUM = 'VACUUM ANALYZE outbox, delivery_attempts, message_sequences';
/** Each queue's numbers continue after its history (the world itself recorded no message). */
const SEQUENCES = `INSERT INTO message_sequences (service_id, device_id, last_sequence)
  SELECT service_id, device_id, max(sequence) FROM outbox GROUP BY service_id, device_id`;

interface BenchDatabase {
  url: string;
  /** Writes HISTORY delivered messages, each with one attempt, on the world's queues, all created a month ago (PostgreSQL: then analyzes both). */
  fillHistory(): Promise<void>;
}

/** Two databases of one kind holding the same seeded world: the one without history, and the one to fill. */
interface DatabasePair {
  kind: 'SQLite' | 'PostgreSQL';
  empty: BenchDatabase;
  history: BenchDatabase;
  remove(): Promise<void>;
}

/** Temp files as shipped (WAL, synchronous=FULL); the second is a copy of the first once seeded. */
async function sqlitePair(): Promise<DatabasePair> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-retention-'));
  const [empty, history] = [join(dir, 'empty.db'), join(dir, 'history.db')];
  await seeded(`sqlite:${empty}`);
  copyFileSync(empty, history);
  const database = (file: string): BenchDatabase => ({
    url: `sqlite:${file}`,
    async fillHistory() {
      const db = new Database(file);
      try {
        db.transaction(() => {
          db.prepare(
            `WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
             INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts, next_attempt_at, created_at, delivered_at, queue_head)
             SELECT printf('history-%08d', i), 'S1', 'D' || (i % ?), 'push', 'DEVICE_PUSH', i / ? + 1, ?, 'delivered', 1, ? + i, ? + i, ? + i, ${CLOSED} FROM n`,
          ).run(HISTORY, DEVICES, DEVICES, BODY, T0 - 30 * DAY, T0 - 30 * DAY, T0 - 30 * DAY);
          db.prepare(ATTEMPTS).run();
          db.prepare(SEQUENCES).run();
        })();
      } finally {
        db.close();
      }
    },
  });
  return { kind: 'SQLite', empty: database(empty), history: database(history), remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** Fresh databases on the server of `adminUrl`, the second made from the first once seeded (names generated, so spliced into the SQL). */
async function postgresPair(adminUrl: string): Promise<DatabasePair> {
  const names = [`bench_retention_${randomBytes(6).toString('hex')}`, `bench_retention_${randomBytes(6).toString('hex')}`] as const;
  const urlOf = (name: string) => Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${names[0]}`));
  await seeded(urlOf(names[0]));
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${names[1]} TEMPLATE ${names[0]}`));
  const database = (url: string): BenchDatabase => ({
    url,
    async fillHistory() {
      await withClient(url, async (c) => {
        await c.query(
          `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts, next_attempt_at, created_at, delivered_at)
           SELECT 'history-' || lpad(i::text, 8, '0'), 'S1', 'D' || (i % $2), 'push', 'DEVICE_PUSH', i / $2 + 1, $3, 'delivered', 1,
                  $4::double precision + i, $4::double precision + i, $4::double precision + i
           FROM generate_series(0, $1 - 1) AS i`,
          [HISTORY, DEVICES, BODY, T0 - 30 * DAY],
        );
        await c.query(ATTEMPTS);
        await c.query(SEQUENCES);
      });
      // Statistics on both, as autovacuum would have gathered them by the time a week of history has.
      for (const name of names) await withClient(urlOf(name), (c) => c.query(VACUUM));
    },
  });
  return {
    kind: 'PostgreSQL',
    empty: database(urlOf(names[0])),
    history: database(urlOf(names[1])),
    remove: async () => {
      for (const name of names) await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs `fn` for 0 … count - 1, `size` at a time: concurrent enough to share commits, not so much that a pool's queue times out. */
async function inChunks(count: number, size: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  for (let first = 0; first < count; first += size) {
    await Promise.all(Array.from({ length: Math.min(size, count - first) }, (_, k) => fn(first + k)));
  }
}

/** Migrates the database at `url` and seeds one service listening to DEVICES washers of one user, each with a push subscription. */
async function seeded(url: string): Promise<void> {
  const store = await openStore(url);
  try {
    await store.createService(
      { serviceId: 'S1', name: 'Bench', keyHash: 'hash', allowedDevices: ['DEVICE_WASHER'], callbackUrl: 'https://bench.example/push', eventCallbackUrl: null, webhookSecret: 'whsec_bench' },
      T0,
    );
    await store.createUser({ userNumber: 'U1', countryCode: 'KR', createdAt: T0 });
    await store.createToken({ tokenHash: 'tok', serviceId: 'S1', userNumber: 'U1', expiresAt: T0 + DAY }, T0);
    await inChunks(DEVICES, 10, async (i) => {
      const deviceId = `D${i}`;
      await store.registerDevice(
        { deviceId, deviceType: 'DEVICE_WASHER', modelName: 'M', alias: deviceId, groupId: null, secretHash: 'h', virtual: true, online: true, status: {} },
        'U1',
        T0,
      );
      await store.addPushSubscription('S1', 'U1', deviceId, T0);
    });
  } finally {
    await store.close();
  }
}

interface Round {
  deliveriesPerSecond: number;
  /** This process's CPU time per delivery: all of SQLite's work, only the client's for PostgreSQL. */
  cpuMicrosPerDelivery: number;
}

/** What one store spent draining its outbox so far. */
interface Drain {
  store: Store;
  delivered: number;
  ms: number;
  cpuMicros: number;
  done: boolean;
}

/** Claims one batch and records every attempt delivered, timed. */
async function batch(d: Drain, now: number): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const claimed = await d.store.claimDeliveries({ owner: 'bench', now, leaseMs: 30_000, limit: BATCH, perEndpointLimit: BATCH, inFlight: {} });
  const attempts = claimed.map((c) => deliveredAttempt(c, now));
  d.delivered += (await d.store.recordAttempts(attempts, now + 1, 5 * DAY)).filter((s) => s === 'delivered').length;
  d.ms += performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  d.cpuMicros += user + system;
  d.done = claimed.length === 0;
}

/**
 * One push per device on each store (not timed), then both drained batch by batch in turn, each batch
 * timed: the machine's noise, which comes and goes within a second, falls on both alike.
 */
async function round(stores: Store[], n: number): Promise<Round[]> {
  const at = T0 + n * 60_000;
  for (const store of stores) await inChunks(DEVICES, 10, (i) => store.recordPush(`D${i}`, 'WASHING_IS_COMPLETE', at));
  const drains: Drain[] = stores.map((store) => ({ store, delivered: 0, ms: 0, cpuMicros: 0, done: false }));
  for (let turn = 0; drains.some((d) => !d.done); turn++) {
    // Each goes first every other turn, so that neither always runs on the other's leftovers.
    for (const d of turn % 2 ? [...drains].reverse() : drains) if (!d.done) await batch(d, at + 1000);
  }
  return drains.map((d) => {
    if (d.delivered !== DEVICES) throw new Error(`delivered ${d.delivered} of ${DEVICES}`);
    return { deliveriesPerSecond: d.delivered / (d.ms / 1000), cpuMicrosPerDelivery: d.cpuMicros / d.delivered };
  });
}

/** Both stores of one database kind, measured side by side; the figure is history over empty, paired by round. */
async function onDatabase(pair: DatabasePair, settings: BenchSettings): Promise<Figure> {
  const stores: Store[] = [];
  try {
    const filling = performance.now();
    await pair.history.fillHistory();
    const fillSeconds = (performance.now() - filling) / 1000;
    const [empty, history] = [await openStore(pair.empty.url), await openStore(pair.history.url)];
    stores.push(empty, history);
    await round(stores, 0);
    const rounds: { empty: Round; history: Round }[] = [];
    for (let n = 1; n <= settings.rounds; n++) {
      const [e, h] = (await round(stores, n)) as [Round, Round];
      rounds.push({ empty: e, history: h });
    }
    const rate = (r: Round) => r.deliveriesPerSecond;
    const cpu = (r: Round) => r.cpuMicrosPerDelivery;

    const sweeping = performance.now();
    let swept = 0;
    for (let b = 0; b < SWEEP_BATCHES; b++) swept += await history.deleteOldMessages(T0 - DAY, RETENTION_BATCH);
    const sweepSeconds = (performance.now() - sweeping) / 1000;

    return ratioFigure({
      figure: `claim + record, deliveries/s with ${HISTORY.toLocaleString('en')} delivered messages of history (${pair.kind})`,
      unit: 'deliveries/s',
      value: median(rounds.map((r) => rate(r.history))),
      baseline: { label: 'no history', value: median(rounds.map((r) => rate(r.empty))) },
      ratio: median(rounds.map((r) => rate(r.history) / rate(r.empty))),
      minRatio: 0.9,
      target: '≥ 0.9 × no history',
      details: {
        devices: DEVICES,
        batch: BATCH,
        perRound: rounds.map((r) => ({ empty: Math.round(rate(r.empty)), history: Math.round(rate(r.history)) })),
        // Steadier than the rate on a shared machine: CPU per delivery without history over with it.
        cpuMicrosPerDelivery: { empty: Math.round(median(rounds.map((r) => cpu(r.empty)))), history: Math.round(median(rounds.map((r) => cpu(r.history)))) },
        cpuRatio: Number(median(rounds.map((r) => cpu(r.empty) / cpu(r.history))).toFixed(2)),
        historyFillSeconds: Number(fillSeconds.toFixed(1)),
        sweep: { deleted: swept, batch: RETENTION_BATCH, messagesPerSecond: Math.round(swept / sweepSeconds), msPerBatch: Number(((sweepSeconds * 1000) / SWEEP_BATCHES).toFixed(1)) },
      },
    });
  } finally {
    for (const store of stores) await store.close();
    await pair.remove();
  }
}

async function run(settings: BenchSettings): Promise<Figure[]> {
  const figures = [await onDatabase(await sqlitePair(), settings)];
  const server = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/postgres';
  const reachable = await withClient(server, (c) => c.query('SELECT 1')).then(
    () => true,
    (error: unknown) => {
      console.log(`   PostgreSQL at ${new URL(server).host} does not answer (${String(error)}): its figure is skipped.`);
      return false;
    },
  );
  if (reachable) figures.push(await onDatabase(await postgresPair(server), settings));
  return figures;
}

/** For bench/run.ts: any bench/*.ts exporting `scenario` is one of its scenarios. */
export const scenario: Scenario = {
  number: 7,
  name: 'retention',
  title: `Retention: claim and record with ${HISTORY.toLocaleString('en')} delivered messages of history against none (SQLite, PostgreSQL)`,
  conditions: {
    DATABASE_URL: 'a sqlite file (WAL, synchronous=FULL); a fresh PostgreSQL database (DATABASE_URL=postgres://…, else the local server)',
    workload: `${DEVICES.toLocaleString('en')} devices, one push each per round, claimed and recorded in batches of ${BATCH}`,
  },
  run,
};
