import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { storeContract } from './contract.js';
import type { StoreFaults } from './contract/faults.js';

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

const faults: StoreFaults = {
  async failMessagesWhere(condition) {
    beside((db) => db.exec(`CREATE TRIGGER injected_fault AFTER INSERT ON outbox WHEN ${condition} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`));
  },
  async clear() {
    beside((db) => db.exec('DROP TRIGGER IF EXISTS injected_fault'));
  },
  async count(table) {
    return beside((db) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
  },
};

storeContract('SQLite in memory', () => openStore('sqlite::memory:'));
storeContract('a SQLite file', openFile, faults);
