/** Numbered plain-SQL migrations (`NNN_name.sql` next to this file), applied in order, each once. */
import { readdirSync, readFileSync } from 'node:fs';
import type { Sql } from './database.js';

/** Beside the compiled module too: scripts/copy-assets.mjs copies the .sql files into dist/. */
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^(\d+)_[\w-]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations shipped with the code, in version order. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  for (const name of readdirSync(dir)) {
    const match = MIGRATION_FILE.exec(name);
    if (!match?.[1]) continue;
    migrations.push({ version: Number(match[1]), name, sql: readFileSync(new URL(name, dir), 'utf8') });
  }
  migrations.sort((a, b) => a.version - b.version);
  const duplicate = migrations.find((m, i) => i > 0 && migrations[i - 1]?.version === m.version);
  if (duplicate) throw new Error(`Two migrations share version ${duplicate.version} in ${dir.pathname}`);
  return migrations;
}

/** Applies the migrations not yet recorded in schema_migrations; returns the versions it applied. */
export function migrate(sql: Sql, migrations: Migration[], at: number): number[] {
  sql.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
  )`);
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
