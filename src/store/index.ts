/** Opens the store a DATABASE_URL names, migrated and ready. */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { redactDatabaseUrl, sqliteFile } from '../config.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';
import { unusableDatabase } from './unreachable.js';

/** `sqlite::memory:`, `sqlite:<path>` (parent directories are created) or `postgres://…` (settings: postgres/pool.ts). */
export async function openStore(databaseUrl: string): Promise<Store> {
  let store: Store | undefined;
  try {
    store = openUnmigrated(databaseUrl);
    await store.migrate();
    return store;
  } catch (error) {
    await store?.close();
    throw unusableDatabase(error, databaseUrl) ?? error;
  }
}

function openUnmigrated(databaseUrl: string): Store {
  if (databaseUrl === 'sqlite::memory:') return openSqliteStore(':memory:');
  const path = sqliteFile(databaseUrl);
  if (path !== null) {
    if (path === '') throw new Error('DATABASE_URL sqlite: needs a file path, as in sqlite:./data/appliance-cloud.db');
    mkdirSync(dirname(resolve(path)), { recursive: true });
    return openSqliteStore(path);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return openPostgresStore(databaseUrl);
  throw new Error(`DATABASE_URL must start with sqlite: or postgres://; got ${JSON.stringify(redactDatabaseUrl(databaseUrl))}`);
}
