/**
 * PostgreSQL for tests: a fresh database of its own for each test file (or app), created through an
 * admin connection and dropped afterwards, so test files running in parallel never share state.
 * Database names are generated here, never taken from input, so they are spliced into the SQL.
 *
 * The admin connection is `TEST_DATABASE_URL`, else `DATABASE_URL` (when either is postgres://…),
 * else postgres://postgres@127.0.0.1:5432/postgres; only its server and credentials are used.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

/** Where test databases are created. */
export function postgresAdminUrl(): string {
  const { TEST_DATABASE_URL, DATABASE_URL } = process.env;
  if (isPostgresUrl(TEST_DATABASE_URL)) return TEST_DATABASE_URL;
  if (isPostgresUrl(DATABASE_URL)) return DATABASE_URL;
  return DEFAULT_ADMIN_URL;
}

/** Why PostgreSQL cannot be used at `adminUrl`, or undefined when it answers. */
export async function postgresUnreachable(adminUrl: string): Promise<string | undefined> {
  try {
    await withClient(adminUrl, (client) => client.query('SELECT 1'));
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable at ${redacted(adminUrl)} (${error instanceof Error ? error.message : String(error)})`;
  }
}

export interface TestDatabase {
  /** The URL of the new database, with the admin URL's server, credentials and settings. */
  url: string;
  /** Empties every table but schema_migrations: the next store finds the schema migrated and no data. */
  reset(): Promise<void>;
  /** Drops it, closing any connection still open to it. */
  drop(): Promise<void>;
}

/** Creates an empty database `ac_test_<random>` on the admin URL's server. */
export async function createTestDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `ac_test_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE ${name}`);
    // A test database need not survive a crash: commits stop waiting for the disk.
    await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    reset: async () => {
      await withClient(url.toString(), emptyTables);
    },
    drop: async () => {
      await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

export interface TestDatabases {
  /** A migrated database with no data, for the caller alone until it calls drop(). */
  take(): Promise<TestDatabase>;
  /** Drops the database kept for reuse, and any other a caller took and never dropped. */
  dispose(): Promise<void>;
}

/**
 * Migrated databases for one test file: one database, emptied for each taker in turn; a taker who
 * comes while another still holds it gets a database of its own. Emptying tables is far cheaper
 * than creating and migrating a database for each taker (DDL is slow on small disks).
 */
export function testDatabases(adminUrl: string, migrate: (url: string) => Promise<void>): TestDatabases {
  let shared: Promise<TestDatabase> | undefined;
  let held = false;
  const others = new Set<TestDatabase>();
  const migrated = async (): Promise<TestDatabase> => {
    const database = await createTestDatabase(adminUrl);
    await migrate(database.url).catch(async (error: unknown) => {
      await database.drop();
      throw error;
    });
    return database;
  };
  return {
    async take() {
      if (held) {
        const other = await migrated();
        others.add(other);
        const drop = async () => {
          others.delete(other);
          await other.drop();
        };
        return { ...other, drop };
      }
      held = true;
      try {
        shared ??= migrated();
        const database = await shared;
        await database.reset();
        // Given back, not dropped: the next taker empties it.
        const giveBack = async () => {
          held = false;
        };
        return { ...database, drop: giveBack };
      } catch (error) {
        held = false;
        shared = undefined;
        throw error;
      }
    },
    async dispose() {
      const database = await shared?.catch(() => undefined);
      shared = undefined;
      await database?.drop();
      for (const other of others) await other.drop();
      others.clear();
    },
  };
}

/**
 * Deletes every row in one statement: foreign keys are checked at its end, when every table is empty,
 * so no order is needed. (Migrating again instead costs far more: DDL is slow on small disks.)
 */
async function emptyTables(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'",
  );
  if (rows.length === 0) return;
  await client.query(`WITH ${rows.map((r, i) => `t${i} AS (DELETE FROM ${r.name})`).join(', ')} SELECT 1`);
}

/** Runs `fn` on a connection of its own to `url`, closed afterwards. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function redacted(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
