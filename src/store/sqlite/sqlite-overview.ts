/** What operators browse on SQLite: every user and device by id, totals, and recent attempts per minute. */
import type { Device, User } from '../../core/model.js';
import type { AccountCounts, AttemptMinute, OverviewArea, Page } from '../areas/overview.js';
import { area, type Sql } from './database.js';
import { DEVICE_WITH_USERS } from './sqlite-devices.js';
import { toDeviceWithUsers, toUser, type DeviceWithUsersRow, type UserRow } from './rows.js';

const MINUTE_MS = 60_000;

function listUsers(sql: Sql, page: Page): User[] {
  return sql
    .all<UserRow>('SELECT user_number, country_code, created_at FROM users WHERE user_number > ? ORDER BY user_number LIMIT ?', page.after ?? '', page.limit)
    .map(toUser);
}

function listDevices(sql: Sql, page: Page): Device[] {
  return sql.all<DeviceWithUsersRow>(`${DEVICE_WITH_USERS} WHERE d.device_id > ? ORDER BY d.device_id LIMIT ?`, page.after ?? '', page.limit).map(toDeviceWithUsers);
}

function countAccounts(sql: Sql): AccountCounts {
  const row = sql.one<AccountCounts>(
    `SELECT (SELECT count(*) FROM services) AS services, (SELECT count(*) FROM users) AS users,
       (SELECT count(*) FROM devices) AS devices, (SELECT count(*) FROM devices WHERE online = 1) AS devicesOnline`,
  );
  return row ?? { services: 0, users: 0, devices: 0, devicesOnline: 0 };
}

function attemptsByMinute(sql: Sql, since: number): AttemptMinute[] {
  return sql.all<AttemptMinute>(
    `SELECT CAST(started_at / ${MINUTE_MS} AS INTEGER) * ${MINUTE_MS} AS minute, count(*) AS attempts,
       sum(CASE WHEN response_status BETWEEN 200 AND 299 THEN 1 ELSE 0 END) AS succeeded,
       avg(duration_ms) AS meanMs, max(duration_ms) AS maxMs
     FROM delivery_attempts WHERE started_at >= ? GROUP BY 1 ORDER BY 1`,
    since,
  );
}

/** The overview area on SQLite. */
export function sqliteOverview(sql: Sql): OverviewArea {
  return area(sql, { listUsers, listDevices, countAccounts, attemptsByMinute });
}
