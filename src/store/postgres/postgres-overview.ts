/** What operators browse on PostgreSQL: every user and device by id, totals, and recent attempts per minute. */
import type { Device, User } from '../../core/model.js';
import type { AccountCounts, AttemptMinute, OverviewArea, Page } from '../areas/overview.js';
import { area, type Sql } from './database.js';
import { DEVICE } from './postgres-devices.js';

const MINUTE_MS = 60_000;

// Ids compare byte by byte ("C"), as SQLite does, so a page ends where the next one starts on both.
async function listUsers(sql: Sql, page: Page): Promise<User[]> {
  return sql.all<User>(
    `SELECT user_number AS "userNumber", country_code AS "countryCode", created_at AS "createdAt" FROM users
     WHERE user_number COLLATE "C" > $1 ORDER BY user_number COLLATE "C" LIMIT $2`,
    page.after ?? '',
    page.limit,
  );
}

async function listDevices(sql: Sql, page: Page): Promise<Device[]> {
  return sql.all<Device>(`${DEVICE} WHERE d.device_id COLLATE "C" > $1 ORDER BY d.device_id COLLATE "C" LIMIT $2`, page.after ?? '', page.limit);
}

async function countAccounts(sql: Sql): Promise<AccountCounts> {
  const row = await sql.one<AccountCounts>(
    `SELECT (SELECT count(*)::integer FROM services) AS services, (SELECT count(*)::integer FROM users) AS users,
       (SELECT count(*)::integer FROM devices) AS devices, (SELECT count(*)::integer FROM devices WHERE online) AS "devicesOnline"`,
  );
  return row ?? { services: 0, users: 0, devices: 0, devicesOnline: 0 };
}

async function attemptsByMinute(sql: Sql, since: number): Promise<AttemptMinute[]> {
  return sql.all<AttemptMinute>(
    `SELECT floor(started_at / ${MINUTE_MS}) * ${MINUTE_MS} AS minute, count(*)::integer AS attempts,
       count(*) FILTER (WHERE response_status BETWEEN 200 AND 299)::integer AS succeeded,
       avg(duration_ms) AS "meanMs", max(duration_ms) AS "maxMs"
     FROM delivery_attempts WHERE started_at >= $1 GROUP BY 1 ORDER BY 1`,
    since,
  );
}

/** The overview area on PostgreSQL. */
export function postgresOverview(sql: Sql): OverviewArea {
  return area(sql, { listUsers, listDevices, countAccounts, attemptsByMinute });
}
