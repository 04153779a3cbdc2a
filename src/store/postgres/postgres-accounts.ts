/** Services, users, access tokens and the connections between users and services. */
import { patchService, type AccessToken, type Connection, type NewService, type Service, type ServicePatch, type User } from '../../core/model.js';
import { area, type Sql } from './database.js';
import { unregisterDevice, userDeviceIds } from './postgres-devices.js';
import { deleteShare } from './postgres-oauth.js';
import type { AccountsArea } from '../areas/accounts.js';

/** A service with its webhook secrets (newest first) in one row, shaped as `Service`. */
const SERVICE = `SELECT s.service_id AS "serviceId", s.name, s.key_hash AS "keyHash", s.allowed_devices AS "allowedDevices",
    s.callback_url AS "callbackUrl", s.event_callback_url AS "eventCallbackUrl", s.enabled,
    COALESCE((SELECT json_agg(json_build_object('secret', w.secret, 'createdAt', w.created_at, 'expiresAt', w.expires_at)
                              ORDER BY w.created_at DESC, w.id DESC)
              FROM webhook_secrets w WHERE w.service_id = s.service_id), '[]') AS "webhookSecrets",
    s.created_at AS "createdAt"
  FROM services s`;

/** One statement: the service, its first secret and its redirect URIs are written together or not at all. */
async function createService(sql: Sql, service: NewService, at: number): Promise<Service> {
  await sql.run(
    `WITH created AS (
       INSERT INTO services (service_id, name, key_hash, allowed_devices, callback_url, event_callback_url, enabled, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, true, $7)
       RETURNING service_id
     ), clients AS (
       INSERT INTO oauth_clients (service_id, redirect_uris) SELECT service_id, $9 FROM created WHERE cardinality($9::text[]) > 0
     )
     INSERT INTO webhook_secrets (service_id, secret, created_at) SELECT service_id, $8, $7 FROM created`,
    service.serviceId,
    service.name,
    service.keyHash,
    service.allowedDevices,
    service.callbackUrl,
    service.eventCallbackUrl,
    at,
    service.webhookSecret,
    service.redirectUris ?? [],
  );
  // What was just written, without reading it back.
  return {
    serviceId: service.serviceId,
    name: service.name,
    keyHash: service.keyHash,
    allowedDevices: [...service.allowedDevices],
    callbackUrl: service.callbackUrl,
    eventCallbackUrl: service.eventCallbackUrl,
    enabled: true,
    webhookSecrets: [{ secret: service.webhookSecret, createdAt: at, expiresAt: null }],
    createdAt: at,
  };
}

async function getService(sql: Sql, serviceId: string): Promise<Service | undefined> {
  return sql.one<Service>(`${SERVICE} WHERE s.service_id = $1`, serviceId);
}

async function listServices(sql: Sql): Promise<Service[]> {
  return sql.all<Service>(`${SERVICE} ORDER BY s.created_at, s.service_id COLLATE "C"`);
}

/** Read under its row lock, patched as the domain says, written whole: concurrent patches take turns. */
async function updateService(sql: Sql, serviceId: string, patch: ServicePatch, redirectUris?: string[]): Promise<Service | undefined> {
  return sql.transaction(async (tx) => {
    const current = await tx.one<Service>(`${SERVICE} WHERE s.service_id = $1 FOR UPDATE OF s`, serviceId);
    if (!current) return undefined;
    const next = patchService(current, patch);
    await tx.run(
      'UPDATE services SET name = $2, allowed_devices = $3, callback_url = $4, event_callback_url = $5, enabled = $6 WHERE service_id = $1',
      serviceId,
      next.name,
      next.allowedDevices,
      next.callbackUrl,
      next.eventCallbackUrl,
      next.enabled,
    );
    // A new URL is a new endpoint: it has not failed yet, and the old one's failures do not count toward its five days.
    if (next.callbackUrl !== current.callbackUrl || next.eventCallbackUrl !== current.eventCallbackUrl) {
      await tx.run('UPDATE delivery_endpoints SET failing_since = NULL WHERE service_id = $1 AND failing_since IS NOT NULL', serviceId);
    }
    // `enabled: true` also lifts a disabled endpoint (DESIGN C): with the rest of the change, or neither is written.
    if (patch.enabled === true) await tx.run('DELETE FROM delivery_endpoints WHERE service_id = $1', serviceId);
    if (redirectUris) {
      await tx.run(
        'INSERT INTO oauth_clients (service_id, redirect_uris) VALUES ($1, $2) ON CONFLICT (service_id) DO UPDATE SET redirect_uris = excluded.redirect_uris',
        serviceId,
        redirectUris,
      );
    }
    return next;
  });
}

async function rotateWebhookSecret(sql: Sql, serviceId: string, secret: string, at: number, previousExpiresAt: number): Promise<boolean> {
  return sql.transaction(async (tx) => {
    // Concurrent rotations of one service take turns, so exactly one secret stays current.
    if (!(await tx.one('SELECT 1 FROM services WHERE service_id = $1 FOR UPDATE', serviceId))) return false;
    // Only the current secret and one previous one sign (DESIGN J): an older previous one goes now,
    // and so does the current one when it is retired at once.
    await tx.run(
      'DELETE FROM webhook_secrets WHERE service_id = $1 AND (expires_at IS NOT NULL OR $2::double precision <= $3::double precision)',
      serviceId,
      previousExpiresAt,
      at,
    );
    await tx.run('UPDATE webhook_secrets SET expires_at = $1 WHERE service_id = $2 AND expires_at IS NULL', previousExpiresAt, serviceId);
    await tx.run('INSERT INTO webhook_secrets (service_id, secret, created_at) VALUES ($1, $2, $3)', serviceId, secret, at);
    return true;
  });
}

