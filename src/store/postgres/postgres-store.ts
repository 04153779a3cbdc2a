/**
 * The Store on PostgreSQL (`pg`) for any number of nodes sharing one database: its areas composed
 * over one pool, with the capabilities of a shared database. Each call is one statement or one
 * transaction; the per-backend differences live in this directory only.
 */
import type { Store, StoreCapabilities, StoreLifecycle } from '../store.js';
import { Sql, type ListenClient, type Pool } from './database.js';
import { loadMigrations, migrate } from './migrate.js';
import { openListenClient, openPool } from './pool.js';
import { postgresAccounts } from './postgres-accounts.js';
import { postgresDelivery } from './postgres-delivery.js';
import { deviceReports, postgresDevices, type DeviceReports } from './postgres-devices.js';
import { postgresLeases } from './postgres-leases.js';
import { postgresSharedSettings } from './postgres-shared-settings.js';
import { Notifications, notifyLookupChange } from './postgres-notify.js';
import { postgresOutbox } from './postgres-outbox.js';
import { postgresOAuth } from './postgres-oauth.js';
import { postgresOverview } from './postgres-overview.js';
import { leaseRateTokens } from './postgres-rate-limit.js';
import { postgresSubscriptions } from './postgres-subscriptions.js';

/** A store for `postgres://…` (settings: pool.ts) that connects on first use. Call migrate() before use. */
export function openPostgresStore(databaseUrl: string): Store {
  return postgresStore(openPool(databaseUrl), () => openListenClient(databaseUrl));
}

/** The store over `pool`; `listen` opens the connection that waits for notifications, outside the pool. */
export function postgresStore(pool: Pool, listen: () => ListenClient): Store {
  const sql = Sql.over(pool);
  const notifications = new Notifications(listen);
  /** Lookup changes being told, which close() lets finish: a CLI command closes right after its change. */
  const publishing = new Set<Promise<void>>();
  const reports = deviceReports(sql);
  return {
    ...lifecycle(sql, notifications, publishing, reports),
    ...postgresAccounts(sql),
    ...postgresDevices(sql, reports),
    ...postgresSubscriptions(sql),
    ...postgresOutbox(sql, notifications),
    ...postgresDelivery(sql),
    ...postgresOverview(sql),
    ...postgresOAuth(sql),
    ...postgresLeases(sql),
    ...postgresSharedSettings(sql),
    capabilities: capabilities(sql, notifications, publishing),
  };
}

function lifecycle(sql: Sql, notifications: Notifications, publishing: Set<Promise<void>>, reports: DeviceReports): StoreLifecycle {
  return {
    async migrate() {
      await migrate(sql, loadMigrations(), Date.now());
    },
    async ping() {
      await sql.run('SELECT 1');
    },
    async close() {
      // Reports asked for before close are written and answered, as SQLite's group commit does.
      await reports.settled();
      await Promise.allSettled(publishing);
      await notifications.close();
      await sql.end();
    },
  };
}

function capabilities(sql: Sql, notifications: Notifications, publishing: Set<Promise<void>>): StoreCapabilities {
  return {
    crossNodeNotify: {
      async publishLookupChange(change) {
        const published = notifyLookupChange(sql, change);
        publishing.add(published);
        try {
          await published;
        } finally {
          publishing.delete(published);
        }
      },
      /** In every process on this database: published changes NOTIFY, and this LISTENs. */
      watchLookupChanges: (watcher) => notifications.watchLookups(watcher),
    },
    sharedRateLimit: { leaseRateTokens: leaseRateTokens.bind(undefined, sql) },
    statementCounts: {
      statementsSent: () => sql.statementsSent,
      transactionsRetried: () => sql.transactionsRetried,
    },
    sharedClock: {
      databaseNow: async () => (await sql.one<{ now: number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::double precision AS now'))!.now,
    },
  };
}
