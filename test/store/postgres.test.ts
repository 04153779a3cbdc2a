/**
 * The store contract on PostgreSQL, unchanged, with its side connection (faults, delivery states);
 * and what it cannot reach through the Store interface: migrations under concurrency, pool settings,
 * nodes racing on one database (sequences, limits, claims, notifications). Skipped, with a message
 * saying why, when PostgreSQL is not reachable.
 */
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerStoreMetrics } from '../../src/metrics.js';
import { openStore } from '../../src/store/index.js';
import { Sql } from '../../src/store/postgres/database.js';
import { loadMigrations, migrate } from '../../src/store/postgres/migrate.js';
import { openPool, poolSettings } from '../../src/store/postgres/pool.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, withClient, type TestDatabase } from '../helpers/postgres.js';
import { storeContract } from './contract.js';
import type { SideConnection } from './contract/side.js';
import { addDevice, addService, addUser, connect, HOUR, newDevice, recorded, T0 } from './contract/world.js';

/** S1 connected to U1 with devices D1–D3, each with one message waiting (its rename). */
async function threeQueues(store: Store): Promise<void> {
  await addService(store, 'S1');
  await addUser(store, 'U1');
  await connect(store, 'S1', 'U1');
  for (const deviceId of ['D1', 'D2', 'D3']) {
    await addDevice(store, deviceId, 'U1');
    await store.renameDevice(deviceId, 'Renamed', T0 + 1);
  }
}

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the PostgreSQL store tests: ${unreachable}`);

describe.skipIf(unreachable !== undefined)('PostgreSQL store', () => {
  // One database for this file; each store the contract opens starts with every table empty.
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
  });
  afterAll(() => db?.drop());

  const open = async (): Promise<Store> => {
    await db.reset();
    return openStore(db.url);
  };

  /** Another connection to the database, for one call: a fault, or the delivery engine. */
  const side = <T>(fn: (client: pg.Client) => Promise<T>) => withClient(db.url, fn);
  /** The connection holding a queue (holdQueue), until clear(). */
  let gate: pg.Client | undefined;
  const beside: SideConnection = {
    async failMessagesWhere(condition) {
      await side((c) =>
        c.query(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$;
                 CREATE TRIGGER injected_fault BEFORE INSERT ON outbox FOR EACH ROW WHEN (${condition}) EXECUTE FUNCTION injected_fault()`),
      );
    },
    async failEndpointLifts() {
      await side((c) =>
        c.query(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$;
                 CREATE TRIGGER injected_fault BEFORE DELETE ON delivery_endpoints FOR EACH ROW EXECUTE FUNCTION injected_fault()`),
      );
    },
    async clear() {
      await gate?.end();
      gate = undefined;
      await side((c) =>
        c.query('DROP TRIGGER IF EXISTS injected_fault ON outbox; DROP TRIGGER IF EXISTS injected_fault ON delivery_endpoints; DROP FUNCTION IF EXISTS injected_fault()'),
      );
    },
    async count(table) {
      return side(async (c) => (await c.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table}`)).rows[0]?.n ?? -1);
    },
    async settle(messageId, status, attempts, deliveredAt) {
      await side((c) =>
        c.query(
          `UPDATE outbox SET status = $1, attempts = $2, delivered_at = $3, lease_owner = 'node-a', lease_expires_at = $4, fencing_token = 7
           WHERE message_id = $5`,
          [status, attempts, deliveredAt, T0 + HOUR, messageId],
        ),
      );
    },
    async addAttempt(a) {
      await side((c) =>
        c.query('INSERT INTO delivery_attempts VALUES ($1, $2, $3, $4, $5, $6, $7)', [a.messageId, a.attempt, a.startedAt, a.durationMs, a.responseStatus, a.responseBody, a.error]),
      );
    },
    async lease(messageId) {
      const rows = await side(
        async (c) =>
          (await c.query<{ owner: string | null; expiresAt: number | null; fencingToken: number }>(
            'SELECT lease_owner AS "owner", lease_expires_at AS "expiresAt", fencing_token AS "fencingToken" FROM outbox WHERE message_id = $1',
            [messageId],
          )).rows,
      );
      return rows[0]!;
    },
    async holdQueue(serviceId, deviceId) {
      // The queue's counter row, which a write recording a message to it upserts first, locked (made
      // if the queue has none yet) by a transaction left open until the release.
      gate = new pg.Client({ connectionString: db.url });
      await gate.connect();
      const held = gate;
      await held.query('BEGIN');
      await held.query(
        `INSERT INTO message_sequences AS q (service_id, device_id, last_sequence, open_messages) VALUES ($1, $2, 0, 0)
         ON CONFLICT (service_id, device_id) DO UPDATE SET last_sequence = q.last_sequence`,
        [serviceId, deviceId],
      );
      const pid = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const count = async (query: string) => {
        // A transaction sees pg_stat_activity as it first read it, unless told to read it again.
        await held.query('SELECT pg_stat_clear_snapshot()');
        return (await held.query<{ n: number }>(query, [pid])).rows[0]?.n;
      };
      const atGate = 'SELECT count(*)::integer AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))';
      const behindHeld = `SELECT count(*)::integer AS n FROM pg_stat_activity w JOIN pg_stat_activity h ON h.pid = ANY (pg_blocking_pids(w.pid))
        WHERE $1 = ANY (pg_blocking_pids(h.pid))`;
      return {
        async reached() {
          await expect.poll(() => count(atGate)).toBe(1);
        },
        async releaseAfter(others) {
          let finished = false;
          const done = () => (finished = true);
          others.then(done, done);
          const waiting = async () => (await count(atGate))! > 1 || (await count(behindHeld))! > 0;
          while (!finished && !(await waiting())) await new Promise((resolve) => setTimeout(resolve, 10));
          await held.query('ROLLBACK');
        },
      };
    },
  };

  storeContract('PostgreSQL', open, beside);

  describe('beside the contract', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(() => store.close());

    const { count } = beside;

    describe('migrations', () => {
      it('ship as numbered files starting with 001_init.sql, recorded once each', async () => {
        const migrations = loadMigrations();
        expect(migrations[0]?.name).toBe('001_init.sql');
        await store.migrate();
        const rows = await side(async (c) => (await c.query('SELECT version, name FROM schema_migrations ORDER BY version')).rows);
        expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
      });

      it('apply once when several nodes start together on an empty database', async () => {
        const empty = await createTestDatabase(adminUrl);
        try {
          const stores = await Promise.all([1, 2, 3, 4].map(() => openStore(empty.url)));
          await Promise.all(stores.map((s) => s.close()));
          const applied = await withClient(empty.url, async (c) => (await c.query('SELECT version FROM schema_migrations')).rows);
          expect(applied).toHaveLength(loadMigrations().length);
        } finally {
          await empty.drop();
        }
      });

      it("run past the pool's statement_timeout: an index over a large outbox takes what it takes", async () => {
        const slow = await createTestDatabase(adminUrl);
        try {
          const pool = openPool(`${slow.url}${slow.url.includes('?') ? '&' : '?'}statement_timeout=100`);
          const applied = await migrate(Sql.over(pool), [{ version: 1, name: '001_slow.sql', sql: 'SELECT pg_sleep(0.3)' }], 0);
          await expect(Sql.over(pool).run('SELECT pg_sleep(0.3)')).rejects.toThrow(/statement timeout/);
          await pool.end();
          expect(applied).toEqual([1]);
        } finally {
          await slow.drop();
        }
      });

      it("wait past a lock_timeout of the URL for another node's migration", async () => {
        const waited = await createTestDatabase(adminUrl);
        try {
          const pool = openPool(`${waited.url}${waited.url.includes('?') ? '&' : '?'}lock_timeout=100`);
          // Another node migrating: it holds the migrations' lock for 0.5 s after this one asks for it.
          const other = new pg.Client({ connectionString: waited.url });
          await other.connect();
          await other.query('BEGIN');
          await other.query("SELECT pg_advisory_xact_lock(hashtext('appliance-cloud schema_migrations'))");
          const migrating = migrate(Sql.over(pool), [{ version: 1, name: '001_one.sql', sql: 'SELECT 1' }], 0);
          await new Promise((resolve) => setTimeout(resolve, 500));
          await other.query('COMMIT');
          await other.end();
          const applied = await migrating;
          await pool.end();
          expect(applied).toEqual([1]);
        } finally {
          await waited.drop();
        }
      });

      it("003 on an outbox written under 002: each queue's first open message is claimed, then the next", async () => {
        const old = await createTestDatabase(adminUrl);
        try {
          const pool = openPool(old.url);
          await migrate(Sql.over(pool), loadMigrations().filter((m) => m.version <= 2), 0);
          await pool.end();
          await withClient(old.url, (c) =>
            c.query(`INSERT INTO services (service_id, name, key_hash, allowed_devices, callback_url, created_at) VALUES ('S1', 'S1', 'h', '{}', 'https://S1.example/push', 0);
                     INSERT INTO webhook_secrets (service_id, secret, created_at) VALUES ('S1', 'whsec_AAAA', 0);
                     INSERT INTO message_sequences (service_id, device_id, last_sequence) VALUES ('S1', 'A', 3), ('S1', 'B', 2);
                     INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at)
                     VALUES ('a1', 'S1', 'A', 'push', 'DEVICE_PUSH', 1, '{}', 'delivered', 1, 1), ('a2', 'S1', 'A', 'push', 'DEVICE_PUSH', 2, '{}', 'pending', 2, 2),
                            ('a3', 'S1', 'A', 'push', 'DEVICE_PUSH', 3, '{}', 'pending', 3, 3), ('b1', 'S1', 'B', 'push', 'DEVICE_PUSH', 1, '{}', 'failed', 1, 1),
                            ('b2', 'S1', 'B', 'push', 'DEVICE_PUSH', 2, '{}', 'pending', 2, 2)`),
          );
          const upgraded = await openStore(old.url);
          const claim = () => upgraded.claimDeliveries({ owner: 'o', now: 100, leaseMs: 1000, limit: 10, perEndpointLimit: 10, inFlight: {} });
          const first = await claim();
          expect(first.map((c) => c.message.messageId)).toEqual(['a2', 'b2']);
          const delivered = first.map((c) => ({ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: 101, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } }));
          await upgraded.recordAttempts(delivered, 102, HOUR);
          expect((await claim()).map((c) => c.message.messageId)).toEqual(['a3']);
          await upgraded.close();
        } finally {
          await old.drop();
        }
      });
    });

    describe('pool settings', () => {
      it('reads pool_max and connect_timeout from the URL, leaving the rest to the driver', () => {
        expect(poolSettings('postgres://u:p@db:5432/app?pool_max=20&connect_timeout=2&statement_timeout=500')).toEqual({
          connectionString: 'postgres://u:p@db:5432/app?statement_timeout=500',
          max: 20,
          connectionTimeoutMillis: 2000,
        });
        expect(poolSettings('postgres://db/app')).toMatchObject({ max: 10, connectionTimeoutMillis: 5000 });
        expect(() => poolSettings('postgres://db/app?pool_max=lots')).toThrow(/pool_max must be a positive integer/);
      });

      it('sets a statement timeout: 30 s unless the URL gives one', async () => {
        const timeout = async (url: string): Promise<unknown> => {
          const pool = openPool(url);
          try {
            return (await pool.query({ text: 'SHOW statement_timeout' })).rows[0];
          } finally {
            await pool.end();
          }
        };
        expect(await timeout(db.url)).toEqual({ statement_timeout: '30s' });
        const withTimeout = new URL(db.url);
        withTimeout.searchParams.set('statement_timeout', '1234');
        expect(await timeout(withTimeout.toString())).toEqual({ statement_timeout: '1234ms' });
      });
    });

    describe('statements sent', () => {
      const sent = () => store.capabilities.statementCounts?.statementsSent() ?? Number.NaN;

      it('counts every statement, transaction control included', async () => {
        let before = sent();
        await store.ping();
        expect(sent() - before).toBe(1);
        await addService(store, 'S1');
        before = sent();
        await store.updateService('S1', { enabled: true });
        // BEGIN, the service read under its lock, its row, the endpoint's row, COMMIT.
        expect(sent() - before).toBe(5);
      });

      it('claims and records a batch in as many statements whatever its size', async () => {
        await addService(store, 'S1');
        await addUser(store, 'U1');
        await connect(store, 'S1', 'U1');
        const statementsToDeliver = async (devices: number, first: number): Promise<number> => {
          for (let i = first; i < first + devices; i++) await addDevice(store, `D${i}`, 'U1');
          const before = sent();
          const claimed = await store.claimDeliveries({ owner: 'node-a', now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
          const outcomes = claimed.map((c) => ({
            messageId: c.message.messageId,
            fencingToken: c.fencingToken,
            startedAt: T0 + 20,
            durationMs: 1,
            responseStatus: 200,
            responseBody: '',
            error: null,
            verdict: { kind: 'delivered' as const },
          }));
          expect(await store.recordAttempts(outcomes, T0 + 30, HOUR)).toEqual(Array(devices).fill('delivered'));
          return sent() - before;
        };
        const one = await statementsToDeliver(1, 0);
        // No transaction around them: the claim (with expired leases, and what to hold), then the outcomes.
        expect(one).toBe(2);
        expect(await statementsToDeliver(50, 1)).toBe(one);
      });

      it('a batch of outcomes gives each queue it moved on its next head: the next claim repairs nothing', async () => {
        await threeQueues(store);
        const claim = () => store.claimDeliveries({ owner: 'node-a', now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
        const first = await claim();
        const outcomes = first.map((c) => ({ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: T0 + 20, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } }));
        await store.recordAttempts(outcomes, T0 + 30, HOUR);
        expect(await side(async (c) => (await c.query('SELECT count(*)::integer AS n FROM message_sequences WHERE headless')).rows[0].n)).toBe(0);
        const before = sent();
        const next = await claim();
        expect(next.map((c) => [c.message.deviceId, c.message.sequence]).sort()).toEqual([['D1', 2], ['D2', 2], ['D3', 2]]);
        expect(sent() - before).toBe(1);
      });

      it('a batch of outcomes leases the next message of each queue it moved on in its own statement, and claims only when slots are left', async () => {
        await threeQueues(store);
        const request = { owner: 'node-a', now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 8, inFlight: {} };
        const first = await store.claimDeliveries(request);
        const outcome = (c: (typeof first)[number]) => ({ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: T0 + 20, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } });
        const [d1, d2, d3] = first;

        // Five of eight slots busy besides D1's: its successor is leased, six of eight are busy again, and that is all.
        let before = sent();
        const moved = await store.recordAndClaim([outcome(d1!)], T0 + 30, HOUR, { ...request, inFlight: { S1: 5 } });
        expect(moved.claimed.map((c) => [c.message.deviceId, c.message.sequence, c.message.status])).toEqual([['D1', 2, 'delivering']]);
        expect(sent() - before).toBe(1);

        // D2 and D3 done with one slot of eight busy besides: their successors, three busy, and a claim for the room left.
        before = sent();
        const both = await store.recordAndClaim([outcome(d2!), outcome(d3!)], T0 + 40, HOUR, { ...request, inFlight: { S1: 1 } });
        expect(both.claimed.map((c) => [c.message.deviceId, c.message.sequence]).sort()).toEqual([['D2', 2], ['D3', 2]]);
        expect(sent() - before).toBe(2);
      });

      it('a claim that fails after the outcomes committed hands back their statuses and what they leased, with its error', async () => {
        await threeQueues(store);
        const request = { owner: 'node-a', now: T0 + 10, leaseMs: 30_000, limit: 1, perEndpointLimit: 8, inFlight: {} };
        const [d1] = await store.claimDeliveries(request);
        const outcome = { messageId: d1!.message.messageId, fencingToken: d1!.fencingToken, startedAt: T0 + 20, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } };
        // The claim's statement (the one that requeues expired leases) fails as it leases D2's and D3's heads; the record's does not.
        await side((c) =>
          c.query(`CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS $$
                     BEGIN IF current_query() LIKE '%expired AS (%' THEN RAISE EXCEPTION 'claim refused'; END IF; RETURN NEW; END $$;
                   CREATE TRIGGER refuse_claims BEFORE UPDATE ON outbox FOR EACH ROW EXECUTE FUNCTION refuse_claims()`),
        );
        try {
          const moved = await store.recordAndClaim([outcome], T0 + 30, HOUR, { ...request, limit: 100, inFlight: { S1: 1 } });
          expect(moved.statuses).toEqual(['delivered']);
          expect(moved.claimed.map((c) => [c.message.deviceId, c.message.sequence, c.message.status])).toEqual([['D1', 2, 'delivering']]);
          expect(String(moved.claimFailed)).toMatch(/claim refused/);
        } finally {
          await side((c) => c.query('DROP TRIGGER refuse_claims ON outbox; DROP FUNCTION refuse_claims()'));
        }
        // The heads the failed claim did not take are claimed by the next one.
        const next = await store.claimDeliveries({ ...request, limit: 100, now: T0 + 40 });
        expect(next.map((c) => [c.message.deviceId, c.message.sequence]).sort()).toEqual([['D2', 1], ['D3', 1]]);
      });

      it('writes reports asked for at once in as many statements whatever their number', async () => {
        await addService(store, 'S1');
        await addUser(store, 'U1');
        await connect(store, 'S1', 'U1');
        for (let i = 0; i < 30; i++) {
          await addDevice(store, `D${i}`, 'U1');
          await store.upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: `D${i}`, expiresAt: T0 + HOUR }, T0, 100);
        }
        const statementsToReport = async (devices: number, n: number): Promise<number> => {
          const before = sent();
          await Promise.all(Array.from({ length: devices }, (_, i) => store.applyReport(`D${i}`, { n }, { n }, T0 + n)));
          return sent() - before;
        };
        // BEGIN, the status rows, their subscribers, the messages, COMMIT.
        expect(await statementsToReport(1, 1)).toBe(5);
        expect(await statementsToReport(30, 2)).toBe(5);
        expect(await recorded(store, 'S1', 'D29')).toHaveLength(2);
      });

      it('reads the states of devices asked for at once in one statement', async () => {
        await addUser(store, 'U1');
        for (let i = 0; i < 20; i++) await addDevice(store, `D${i}`, 'U1');
        const before = sent();
        const states = await Promise.all([...Array.from({ length: 20 }, (_, i) => store.getDeviceState(`D${i}`)), store.getDeviceStatusJson('D0'), store.getDeviceState('nope')]);
        expect(sent() - before).toBe(1);
        expect(states.slice(0, 20).map((s) => s && 'deviceId' in s && s.deviceId)).toEqual(Array.from({ length: 20 }, (_, i) => `D${i}`));
        expect(states[20]).toMatchObject({ version: 1, online: true });
        expect(states[21]).toBeUndefined();
      });

      it('writes and answers the reports asked for before it closes', async () => {
        await addUser(store, 'U1');
        await addDevice(store, 'D1', 'U1');
        const reporting = store.applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1);
        await store.close();
        await expect(reporting).resolves.toBe(2);
        store = await openStore(db.url);
        expect((await store.getDeviceState('D1'))?.version).toBe(2);
      });

      it('are scraped as store_statements_total', async () => {
        const registry = new Registry();
        registerStoreMetrics(registry, store.capabilities.statementCounts);
        await store.ping();
        const scraped = async () => (await registry.getSingleMetric('store_statements_total')?.get())?.values[0]?.value;
        expect(await scraped()).toBe(sent());
        await store.ping();
        expect(await scraped()).toBe(sent());
      });
    });

    describe('when the server ends the connections (PostgreSQL restarting)', () => {
      const endConnections = () =>
        side((c) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'appliance-cloud'"));

      it('replaces idle connections and answers the next query', async () => {
        await addService(store, 'S1');
        await Promise.all([store.ping(), store.ping(), store.ping()]);
        await endConnections();
        // An idle connection's error reaches the pool, which drops it; unhandled, it would end this process.
        await expect.poll(() => store.getService('S1').then((s) => s?.serviceId, () => 'failed')).toBe('S1');
      });

      // A statement on its own, and one midway through a transaction, whose connection is checked out of the pool.
      it.each([
        { what: 'a query', table: 'services', call: (s: Store) => s.getService('S1') },
        { what: 'a transaction', table: 'delivery_endpoints', call: (s: Store) => s.updateService('S1', { enabled: true }) },
      ])('fails $what whose connection ends, then answers the next call', async ({ table, call }) => {
        await addService(store, 'S1');
        // A side transaction holds the table, so that the store's statement is in flight when its connection ends.
        const answer = await side(async (c) => {
          await c.query('BEGIN');
          await c.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
          const calling = call(store).then(
            () => 'answered',
            (error: Error) => error.message,
          );
          const waiting = async () =>
            (await c.query("SELECT count(*)::integer AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows[0]?.n;
          await expect.poll(waiting).toBe(1);
          await endConnections();
          await c.query('ROLLBACK');
          return calling;
        });
        expect(answer).toMatch(/terminat/);
        await expect(call(store)).resolves.toBeDefined();
      });
    });

    describe('nodes racing on one database', () => {
      /** A second store on the same database: another node. */
      let other: Store;
      beforeEach(async () => {
        other = await openStore(db.url);
      });
      afterEach(() => other.close());
      afterEach(() =>
        side((c) =>
          c.query(`DROP TRIGGER IF EXISTS slow ON outbox; DROP TRIGGER IF EXISTS slow ON message_sequences;
                   DROP TRIGGER IF EXISTS slow ON device_users; DROP FUNCTION IF EXISTS slow()`),
        ),
      );

      /** Makes the `event`s on `table` that `when` picks sleep for a second, inside the statement that holds the locks taken before it. */
      const slowDown = (event: 'INSERT' | 'UPDATE', table: string, when: string) =>
        side((c) =>
          c.query(`CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$;
                   CREATE TRIGGER slow BEFORE ${event} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION slow()`),
        );
      /** Sessions of this database waiting on `event`: other test files' databases share the server. */
      const waiting = (event: string) =>
        side(async (c) => {
          const { rows } = await c.query<{ n: number }>(
            'SELECT count(*)::integer AS n FROM pg_stat_activity WHERE wait_event = $1 AND datname = current_database()',
            [event],
          );
          return rows[0]?.n;
        });

      it('numbers concurrent messages of one device without gaps or repeats', async () => {
        await addService(store, 'S1');
        await addUser(store, 'U1');
        await connect(store, 'S1', 'U1');
        await addDevice(store, 'D1', 'U1');
        await store.addPushSubscription('S1', 'U1', 'D1', T0);
        await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? store : other).recordPush('D1', `CODE_${i}`, T0 + 1)));
        const sequences = (await recorded(store, 'S1')).map((m) => m.message.sequence).sort((a, b) => a - b);
        expect(sequences).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
      });

      it('never lets concurrent event subscriptions of one pair pass the limit', async () => {
        await addService(store, 'S1');
        await addUser(store, 'U1');
        await connect(store, 'S1', 'U1');
        const devices = ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'];
        for (const deviceId of devices) await addDevice(store, deviceId, 'U1');
        const results = await Promise.all(
          devices.map((deviceId, i) =>
            (i % 2 ? store : other).upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt: T0 + HOUR }, T0, 2),
          ),
        );
        expect(results.filter((r) => r === 'created')).toHaveLength(2);
        expect(await store.listEventSubscriptions('S1', 'U1', T0)).toHaveLength(2);
      });

      it('leases each message to one node only, and only the first open one of its device', async () => {
        await threeQueues(store);
        const request = { now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} };
        const claims = await Promise.all([store, other, store, other].map((s, i) => s.claimDeliveries({ ...request, owner: `node-${i}` })));
        const leased = claims.flat().map((c) => [c.message.deviceId, c.message.sequence]);
        expect(leased.sort()).toEqual([['D1', 1], ['D2', 1], ['D3', 1]]);
      });

      describe('races leave no message stranded (one side slowed down while it holds its locks)', () => {
        const claim = (s: Store) => s.claimDeliveries({ owner: 'node', now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });

        /** D1's first message, leased; its delivery is the settle that races. */
        async function headInFlight() {
          await addService(store, 'S1');
          await addUser(store, 'U1');
          await connect(store, 'S1', 'U1');
          await addDevice(store, 'D1', 'U1');
          await store.addPushSubscription('S1', 'U1', 'D1', T0);
          const [head] = await claim(store);
          const delivered = { messageId: head!.message.messageId, fencingToken: head!.fencingToken, startedAt: T0 + 3, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } };
          return () => other.recordAttempts([delivered], T0 + 4, HOUR);
        }

        /** Starts `first`, and once it sleeps holding its locks, `second`, which then waits for a lock; both finish. */
        async function race(first: () => Promise<unknown>, second: () => Promise<unknown>): Promise<void> {
          const one = first();
          await expect.poll(() => waiting('PgSleep')).toBe(1);
          const two = second();
          await expect.poll(() => waiting('transactionid')).toBe(1);
          await Promise.all([one, two]);
        }

        it("a message recorded while its queue's head is settled, the insert first: the settle waits for it, and the next claim makes the new message head", async () => {
          const settle = await headInFlight();
          await slowDown('INSERT', 'outbox', "NEW.push_type = 'DEVICE_PUSH'");
          await race(() => store.recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 2), settle);
          expect((await claim(other)).map((c) => c.message.pushType)).toEqual(['DEVICE_PUSH']);
        });

        it('a service enabled while a claim holds its messages: the release waits for the hold, and the messages go at once', async () => {
          await addService(store, 'S1');
          await addUser(store, 'U1');
          await connect(store, 'S1', 'U1');
          await store.updateService('S1', { enabled: false });
          await addDevice(store, 'D1', 'U1');
          await slowDown('UPDATE', 'outbox', "NEW.status = 'held'");
          const holding = claim(store);
          await expect.poll(() => waiting('PgSleep')).toBe(1);
          // As Accounts.updateService enables a service: the flag and the endpoint, then its held messages.
          await other.updateService('S1', { enabled: true });
          await other.releaseHeld(T0 + 5, 'S1');
          // The held message is pending again: the slowed claim takes it itself once the hold commits, or the next one does.
          const claimed = [...(await holding), ...(await claim(other))];
          expect(claimed.map((c) => c.message.pushType)).toEqual(['DEVICE_REGISTERED']);
        });

        it("a message recorded while its queue's head is settled, the settle first: the insert waits for it, finds its queue empty and is head", async () => {
          const settle = await headInFlight();
          await slowDown('UPDATE', 'message_sequences', 'NEW.open_messages < OLD.open_messages');
          await race(settle, () => store.recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 2));
          expect((await claim(other)).map((c) => c.message.pushType)).toEqual(['DEVICE_PUSH']);
        });

        it('a claim held up in its repair while the other node gives the headless queue its head, leases it and delivers it: the message behind it is claimed next', async () => {
          await addService(store, 'S1');
          await addUser(store, 'U1');
          await connect(store, 'S1', 'U1');
          for (const deviceId of ['D1', 'D2']) {
            await addDevice(store, deviceId, 'U1');
            await store.addPushSubscription('S1', 'U1', deviceId, T0);
          }
          await store.recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 1);
          await store.recordPush('D1', 'DRYING_IS_COMPLETE', T0 + 2);
          const deliver = (s: Store, c: { message: { messageId: string }; fencingToken: number }, at: number) =>
            s.recordAttempts([{ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: at, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' } }], at + 1, HOUR);
          // Both queues' heads leased; D1's delivered, its queue left headless, D2's lease expires.
          const heads = await claim(store);
          expect(heads.map((c) => c.message.deviceId).sort()).toEqual(['D1', 'D2']);
          await deliver(other, heads.find((c) => c.message.deviceId === 'D1')!, T0 + 20);
          // As a settle leaves a queue when it cannot see the message behind (one inserted while it waited for the queue's row).
          await side((c) => c.query("UPDATE outbox SET queue_head = false WHERE device_id = 'D1'; UPDATE message_sequences SET headless = true WHERE device_id = 'D1'"));
          const later = (s: Store, now: number) => s.claimDeliveries({ owner: 'node', now, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });

          // The slowed claim takes back D2's expired lease and waits for the advisory lock there, having seen the queue headless.
          await side(async (gate) => {
            await gate.query('SELECT pg_advisory_lock(7)');
            await gate.query(`CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(7); RETURN NEW; END $$;
                              CREATE TRIGGER slow BEFORE UPDATE ON outbox FOR EACH ROW WHEN (OLD.status = 'delivering' AND NEW.status = 'pending') EXECUTE FUNCTION slow()`);
            const slowed = later(store, T0 + HOUR);
            await expect.poll(() => waiting('advisory')).toBe(1);
            const [washing] = await later(other, T0 + HOUR);
            expect([washing?.message.deviceId, washing?.message.sequence]).toEqual(['D1', 2]);
            await deliver(other, washing!, T0 + HOUR + 1);
            await gate.query('SELECT pg_advisory_unlock(7)');
            await slowed;
          });
          // D2's message again too: the slowed claim leased it, and that lease expired as well.
          const next = await later(other, T0 + 2 * HOUR);
          expect(next.map((c) => [c.message.deviceId, c.message.sequence]).sort()).toEqual([['D1', 3], ['D2', 1]]);
        });
      });

      it('wakes a watcher on one node after a commit through the other, and again after losing its connection', async () => {
        await addService(store, 'S1');
        await addUser(store, 'U1');
        await connect(store, 'S1', 'U1');
        let woken = 0;
        await other.watchOutbox(() => woken++);
        const wokenAgain = async (before: number) => {
          for (let waited = 0; woken === before && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
          expect(woken).toBeGreaterThan(before);
        };
        await addDevice(store, 'D1', 'U1');
        await wokenAgain(0);

        // PostgreSQL restarting looks the same to the listener: its connection ends.
        const before = woken;
        await side((c) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'"));
        await wokenAgain(before);
        const reconnected = woken;
        await store.renameDevice('D1', 'Again', T0 + 1);
        await wokenAgain(reconnected);
      });

      describe("a washtower half shared or registered to a user while another of its group's is (the first slowed down while it holds the user)", () => {
        const half = (deviceId: string) => ({ ...newDevice(deviceId, 'DEVICE_WASHTOWER_WASHER'), groupId: 'G1' });
        const share = (deviceId: string) => (s: Store) => s.shareDevice(deviceId, 'U1', T0 + 1);
        const register = (deviceId: string) => (s: Store) => s.registerDevice(half(deviceId), 'U1', T0 + 1);

        // The first on one node, the second on the other.
        it.each([
          ['a share, then a registration', share('W1'), register('W3')],
          ['a registration, then a share', register('W3'), share('W1')],
          ['two shares', share('W1'), share('W2')],
        ])('%s: the second waits for the first, then is refused', async (_, first, second) => {
          for (const userNumber of ['U1', 'U2', 'U3']) await addUser(store, userNumber);
          await store.registerDevice(half('W1'), 'U2', T0);
          await store.registerDevice(half('W2'), 'U3', T0);
          await slowDown('INSERT', 'device_users', "NEW.user_number = 'U1'");
          const one = first(store);
          await expect.poll(() => waiting('PgSleep')).toBe(1);
          const two = second(other).then(() => 'passed', (error: Error) => error.message);
          await expect.poll(() => waiting('transactionid')).toBe(1);
          await one;
          expect(await two).toMatch(/^User U1 has a DEVICE_WASHTOWER_WASHER in group "G1" already/);
          expect((await store.listUserDevices('U1')).filter((d) => d.groupId === 'G1')).toHaveLength(1);
        });
      });

      it('deletes a device when its last two users leave at once', async () => {
        await addUser(store, 'U1');
        await addUser(store, 'U2');
        await store.registerDevice(newDevice('D1'), 'U1', T0);
        await store.shareDevice('D1', 'U2', T0);
        expect(await Promise.all([store.unregisterDevice('D1', 'U1', T0 + 1), other.unregisterDevice('D1', 'U2', T0 + 1)])).toEqual([true, true]);
        expect(await store.getDevice('D1')).toBeUndefined();
        expect(await count('devices')).toBe(0);
      });
    });

    it('finds everything again from another connection after closing', async () => {
      await addService(store, 'S1');
      await store.rotateWebhookSecret('S1', 'whsec_new', T0 + 1, T0 + 24 * HOUR);
      await addUser(store, 'U1');
      await connect(store, 'S1', 'U1');
      await addDevice(store, 'D1', 'U1');
      await store.addPushSubscription('S1', 'U1', 'D1', T0 + 2);
      await store.applyReport('D1', [{ b: 1, a: 2 }], [{ b: 1, a: 2 }], T0 + 3);
      const read = async (s: Store) => ({
        service: await s.getService('S1'),
        device: await s.getDevice('D1'),
        state: await s.getDeviceState('D1'),
        push: await s.listPushSubscriptions('S1', 'U1'),
        messages: await s.listMessages('S1', {}),
      });
      const before = await read(store);
      await store.close();
      store = await openStore(db.url);
      expect(await read(store)).toEqual(before);
      // The status keeps its exact text, key order included.
      expect(JSON.stringify(before.state?.status)).toBe('[{"b":1,"a":2}]');
    });
  });
});
