/** Leases on PostgreSQL, timed by the database's clock, which every node shares. */
import type { LeasesArea } from '../areas/leases.js';
import { area, type Sql } from './database.js';

const NOW_MS = 'extract(epoch FROM clock_timestamp()) * 1000';

async function holdLease(sql: Sql, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const rows = await sql.all(
    `INSERT INTO leases AS l (name, holder, expires_at) VALUES ($1, $2, ${NOW_MS} + $3::double precision)
     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE l.holder = EXCLUDED.holder OR l.expires_at <= ${NOW_MS}
     RETURNING 1`,
    name,
    holder,
    ttlMs,
  );
  return rows.length === 1;
}

async function releaseLease(sql: Sql, name: string, holder: string): Promise<void> {
  await sql.run('DELETE FROM leases WHERE name = $1 AND holder = $2', name, holder);
}

export function postgresLeases(sql: Sql): LeasesArea {
  return area(sql, { holdLease, releaseLease });
}
