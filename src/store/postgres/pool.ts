/**
 * The one file that knows the `pg` driver: a connection pool configured from the DATABASE_URL, and
 * the connection that listens for notifications.
 *
 * Settings come from the URL's query string, else the defaults below:
 *   postgres://user:pass@host:5432/db?pool_max=20&connect_timeout=5&statement_timeout=10000
 * `pool_max` (connections per process) and `connect_timeout` (seconds, as libpq names it) are read
 * here; `statement_timeout`, `lock_timeout`, `application_name`, `sslmode`… are the driver's own.
 */
import pg from 'pg';
import type { ListenClient, Pool } from './database.js';

const DEFAULT_POOL_MAX = 10;
const DEFAULT_CONNECT_TIMEOUT_S = 5;
/** A statement that runs longer is cancelled, so a stuck query cannot hold a request or a lock forever. */
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

export interface PoolSettings {
  /** The URL without the settings only this file reads. */
  connectionString: string;
  max: number;
  connectionTimeoutMillis: number;
}

/** Splits the pool's own settings out of the URL; throws on a malformed value. */
export function poolSettings(databaseUrl: string): PoolSettings {
  const url = new URL(databaseUrl);
  const take = (name: string, fallback: number): number => {
    const raw = url.searchParams.get(name);
    url.searchParams.delete(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`DATABASE_URL ${name} must be a positive integer; got ${JSON.stringify(raw)}`);
    return value;
  };
  const max = take('pool_max', DEFAULT_POOL_MAX);
  const connectTimeoutS = take('connect_timeout', DEFAULT_CONNECT_TIMEOUT_S);
  return { connectionString: url.toString(), max, connectionTimeoutMillis: connectTimeoutS * 1000 };
}

/** A pool that connects lazily: opening it does not touch the database. */
export function openPool(databaseUrl: string): Pool {
  const settings = poolSettings(databaseUrl);
  const pool = new pg.Pool({
    ...settings,
    // The URL's own statement_timeout, if any, wins over this (the driver parses the URL last).
    statement_timeout: DEFAULT_STATEMENT_TIMEOUT_MS,
    application_name: 'appliance-cloud',
  });
  // An idle connection dropped by the server (a restart, a network cut) is discarded by the pool and
  // the next query opens a fresh one; without a listener the event would crash the process.
  pool.on('error', () => {});
  return pool;
}

/** A connection outside the pool, for LISTEN: it stays open as long as someone watches. */
export function openListenClient(databaseUrl: string): ListenClient {
  const { connectionString, connectionTimeoutMillis } = poolSettings(databaseUrl);
  return new pg.Client({ connectionString, connectionTimeoutMillis, application_name: 'appliance-cloud' });
}
