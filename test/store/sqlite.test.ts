import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { storeContract } from './contract.js';
import type { SideConnection } from './contract/side.js';
import { HOUR, T0 } from './contract/world.js';

const dir = mkdtempSync(join(tmpdir(), 'store-contract-'));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file of the store opened last. */
let file = '';
const openFile = () => openStore(`sqlite:${(file = join(dir, `store-${++files}.db`))}`);

/** A second connection to the file, for one call. */
function beside<T>(fn: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const side: SideConnection = {
  async failMessagesWhere(condition) {
    beside((db) => db.exec(`CREATE TRIGGER injected_fault AFTER INSERT ON outbox WHEN ${condition} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`));
  },
  async failEndpointLifts() {
    beside((db) => db.exec(`CREATE TRIGGER injected_fault BEFORE DELETE ON delivery_endpoints BEGIN SELECT RAISE(ABORT, 'injected fault'); END`));
  },
  async clear() {
    beside((db) => db.exec('DROP TRIGGER IF EXISTS injected_fault'));
  },
  async count(table) {
    return beside((db) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
  },
  async settle(messageId, status, attempts, deliveredAt) {
    beside((db) =>
      db
        .prepare(`UPDATE outbox SET status = ?, attempts = ?, delivered_at = ?, lease_owner = 'node-a', lease_expires_at = ?, fencing_token = 7
                  WHERE message_id = ?`)
        .run(status, attempts, deliveredAt, T0 + HOUR, messageId),
    );
  },
  async addAttempt(a) {
    beside((db) =>
      db
        .prepare('INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms, response_status, response_body, error) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(a.messageId, a.attempt, a.startedAt, a.durationMs, a.responseStatus, a.responseBody, a.error),
    );
  },
  async lease(messageId) {
    const row = beside((db) => db.prepare('SELECT lease_owner, lease_expires_at, fencing_token FROM outbox WHERE message_id = ?').get(messageId)) as {
      lease_owner: string | null;
      lease_expires_at: number | null;
      fencing_token: number;
    };
    return { owner: row.lease_owner, expiresAt: row.lease_expires_at, fencingToken: row.fencing_token };
  },
  async holdQueue(serviceId, deviceId) {
    // One writer, and a change is one write: nothing comes between what it reads and its messages,
    // so the write is reached once its message is recorded, and nothing is held.
    const queued = () => beside((db) => (db.prepare('SELECT count(*) AS n FROM outbox WHERE service_id = ? AND device_id = ?').get(serviceId, deviceId) as { n: number }).n);
    const before = queued();
    return {
      async reached() {
        await expect.poll(queued).toBeGreaterThan(before);
      },
      async releaseAfter() {},
    };
  },
};

storeContract('SQLite in memory', () => openStore('sqlite::memory:'));
storeContract('a SQLite file', openFile, side);
