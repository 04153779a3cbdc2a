/**
 * The Store on SQLite (better-sqlite3) for one node: its areas composed over one connection. The
 * driver is synchronous, so each call does its work at once and returns a settled promise; every
 * multi-step change is one transaction. One process serves the file, so none of the capabilities of
 * a shared database is here.
 */
import type Database from 'better-sqlite3';
import type { Store, StoreLifecycle } from '../store.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { openSqliteDatabase, Sql } from './database.js';
import { GroupCommit } from './group-commit.js';
import { loadMigrations, migrate } from './migrate.js';
import { sqliteAccounts } from './sqlite-accounts.js';
import { sqliteDelivery } from './sqlite-delivery.js';
import { sqliteDevices } from './sqlite-devices.js';
import { sqliteLeases } from './sqlite-leases.js';
import { sqliteSharedSettings } from './sqlite-shared-settings.js';
import { sqliteOutbox } from './sqlite-outbox.js';
import { sqliteOAuth } from './sqlite-oauth.js';
import { sqliteOverview } from './sqlite-overview.js';
import { sqliteSubscriptions } from './sqlite-subscriptions.js';

/** How often committed pages are copied into the database file (see checkpointer.ts). */
const CHECKPOINT_INTERVAL_MS = 100;

/** Opens a database file (or `:memory:`) with the store's settings; call migrate() before use. */
export function openSqliteStore(filename: string): Store {
  return sqliteStore(openSqliteDatabase(filename));
}

/** The store over an open database; call migrate() before use. */
export function sqliteStore(db: Database.Database): Store {
  const sql = new Sql(db);
  const reports = new GroupCommit(sql);
  let checkpointer: Checkpointer | undefined;
  if (!db.memory) {
    db.pragma('wal_autocheckpoint = 0');
    checkpointer = startCheckpointer({ filename: db.name, intervalMs: CHECKPOINT_INTERVAL_MS }, (message) => process.emitWarning(`WAL checkpoint failed: ${message}`));
  }
  return {
    ...lifecycle(sql, reports, checkpointer),
    ...sqliteAccounts(sql),
    ...sqliteDevices(sql, reports),
    ...sqliteSubscriptions(sql),
    ...sqliteOutbox(sql),
    ...sqliteDelivery(sql),
    ...sqliteOverview(sql),
    ...sqliteOAuth(sql),
    ...sqliteLeases(sql),
    ...sqliteSharedSettings(sql),
    capabilities: { crossNodeNotify: null, sharedRateLimit: null, statementCounts: null, sharedClock: null },
  };
}

function lifecycle(sql: Sql, reports: GroupCommit, checkpointer: Checkpointer | undefined): StoreLifecycle {
  return {
    async migrate() {
      migrate(sql, loadMigrations(), Date.now());
    },
    async ping() {
      sql.one('SELECT 1');
    },
    async close() {
      reports.flush();
      await checkpointer?.stop();
      sql.db.close();
    },
  };
}
