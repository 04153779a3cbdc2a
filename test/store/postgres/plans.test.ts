/**
 * The claim cost does not grow with history (DESIGN J): with a long delivered history, statistics
 * make waiting messages look rare, and the planner must still never walk every open message. Each
 * statement a claim and a record send is explained, with its own parameters, on such an outbox.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from '../../../src/store/postgres/database.js';
import { openListenClient, openPool } from '../../../src/store/postgres/pool.js';
import { postgresStore } from '../../../src/store/postgres/postgres-store.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, withClient, type TestDatabase } from '../../helpers/postgres.js';
import { addService, addUser, connect, HOUR, newDevice, T0 } from '../contract/world.js';

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the PostgreSQL plan tests: ${unreachable}`);

const DEVICES = 200;
const HISTORY_PER_DEVICE = 100;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe.skipIf(unreachable !== undefined)('PostgreSQL plans with a long delivered history', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
  });
  afterAll(() => db?.drop());

  /** A store over its own pool, noting in `sent` each statement it is sent. */
  function notingStore(sent: { text: string; values?: unknown[] }[]) {
    const pool = openPool(db.url);
    const noting: Pool = { query: (query) => (sent.push(query), pool.query(query)), connect: () => pool.connect(), end: () => pool.end() };
    return postgresStore(noting, () => openListenClient(db.url));
  }

  it('a claim and a record find messages by a key (queue, id, lease expiry), never by walking the outbox or its open messages', async () => {
    const sent: { text: string; values?: unknown[] }[] = [];
    const store = notingStore(sent);
    try {
      await store.migrate();
      await addService(store, 'S1');
      await addUser(store, 'U1');
      await connect(store, 'S1', 'U1', false);
      for (let i = 0; i < DEVICES; i++) {
        await store.registerDevice(newDevice(`D${i}`), 'U1', T0);
        await store.addPushSubscription('S1', 'U1', `D${i}`, T0);
      }
      await withClient(db.url, async (c: pg.Client) => {
        await c.query(
          `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts, next_attempt_at, created_at, delivered_at)
           SELECT 'history-' || i, 'S1', 'D' || (i % $2), 'push', 'DEVICE_PUSH', i / $2 + 1, '{}', 'delivered', 1, $3::double precision, $3::double precision, $3::double precision
           FROM generate_series(0, $1 - 1) AS i`,
          [DEVICES * HISTORY_PER_DEVICE, DEVICES, T0 - 30 * 24 * HOUR],
        );
        await c.query('INSERT INTO message_sequences (service_id, device_id, last_sequence) SELECT service_id, device_id, max(sequence) FROM outbox GROUP BY 1, 2');
        await c.query('ANALYZE outbox, message_sequences');
      });
      for (let i = 0; i < DEVICES; i++) await store.recordPush(`D${i}`, 'WASHING_IS_COMPLETE', T0 + 1);

      sent.length = 0;
      const claimed = await store.claimDeliveries({ owner: 'node', now: T0 + 10, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });
      expect(claimed).toHaveLength(100);
      const attempts = claimed.map((c) => ({ messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: T0 + 10, durationMs: 1, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' as const } }));
      await store.recordAttempts(attempts, T0 + 11, HOUR);
      const statements = [...sent];

      const walks = await withClient(db.url, async (c: pg.Client) => {
        const found: string[] = [];
        for (const { text, values } of statements) {
          const [row] = (await c.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${text}`, values)).rows;
          const walks = nodes(row!['QUERY PLAN'][0]!.Plan).filter(
            (n) => n['Relation Name'] === 'outbox' && (n['Node Type'] === 'Seq Scan' || (n['Node Type'].includes('Index') && n['Index Cond'] === undefined)),
          );
          for (const n of walks) found.push(`${n['Node Type']} ${n['Index Name'] ?? ''} in: ${text.slice(0, 60)}…`);
        }
        return found;
      });
      expect(statements.length).toBeGreaterThanOrEqual(2);
      expect(walks).toEqual([]);
    } finally {
      await store.close();
    }
  });
  it('a page of the delivery log starts at the last message of the previous page by the index, with no sort', async () => {
    const sent: { text: string; values?: unknown[] }[] = [];
    const store = notingStore(sent);
    try {
      await store.migrate();
      await addService(store, 'LOG');
      await withClient(db.url, async (c: pg.Client) => {
        // A hundred messages at each time, as a change made for a hundred devices at once records them.
        await c.query(
          `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts, next_attempt_at, created_at, delivered_at)
           SELECT 'log-' || i, 'LOG', 'D' || (i % 100), 'push', 'DEVICE_PUSH', i / 100 + 1, '{}', 'delivered', 1, t, t, t
           FROM generate_series(0, $1 - 1) AS i, LATERAL (SELECT $2::double precision + i / 100 AS t) AS at`,
          [DEVICES * HISTORY_PER_DEVICE, T0 - 30 * 24 * HOUR],
        );
        await c.query('ANALYZE outbox');
      });

      sent.length = 0;
      const page = await store.listMessages('LOG', { before: 'log-10050', limit: 100 });
      expect([page[0]?.messageId, page.at(-1)?.messageId]).toEqual(['log-10049', 'log-9950']);
      const [statement] = sent;
      const plan = await withClient(db.url, async (c: pg.Client) => {
        const [row] = (await c.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${statement!.text}`, statement!.values)).rows;
        return nodes(row!['QUERY PLAN'][0]!.Plan);
      });
      const scan = plan.find((n) => n['Index Name'] === 'outbox_service_created_id');
      expect(scan?.['Index Cond']).toContain('ROW(created_at, id) < ROW(');
      expect(plan.filter((n) => n['Node Type'].includes('Sort') || n['Node Type'] === 'Seq Scan')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
