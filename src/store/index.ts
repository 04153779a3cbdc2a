/** Opens the store a DATABASE_URL names, migrated and ready. */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** `sqlite::memory:`, `sqlite:<path>` (parent directories are created) or `postgres://…` (settings: postgres/pool.ts). */
export async function openStore(databaseUrl: string): Promise<Store> {
  const store = openUnmigrated(databaseUrl);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

function openUnmigrated(databaseUrl: string): Store {
  if (databaseUrl === 'sqlite::memory:') return openSqliteStore(':memory:');
  if (databaseUrl.startsWith('sqlite:')) {
    // `sqlite:///abs/path` and `sqlite:relative/path` both name a file.
    const path = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('DATABASE_URL sqlite: needs a file path, as in sqlite:./data/appliance-cloud.db');
    mkdirSync(dirname(resolve(path)), { recursive: true });
    return openSqliteStore(path);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return openPostgresStore(databaseUrl);
  throw new Error(`DATABASE_URL must start with sqlite: or postgres://; got ${JSON.stringify(redact(databaseUrl))}`);
}

/** Never echo a password that a malformed URL may carry. */
function redact(databaseUrl: string): string {
  return databaseUrl.replace(/\/\/[^@/]*@/, '//***@');
}
