/** Numbered plain-SQL migrations (`NNN_name.sql` next to this file), applied in order, each once. */
import { loadMigrations as loadFrom, type Migration } from '../migrations.js';
import type { Sql } from './database.js';

export type { Migration };

/** Beside the compiled module too: scripts/copy-assets.mjs copies the .sql files into dist/. */
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** The SQLite migrations shipped with the code, in version order. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return loadFrom(dir);
}

/** Applies the migrations not yet recorded in schema_migrations; returns the versions it applied. */
export function migrate(sql: Sql, migrations: Migration[], at: number): number[] {
  sql.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
  )`);
  // A migration's temporary tables go to a file: 012 copies the whole outbox into one, and in memory
  // (the store's setting for statement journals) a large history would not fit.
  sql.db.pragma('temp_store = FILE');
  try {
    return applyPending(sql, migrations, at);
  } finally {
    sql.db.pragma('temp_store = MEMORY');
  }
}

function applyPending(sql: Sql, migrations: Migration[], at: number): number[] {
  // One write transaction: two processes starting together apply each migration once.
  return sql.write(() => {
    const done = new Set(sql.all<{ version: number }>('SELECT version FROM schema_migrations').map((r) => r.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      sql.db.exec(migration.sql);
      sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', migration.version, migration.name, at);
      applied.push(migration.version);
    }
    return applied;
  });
}