async function createUser(sql: Sql, user: User): Promise<boolean> {
  const inserted = await sql.run(
    'INSERT INTO users (user_number, country_code, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    user.userNumber,
    user.countryCode,
    user.createdAt,
  );
  return inserted === 1;
}

async function getUser(sql: Sql, userNumber: string): Promise<User | undefined> {
  return sql.one<User>(
    'SELECT user_number AS "userNumber", country_code AS "countryCode", created_at AS "createdAt" FROM users WHERE user_number = $1',
    userNumber,
  );
}

/**
 * Unregisters the user's devices (with their messages), then removes the user: its connections and
 * their subscriptions cascade; its tokens stay, revoked, so they answer 1202.
 */
async function deleteUser(sql: Sql, userNumber: string, at: number): Promise<boolean> {
  return sql.transaction(async (tx) => {
    // Locked first: a device cannot be shared with a user being deleted.
    if (!(await tx.one('SELECT 1 FROM users WHERE user_number = $1 FOR UPDATE', userNumber))) return false;
    for (const deviceId of await userDeviceIds(tx, userNumber)) await unregisterDevice(tx, deviceId, userNumber, at);
    await revokeTokens(tx, 'user_number = $2', [userNumber], at);
    return (await tx.run('DELETE FROM users WHERE user_number = $1', userNumber)) === 1;
  });
}

/** One statement: an unknown user fails the connection's foreign key, and the token goes with it. */
async function createToken(sql: Sql, token: Omit<AccessToken, 'revokedAt' | 'revokedReason'>, at: number): Promise<void> {
  await sql.run(
    `WITH issued AS (
       INSERT INTO access_tokens (token_hash, user_number, service_id, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5)
       RETURNING service_id, user_number
     )
     INSERT INTO connections (service_id, user_number, created_at) SELECT service_id, user_number, $5 FROM issued
     ON CONFLICT DO NOTHING`,
    token.tokenHash,
    token.userNumber,
    token.serviceId,
    token.expiresAt,
    at,
  );
}

async function getToken(sql: Sql, tokenHash: string): Promise<AccessToken | undefined> {
  return sql.one<AccessToken>(
    `SELECT token_hash AS "tokenHash", user_number AS "userNumber", service_id AS "serviceId", expires_at AS "expiresAt",
            revoked_at AS "revokedAt", revoked_reason AS "revokedReason"
     FROM access_tokens WHERE token_hash = $1`,
    tokenHash,
  );
}

async function getConnection(sql: Sql, serviceId: string, userNumber: string): Promise<Connection | undefined> {
  return sql.one<Connection>(
    `SELECT service_id AS "serviceId", user_number AS "userNumber", device_list_loaded_at AS "deviceListLoadedAt"
     FROM connections WHERE service_id = $1 AND user_number = $2`,
    serviceId,
    userNumber,
  );
}

async function listConnections(sql: Sql, userNumber: string): Promise<Connection[]> {
  return sql.all<Connection>(
    `SELECT service_id AS "serviceId", user_number AS "userNumber", device_list_loaded_at AS "deviceListLoadedAt"
     FROM connections WHERE user_number = $1 ORDER BY created_at, service_id COLLATE "C"`,
    userNumber,
  );
}

async function markDeviceListLoaded(sql: Sql, serviceId: string, userNumber: string, at: number): Promise<void> {
  await sql.run(
    'UPDATE connections SET device_list_loaded_at = $1 WHERE service_id = $2 AND user_number = $3 AND device_list_loaded_at IS NULL',
    at,
    serviceId,
    userNumber,
  );
}

/**
 * Deleting the connection cascades to the pair's subscriptions; outbox rows have no link to it. The
 * owner's consent goes in the same transaction, so that no consent outlives its connection or is
 * lost to one made between the two. The connection row goes first: a consent being saved holds it
 * (saveDeviceShare), so this waits for that consent and then deletes its share too.
 */
async function disconnect(sql: Sql, serviceId: string, userNumber: string, at: number): Promise<boolean> {
  return sql.transaction(async (tx) => {
    const deleted = (await tx.run('DELETE FROM connections WHERE service_id = $1 AND user_number = $2', serviceId, userNumber)) === 1;
    await revokeTokens(tx, 'service_id = $2 AND user_number = $3', [serviceId, userNumber], at);
    await deleteShare(tx, serviceId, userNumber);
    return deleted;
  });
}

/** Revokes as `disconnected`: the API answers 1202 for such a token, as DESIGN A.4 asks. `where` numbers its parameters from $2. */
async function revokeTokens(sql: Sql, where: string, params: string[], at: number): Promise<void> {
  await sql.run(
    `UPDATE access_tokens SET revoked_at = $1, revoked_reason = 'disconnected' WHERE ${where} AND revoked_at IS NULL`,
    at,
    ...params,
  );
}

/** The accounts area on PostgreSQL. */
export function postgresAccounts(sql: Sql): AccountsArea {
  return area(sql, {
    createService, getService, listServices, updateService, rotateWebhookSecret, createUser, getUser, deleteUser,
    createToken, getToken, getConnection, listConnections, markDeviceListLoaded, disconnect,
  });
}
