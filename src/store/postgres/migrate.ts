/** Numbered plain-SQL migrations (`NNN_name.sql` next to this file), applied in order, each once. */
import { loadMigrations as loadFrom, type Migration } from '../migrations.js';
import type { Sql } from './database.js';

/** Beside the compiled module too: scripts/copy-assets.mjs copies the .sql files into dist/. */
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** The PostgreSQL migrations shipped with the code, in version order. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return loadFrom(dir);
}

/**
 * Applies the migrations not yet recorded in schema_migrations, all in one transaction; returns the
 * versions it applied. Several nodes may start at once: the first takes the advisory lock and
 * migrates, the others wait for it and then find nothing to do.
 */
export async function migrate(sql: Sql, migrations: Migration[], at: number): Promise<number[]> {
  return sql.transaction(async (tx) => {
    // The pool cancels a statement past 30 s; an index built over a week of outbox may take longer, and
    // so may the wait of a node for another's migration, which a lock_timeout of DATABASE_URL would cut short too.
    await tx.run('SET LOCAL statement_timeout = 0');
    await tx.run('SET LOCAL lock_timeout = 0');
    await tx.run("SELECT pg_advisory_xact_lock(hashtext('appliance-cloud schema_migrations'))");
    await tx.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at double precision NOT NULL
    )`);
    const done = new Set((await tx.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      // Without parameters the driver sends the file as one script of several statements.
      await tx.run(migration.sql);
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', migration.version, migration.name, at);
      applied.push(migration.version);
    }
    return applied;
  });
}
