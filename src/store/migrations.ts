/**
 * Numbered plain-SQL migrations (`NNN_name.sql`), one folder per database next to its store, applied
 * in order, each once. Reading them is the same for every database; applying them is each store's.
 */
import { readdirSync, readFileSync } from 'node:fs';

const MIGRATION_FILE = /^(\d+)_[\w-]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations of a folder, in version order; throws when two share a version. */
export function loadMigrations(dir: URL): Migration[] {
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
