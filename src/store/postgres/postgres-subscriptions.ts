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
import { sharedWith } from './postgres-oauth.js';

/** SQL: the service row `service` allows devices of the type `deviceType` (an SQL expression). */
export function allowsType(service: string, deviceType: string): string {
  return `${deviceType} = ANY (${service}.allowed_devices)`;
}

/** The subscriptions `x` of the pair ($1, $2), joined to their device `d` and service `s`, that the service may see (its type, the owner's share). */
function visibleOf(table: string): string {
  return `${table} x JOIN devices d ON d.device_id = x.device_id JOIN services s ON s.service_id = x.service_id
    WHERE x.service_id = $1 AND x.user_number = $2 AND ${allowsType('s', 'd.device_type')}
      AND ${sharedWith('x.service_id', 'x.user_number', 'x.device_id')}`;
}

/** Oldest first. */
async function listPushSubscriptions(sql: Sql, serviceId: string, userNumber: string): Promise<PushSubscription[]> {
  return sql.all<PushSubscription>(
    `SELECT x.service_id AS "serviceId", x.user_number AS "userNumber", x.device_id AS "deviceId", x.created_at AS "createdAt"
     FROM ${visibleOf('push_subscriptions')} ORDER BY x.id`,
    serviceId,
    userNumber,
  );
}

async function addPushSubscription(sql: Sql, serviceId: string, userNumber: string, deviceId: string, at: number): Promise<boolean> {
  const inserted = await sql.run(
    'INSERT INTO push_subscriptions (service_id, user_number, device_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
    serviceId,
    userNumber,
    deviceId,
    at,
  );
  return inserted === 1;
}

async function removePushSubscription(sql: Sql, serviceId: string, userNumber: string, deviceId: string): Promise<boolean> {
  const removed = await sql.run(
    'DELETE FROM push_subscriptions WHERE service_id = $1 AND user_number = $2 AND device_id = $3',
    serviceId,
    userNumber,
    deviceId,
  );
  return removed === 1;
}

/** Unexpired at `now`, oldest first. */
async function listEventSubscriptions(sql: Sql, serviceId: string, userNumber: string, now: number): Promise<EventSubscription[]> {
  return sql.all<EventSubscription>(
    `SELECT x.service_id AS "serviceId", x.user_number AS "userNumber", x.device_id AS "deviceId", x.expires_at AS "expiresAt"
     FROM ${visibleOf('event_subscriptions')} AND x.expires_at > $3 ORDER BY x.id`,
    serviceId,
    userNumber,
    now,
  );
}

/**
 * Renews an existing subscription (even an expired one); else creates one unless the pair is at its
 * limit, counted as GET /event lists them. The pair's connection row is locked first, so concurrent
 * subscribers of one pair count in turn and never pass the limit together.
 */
async function upsertEventSubscription(sql: Sql, sub: EventSubscription, now: number, limit: number): Promise<EventSubscribeResult> {
  return sql.transaction(async (tx) => {
    // No connection: the insert below fails its foreign key, as the interface asks.
    await tx.run('SELECT 1 FROM connections WHERE service_id = $1 AND user_number = $2 FOR NO KEY UPDATE', sub.serviceId, sub.userNumber);
    const renew = (condition: string, ...params: number[]) => tx.run(
      `UPDATE event_subscriptions SET expires_at = $1 WHERE service_id = $2 AND user_number = $3 AND device_id = $4${condition}`,
      sub.expiresAt,
      sub.serviceId,
      sub.userNumber,
      sub.deviceId,
      ...params,
    );
    if ((await renew(' AND expires_at > $5', now)) === 1) return 'renewed';
    const held = await tx.one<{ n: number }>(
      `SELECT count(*)::integer AS n FROM ${visibleOf('event_subscriptions')} AND x.expires_at > $3`,
      sub.serviceId,
      sub.userNumber,
      now,
    );
    if (!mayCreateEventSubscription(held?.n ?? 0, limit)) return 'limit';
    // An expired one is taken up again as a new one is: within the limit.
    if ((await renew('')) === 1) return 'renewed';
    await tx.run(
      'INSERT INTO event_subscriptions (service_id, user_number, device_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
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
async function removeEventSubscription(sql: Sql, serviceId: string, userNumber: string, deviceId: string, now: number): Promise<boolean> {
  const removed = await sql.one<{ expiresAt: number }>(
    `DELETE FROM event_subscriptions WHERE service_id = $1 AND user_number = $2 AND device_id = $3
     RETURNING expires_at AS "expiresAt"`,
    serviceId,
    userNumber,
    deviceId,
  );
  return removed !== undefined && removed.expiresAt > now;
}


/** The sweeper's delete: expired subscriptions already tell nobody anything, so this only frees them. */
async function deleteExpiredEventSubscriptions(sql: Sql, now: number): Promise<number> {
  return sql.run('DELETE FROM event_subscriptions WHERE expires_at <= $1', now);
}

/** The subscriptions area on PostgreSQL. */
export function postgresSubscriptions(sql: Sql): SubscriptionsArea {
  return area(sql, {
    listPushSubscriptions, addPushSubscription, removePushSubscription, listEventSubscriptions,
    upsertEventSubscription, removeEventSubscription, deleteExpiredEventSubscriptions,
  });
}
