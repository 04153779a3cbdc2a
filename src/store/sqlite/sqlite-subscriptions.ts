/**
 * Push and event subscriptions of a (service, user) pair to a device. The schema ties each one to
 * the pair's connection and the user's registration of the device: adding one without both throws.
 * A subscription to a device of a type the service no longer allows stays, dormant: it is neither
 * listed, counted nor told anything, and wakes if the type is allowed again (DESIGN J).
 */
import type { EventSubscription, PushSubscription } from '../../core/model.js';
import { mayCreateEventSubscription } from '../rules.js';
import type { EventSubscribeResult } from '../areas/subscriptions.js';
import { area, type Sql } from './database.js';
import type { SubscriptionsArea } from '../areas/subscriptions.js';
import { sharedWith } from './sqlite-oauth.js';

interface SubscriptionRow {
  service_id: string;
  user_number: string;
  device_id: string;
  created_at: number;
  expires_at: number;
}

/**
 * SQL: the service row `service` allows devices of the type `deviceType` (an SQL expression). The
 * column is JSON.stringify of the type names, which are [A-Z_] only: the quoted name occurs in it
 * exactly when it is an element, and finding it is cheaper than json_each per row (a third of
 * the event subscribers' read of every report, with the twelve types allowed).
 */
export function allowsType(service: string, deviceType: string): string {
  return `instr(${service}.allowed_devices, '"' || ${deviceType} || '"') > 0`;
}

/** The subscriptions `x` of a pair, joined to their device `d` and service `s`, that the service may see (its type, the owner's share). */
function visibleOf(table: string): string {
  return `${table} x JOIN devices d ON d.device_id = x.device_id JOIN services s ON s.service_id = x.service_id
    WHERE x.service_id = ? AND x.user_number = ? AND ${allowsType('s', 'd.device_type')}
      AND ${sharedWith('x.service_id', 'x.user_number', 'x.device_id')}`;
}

/** Oldest first. */
function listPushSubscriptions(sql: Sql, serviceId: string, userNumber: string): PushSubscription[] {
  return sql
    .all<SubscriptionRow>(
      `SELECT x.service_id, x.user_number, x.device_id, x.created_at FROM ${visibleOf('push_subscriptions')} ORDER BY x.id`,
      serviceId,
      userNumber,
    )
    .map((r) => ({ serviceId: r.service_id, userNumber: r.user_number, deviceId: r.device_id, createdAt: r.created_at }));
}

function addPushSubscription(sql: Sql, serviceId: string, userNumber: string, deviceId: string, at: number): boolean {
  return (
    sql.run(
      'INSERT INTO push_subscriptions (service_id, user_number, device_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      serviceId,
      userNumber,
      deviceId,
      at,
    ) === 1
  );
}

function removePushSubscription(sql: Sql, serviceId: string, userNumber: string, deviceId: string): boolean {
  return sql.run('DELETE FROM push_subscriptions WHERE service_id = ? AND user_number = ? AND device_id = ?', serviceId, userNumber, deviceId) === 1;
}

/** Unexpired at `now`, oldest first. */
function listEventSubscriptions(sql: Sql, serviceId: string, userNumber: string, now: number): EventSubscription[] {
  return sql
    .all<SubscriptionRow>(
      `SELECT x.service_id, x.user_number, x.device_id, x.expires_at FROM ${visibleOf('event_subscriptions')} AND x.expires_at > ? ORDER BY x.id`,
      serviceId,
      userNumber,
      now,
    )
    .map((r) => ({ serviceId: r.service_id, userNumber: r.user_number, deviceId: r.device_id, expiresAt: r.expires_at }));
}

/**
 * Renews an existing subscription (even an expired one); else creates one unless the pair is at its
 * limit, counted as GET /event lists them.
 */
function upsertEventSubscription(sql: Sql, sub: EventSubscription, now: number, limit: number): EventSubscribeResult {
  return sql.write(() => {
    const renew = (condition: string, ...params: number[]) => sql.run(
      `UPDATE event_subscriptions SET expires_at = ? WHERE service_id = ? AND user_number = ? AND device_id = ?${condition}`,
      sub.expiresAt,
      sub.serviceId,
      sub.userNumber,
      sub.deviceId,
      ...params,
    );
    if (renew(' AND expires_at > ?', now) === 1) return 'renewed';
    const held = sql.one<{ n: number }>(
      `SELECT count(*) AS n FROM ${visibleOf('event_subscriptions')} AND x.expires_at > ?`,
      sub.serviceId,
      sub.userNumber,
      now,
    );
    if (!mayCreateEventSubscription(held?.n ?? 0, limit)) return 'limit';
    // An expired one is taken up again as a new one is: within the limit.
    if (renew('') === 1) return 'renewed';
    sql.run(
      'INSERT INTO event_subscriptions (service_id, user_number, device_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      sub.serviceId,
      sub.userNumber,
      sub.deviceId,
      now,
      sub.expiresAt,
    );
    return 'created';
  });
}

/** Deletes the subscription whatever its state; true only when it was still unexpired. */
function removeEventSubscription(sql: Sql, serviceId: string, userNumber: string, deviceId: string, now: number): boolean {
  const removed = sql.one<{ expires_at: number }>(
    'DELETE FROM event_subscriptions WHERE service_id = ? AND user_number = ? AND device_id = ? RETURNING expires_at',
    serviceId,
    userNumber,
    deviceId,
  );
  return removed !== undefined && removed.expires_at > now;
}


/** The sweeper's delete: expired subscriptions already tell nobody anything, so this only frees them. */
function deleteExpiredEventSubscriptions(sql: Sql, now: number): number {
  return sql.run('DELETE FROM event_subscriptions WHERE expires_at <= ?', now);
}

/** The subscriptions area on SQLite. */
export function sqliteSubscriptions(sql: Sql): SubscriptionsArea {
  return area(sql, {
    listPushSubscriptions, addPushSubscription, removePushSubscription, listEventSubscriptions,
    upsertEventSubscription, removeEventSubscription, deleteExpiredEventSubscriptions,
  });
}
