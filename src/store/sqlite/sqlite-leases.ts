/** Leases on SQLite: every process on the file runs on one machine, so its clock is the nodes' own. */
import type { LeasesArea } from '../areas/leases.js';
import { area, type Sql } from './database.js';

function holdLease(sql: Sql, name: string, holder: string, ttlMs: number): boolean {
  const now = Date.now();
  const changed = sql.write(() =>
    sql.run(
      `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`,
      name,
      holder,
      now + ttlMs,
      now,
    ),
  );
  return changed === 1;
}

function releaseLease(sql: Sql, name: string, holder: string): void {
  sql.write(() => sql.run('DELETE FROM leases WHERE name = ? AND holder = ?', name, holder));
}

export function sqliteLeases(sql: Sql): LeasesArea {
  return area(sql, { holdLease, releaseLease });
}
