/**
 * PostgreSQL under nodes racing on the same device queues (DESIGN J): reports, claims and outcomes
 * take their locks in one order, so they never deadlock; and a serialization failure or deadlock
 * that happens anyway (another writer, an operator's serializable default) is retried inside the
 * store, never seen by the caller. A side connection plays the part of a fault or of a slow writer.
 */
import type pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerStoreMetrics } from '../../../src/metrics.js';
import { openStore } from '../../../src/store/index.js';
import type { AttemptRecord, ClaimedDelivery } from '../../../src/store/areas/delivery.js';
import type { Store } from '../../../src/store/store.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, withClient, type TestDatabase } from '../../helpers/postgres.js';
import { addDevice, addService, addUser, connect, HOUR, recorded, T0 } from '../contract/world.js';

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the PostgreSQL lock tests: ${unreachable}`);

const FAR = T0 + 1000 * HOUR;
const NONE = { serialization: 0, deadlock: 0 };

describe.skipIf(unreachable !== undefined)('PostgreSQL locks', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
  });
  afterAll(() => db?.drop());

  /** Two nodes on one database. */
  let a: Store;
  let b: Store;
  beforeEach(async () => {
    await db.reset();
    a = await openStore(db.url);
    b = await openStore(db.url);
  });
  afterEach(async () => {
    await side((c) =>
      c.query('DROP TRIGGER IF EXISTS fault ON outbox; DROP TRIGGER IF EXISTS fault ON message_sequences; DROP FUNCTION IF EXISTS fault(); DROP SEQUENCE IF EXISTS faults'),
    );
    await Promise.all([a.close(), b.close()]);
  });

  const side = <T>(fn: (client: pg.Client) => Promise<T>) => withClient(db.url, fn);
  const waiting = (event: string) =>
    side(async (c) => (await c.query<{ n: number }>('SELECT count(*)::integer AS n FROM pg_stat_activity WHERE wait_event = $1', [event])).rows[0]?.n);

  /** Makes the rows of `table` that `when` picks run `body` (PL/pgSQL) before they are written. */
  const fault = (event: 'INSERT' | 'UPDATE', table: string, when: string, body: string) =>
    side((c) =>
      c.query(`CREATE FUNCTION fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body}; RETURN NEW; END $$;
               CREATE TRIGGER fault BEFORE ${event} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION fault()`),
    );

  /** `services` listening to U1's `devices`, each service subscribed to every device's events. */
  async function world(services: string[], devices: string[]): Promise<void> {
    for (const serviceId of services) await addService(a, serviceId);
    await addUser(a, 'U1');
    for (const serviceId of services) await connect(a, serviceId, 'U1');
    for (const deviceId of devices) {
      await addDevice(a, deviceId, 'U1');
      for (const serviceId of services) await a.upsertEventSubscription({ serviceId, userNumber: 'U1', deviceId, expiresAt: FAR }, T0, 100);
    }
  }

  const report = (s: Store, deviceId: string, n: number) => s.applyReport(deviceId, [{ n }], [{ n }], T0 + n);
  const claim = (s: Store, now = T0 + HOUR) => s.claimDeliveries({ owner: 'node', now, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
  const delivered = (claimed: ClaimedDelivery[], at = T0 + HOUR): AttemptRecord[] =>
    claimed.map((c) => ({ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: at, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' } }));

  /** Claims and delivers until nothing is left; returns each service's delivered sequences per device, in delivery order. */
  async function drain(s: Store): Promise<Record<string, number[]>> {
    const order: Record<string, number[]> = {};
    for (let claimed = await claim(s); claimed.length > 0; claimed = await claim(s)) {
      for (const c of claimed) (order[`${c.message.serviceId}/${c.message.deviceId}`] ??= []).push(c.message.sequence);
      await s.recordAttempts(delivered(claimed), T0 + HOUR, HOUR);
    }
    return order;
  }

  describe('a consent and an unlink of the same pair at once', () => {
    it('go one after the other: the unlink waits for the consent and takes its share with the connection', async () => {
      await addService(a, 'S1');
      await addUser(a, 'U1');
      await connect(a, 'S1', 'U1');
      // The consent sleeps at its commit, after all its statements: the unlink comes meanwhile.
      await side((c) =>
        c.query(`CREATE FUNCTION fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$;
                 CREATE CONSTRAINT TRIGGER fault AFTER INSERT ON device_shares DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault()`),
      );
      try {
        const consenting = a.saveDeviceShare({ serviceId: 'S1', userNumber: 'U1', grantId: 'G1', scopes: ['devices'], deviceIds: null, createdAt: T0 + 1 });
        await expect.poll(() => waiting('PgSleep')).toBe(1);
        const unlinking = b.disconnect('S1', 'U1', T0 + 2);
        await Promise.all([consenting, unlinking]);
      } finally {
        await side((c) => c.query('DROP TRIGGER IF EXISTS fault ON device_shares'));
      }
      expect([await a.getDeviceShare('S1', 'U1'), await a.getConnection('S1', 'U1')]).toEqual([undefined, undefined]);
    });
  });

  describe("a registration and a pair's first device list at once", () => {
    it('go one after the other: the list, marked first, waits for the registration and lists its device', async () => {
      await addService(a, 'S1');
      await addUser(a, 'U1');
      await connect(a, 'S1', 'U1', false);
      // The registration sleeps at its commit, after its announcement found the pair not yet marked.
      await side((c) =>
        c.query(`CREATE FUNCTION fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$;
                 CREATE CONSTRAINT TRIGGER fault AFTER INSERT ON devices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault()`),
      );
      let listed: string[];
      try {
        const registering = addDevice(a, 'D1', 'U1');
        await expect.poll(() => waiting('PgSleep')).toBe(1);
        await b.markDeviceListLoaded('S1', 'U1', T0 + 1);
        listed = (await b.listUserDevices('U1')).map((device) => device.deviceId);
        await registering;
      } finally {
        await side((c) => c.query('DROP TRIGGER IF EXISTS fault ON devices'));
      }
      expect(listed).toEqual(['D1']);
    });
  });

  describe('lock order', () => {
    it('a claim giving queues their heads while a report holds one of those queues: neither waits for the other in a cycle', async () => {
      // D1's queues of S1 and S2: their heads delivered with more behind them, so both are headless.
      await world(['S1', 'S2'], ['D1']);
      await report(a, 'D1', 1);
      await a.recordAttempts(delivered(await claim(a)), T0 + HOUR, HOUR);
      // Rows are not stored in key order: S1's queue row now lies after S2's.
      await side((c) => c.query("UPDATE message_sequences SET headless = headless WHERE service_id = 'S1'"));
      // The report holds S1's queue row and sleeps before it takes S2's.
      await fault('UPDATE', 'message_sequences', "NEW.service_id = 'S1' AND NEW.last_sequence > OLD.last_sequence", 'PERFORM pg_sleep(1)');

      const reporting = report(a, 'D1', 2);
      await expect.poll(() => waiting('PgSleep')).toBe(1);
      const claiming = claim(b);
      const outcomes = await Promise.allSettled([reporting, claiming]);

      expect(outcomes.map((o) => (o.status === 'fulfilled' ? 'done' : String(o.reason)))).toEqual(['done', 'done']);
      await b.recordAttempts(delivered(await claiming), T0 + HOUR, HOUR);
      await drain(b);
      for (const serviceId of ['S1', 'S2']) expect((await recorded(a, serviceId)).map((m) => m.message.status)).toEqual(['delivered', 'delivered', 'delivered']);
      expect([a.capabilities.statementCounts?.transactionsRetried(), b.capabilities.statementCounts?.transactionsRetried()]).toEqual([NONE, NONE]);
    });

    it('two nodes reporting for the same devices while both claim and settle: every report and outcome commits, none retried', async () => {
      const devices = ['D1', 'D2', 'D3', 'D4'];
      await world(['S1', 'S2', 'S3'], devices);
      // A count, not a time: 400 reports per device, so that each queue lists whole (listMessages gives up to 1,000).
      const REPORTS = 800;
      let stop = false;
      const reporting = async (s: Store, first: number) => {
        for (let n = first; n < REPORTS; n += 2) await report(s, devices[n % devices.length]!, n);
      };
      const delivering = async (s: Store) => {
        while (!stop) {
          const claimed = await claim(s);
          // Some fail, to be retried: outcomes of every kind settle queues while reports fill them.
          await s.recordAttempts(delivered(claimed).map((r, i) => (i % 3 ? r : { ...r, responseStatus: 500, verdict: { kind: 'retry', nextAttemptAt: T0 } })), T0 + HOUR, 100 * HOUR);
        }
      };
      const reports = Promise.all([reporting(a, 0), reporting(b, 1), reporting(a, 2), reporting(b, 3)]).then(() => (stop = true));
      await Promise.all([reports, delivering(a), delivering(b)]);

      expect([a.capabilities.statementCounts?.transactionsRetried(), b.capabilities.statementCounts?.transactionsRetried()]).toEqual([NONE, NONE]);
      // Nothing lost or stranded: each queue numbered without a gap, and all of it delivered.
      await drain(a);
      for (const serviceId of ['S1', 'S2', 'S3']) {
        for (const deviceId of devices) {
          const messages = (await recorded(a, serviceId, deviceId)).map((m) => m.message);
          expect(messages.map((m) => m.sequence).sort((x, y) => x - y)).toEqual(messages.map((_, i) => i + 1));
          expect(new Set(messages.map((m) => m.status))).toEqual(new Set(['delivered']));
        }
      }
    });

    it("two nodes' groups of reports over the same devices, asked for in opposite orders: they take turns, none retried", async () => {
      const devices = Array.from({ length: 8 }, (_, i) => `D${i}`);
      await world(['S1'], devices);
      // Plans that update the status rows in the order the group lists them: without the group's own
      // lock order, a and b would each hold rows the other waits for.
      const database = new URL(db.url).pathname.slice(1);
      await side((c) => c.query(`ALTER DATABASE ${database} SET enable_hashjoin = off; ALTER DATABASE ${database} SET enable_mergejoin = off`));
      const [c, d] = [await openStore(db.url), await openStore(db.url)];
      try {
        const ROUNDS = 30;
        for (let n = 1; n <= ROUNDS; n++) {
          // Each node's reports of a round go in one group.
          await Promise.all([...devices.map((id) => report(c, id, n)), ...[...devices].reverse().map((id) => report(d, id, n))]);
        }
        expect([c.capabilities.statementCounts?.transactionsRetried(), d.capabilities.statementCounts?.transactionsRetried()]).toEqual([NONE, NONE]);
        for (const deviceId of devices) {
          expect((await c.getDeviceState(deviceId))?.version).toBe(1 + 2 * ROUNDS);
          const messages = (await recorded(c, 'S1', deviceId)).filter((m) => m.message.pushType === 'DEVICE_STATUS').map((m) => m.message);
          expect(messages.map((m) => m.sequence).sort((x, y) => x - y)).toEqual(messages.map((_, i) => i + 2));
        }
      } finally {
        await Promise.all([c.close(), d.close()]);
        await side((client) => client.query(`ALTER DATABASE ${database} RESET ALL`));
      }
    });
    it("a user deleted while a group of reports takes their devices' status rows: they take turns, none retried", async () => {
      // Registered in the order opposite to their keys', which a group locks them in.
      await world(['S1'], ['D2', 'D1']);
      // The deletion sleeps as it announces its first device, whose status row it holds.
      await side((c) => c.query('CREATE SEQUENCE faults'));
      await fault('INSERT', 'outbox', "NEW.push_type = 'DEVICE_UNREGISTERED'", "IF nextval('faults') = 1 THEN PERFORM pg_sleep(1); END IF");

      const deleting = a.deleteUser('U1', T0 + 1);
      await expect.poll(() => waiting('PgSleep')).toBe(1);
      const reporting = Promise.allSettled([report(b, 'D1', 2), report(b, 'D2', 2)]);

      expect(await deleting).toBe(true);
      // The reports come after the devices are gone: refused, with nothing recorded.
      expect((await reporting).map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect((await recorded(a, 'S1')).map((m) => m.message.pushType).sort()).toEqual(['DEVICE_REGISTERED', 'DEVICE_REGISTERED', 'DEVICE_UNREGISTERED', 'DEVICE_UNREGISTERED']);
      expect([a.capabilities.statementCounts?.transactionsRetried(), b.capabilities.statementCounts?.transactionsRetried()]).toEqual([NONE, NONE]);
    });
  });

  describe('retries', () => {
    /** The first `runs` outbox `event`s that `when` picks fail with `errcode`, counted in a sequence (which no rollback undoes). */
    async function failFirst(runs: number, event: 'INSERT' | 'UPDATE', when: string, errcode: string): Promise<void> {
      await side((c) => c.query('CREATE SEQUENCE faults'));
      await fault(event, 'outbox', when, `IF nextval('faults') <= ${runs} THEN RAISE EXCEPTION 'forced' USING ERRCODE = '${errcode}'; END IF`);
    }

    const statusMessages = async (s: Store) => (await recorded(s, 'S1', 'D1')).filter((m) => m.message.pushType === 'DEVICE_STATUS').map((m) => m.payload.report);

    it('a report that loses a deadlock runs again and commits once; the caller only sees its new version', async () => {
      await world(['S1'], ['D1']);
      const answer = await side(async (c) => {
        // The side holds D1's queue row; the report takes D1's status row, then waits for the queue's.
        await c.query('BEGIN');
        await c.query("SELECT 1 FROM message_sequences WHERE service_id = 'S1' AND device_id = 'D1' FOR UPDATE");
        const reporting = report(a, 'D1', 1);
        await expect.poll(() => waiting('transactionid')).toBe(1);
        // Now the side waits for the status row: a cycle, and the report, which waited first, is the one aborted.
        await c.query("UPDATE device_states SET version = version WHERE device_id = 'D1'");
        await c.query('COMMIT');
        return reporting;
      });
      expect(answer).toBe(2);
      expect(await statusMessages(a)).toEqual([[{ n: 1 }]]);
      expect(a.capabilities.statementCounts?.transactionsRetried()).toEqual({ serialization: 0, deadlock: 1 });
    });

    it('a transaction that fails to serialize runs again as a whole, and is scraped as a retry', async () => {
      await world(['S1'], ['D1']);
      const registry = new Registry();
      registerStoreMetrics(registry, a.capabilities.statementCounts);
      await failFirst(1, 'INSERT', "NEW.push_type = 'DEVICE_STATUS'", 'serialization_failure');
      expect(await report(a, 'D1', 1)).toBe(2);
      expect(await statusMessages(a)).toEqual([[{ n: 1 }]]);
      expect(await registry.getSingleMetricAsString('store_transactions_retried_total')).toMatch(
        /store_transactions_retried_total\{reason="serialization"\} 1\n.*\{reason="deadlock"\} 0/s,
      );
    });

    it('a statement on its own (a claim) runs again too', async () => {
      await world(['S1'], ['D1']);
      await failFirst(1, 'UPDATE', "NEW.status = 'delivering'", 'deadlock_detected');
      expect((await claim(a)).map((c) => c.message.pushType)).toEqual(['DEVICE_REGISTERED']);
      expect(a.capabilities.statementCounts?.transactionsRetried()).toEqual({ serialization: 0, deadlock: 1 });
    });

    it('gives up after five runs: the caller gets the error, and nothing of it is written', async () => {
      await world(['S1'], ['D1']);
      await failFirst(5, 'INSERT', "NEW.push_type = 'DEVICE_STATUS'", 'serialization_failure');
      await expect(report(a, 'D1', 1)).rejects.toMatchObject({ code: '40001' });
      expect((await a.getDeviceState('D1'))?.version).toBe(1);
      expect(await statusMessages(a)).toEqual([]);
      expect(a.capabilities.statementCounts?.transactionsRetried()).toEqual({ serialization: 4, deadlock: 0 });
      // The sixth run would have passed.
      expect(await report(a, 'D1', 1)).toBe(2);
    });
  });
});
