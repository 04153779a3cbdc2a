/** The database a scenario's server runs on: a SQLite file, or a fresh PostgreSQL database created for the run. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface BenchDatabase {
  /** The server's DATABASE_URL. */
  url: string;
  kind: 'SQLite' | 'PostgreSQL';
  remove(): Promise<void>;
}

export function sqliteDatabase(): BenchDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  return { url: `sqlite:${join(dir, 'bench.db')}`, kind: 'SQLite', remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** `bench_<random>` on the server of `adminUrl`; the name is generated, so it is spliced into the SQL. */
export async function postgresDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), kind: 'PostgreSQL', remove: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** DATABASE_URL when it names a PostgreSQL server: the scenarios that have PostgreSQL figures measure them there. */
export function postgresAdminUrl(): string | undefined {
  const url = process.env.DATABASE_URL;
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
}
