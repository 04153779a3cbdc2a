/** Services, users, access tokens and the connections between users and services. */
import { patchService, type AccessToken, type Connection, type NewService, type Service, type ServicePatch, type User } from '../../core/model.js';
import { area, type Sql } from './database.js';
import { unregisterDevice, userDeviceIds } from './sqlite-devices.js';
import { deleteShare } from './sqlite-oauth.js';
import {
  flag,
  toConnection,
  toService,
  toToken,
  toUser,
  type ConnectionRow,
  type SecretRow,
  type ServiceRow,
  type TokenRow,
  type UserRow,
} from './rows.js';
import type { AccountsArea } from '../areas/accounts.js';
import { refuseNul } from '../storable.js';

const SERVICE_COLUMNS = 'service_id, name, key_hash, allowed_devices, callback_url, event_callback_url, enabled, created_at';

function createService(sql: Sql, service: NewService, at: number): Service {
  return sql.write(() => {
    sql.run(
      `INSERT INTO services (service_id, name, key_hash, allowed_devices, callback_url, event_callback_url, enabled, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 1, ?)`,
      service.serviceId,
      service.name,
      service.keyHash,
      JSON.stringify(service.allowedDevices),
      service.callbackUrl,
      service.eventCallbackUrl,
      at,
    );
    sql.run('INSERT INTO webhook_secrets (service_id, secret, created_at) VALUES (?, ?, ?)', service.serviceId, service.webhookSecret, at);
    if (service.redirectUris?.length) setRedirectUris(sql, service.serviceId, service.redirectUris);
    return mustGetService(sql, service.serviceId);
  });
}

function setRedirectUris(sql: Sql, serviceId: string, uris: string[]): void {
  // Kept as JSON text, where U+0000 is an escape the statement's floor does not see; PostgreSQL's text[] refuses it.
  refuseNul(uris);
  sql.run(
    'INSERT INTO oauth_clients (service_id, redirect_uris) VALUES (?, ?) ON CONFLICT (service_id) DO UPDATE SET redirect_uris = excluded.redirect_uris',
    serviceId,
    JSON.stringify(uris),
  );
}

function getService(sql: Sql, serviceId: string): Service | undefined {
  const row = sql.one<ServiceRow>(`SELECT ${SERVICE_COLUMNS} FROM services WHERE service_id = ?`, serviceId);
  return row && toService(row, secretsOf(sql, serviceId));
}

function mustGetService(sql: Sql, serviceId: string): Service {
  const service = getService(sql, serviceId);
  if (!service) throw new Error(`Service ${serviceId} vanished inside its own transaction`);
  return service;
}

/** Newest first. */
function secretsOf(sql: Sql, serviceId: string): SecretRow[] {
  return sql.all<SecretRow>(
    'SELECT secret, created_at, expires_at FROM webhook_secrets WHERE service_id = ? ORDER BY created_at DESC, id DESC',
    serviceId,
  );
}

function listServices(sql: Sql): Service[] {
  const rows = sql.all<ServiceRow>(`SELECT ${SERVICE_COLUMNS} FROM services ORDER BY created_at, service_id`);
  return rows.map((row) => toService(row, secretsOf(sql, row.service_id)));
}

function updateService(sql: Sql, serviceId: string, patch: ServicePatch, redirectUris?: string[]): Service | undefined {
  return sql.write(() => {
    const current = getService(sql, serviceId);
    if (!current) return undefined;
    const next = patchService(current, patch);
    sql.run(
      `UPDATE services SET name = ?, allowed_devices = ?, callback_url = ?, event_callback_url = ?, enabled = ?
       WHERE service_id = ?`,
      next.name,
      JSON.stringify(next.allowedDevices),
      next.callbackUrl,
      next.eventCallbackUrl,
      flag(next.enabled),
      serviceId,
    );
    // A new URL is a new endpoint: it has not failed yet, and the old one's failures do not count toward its five days.
    if (next.callbackUrl !== current.callbackUrl || next.eventCallbackUrl !== current.eventCallbackUrl) {
      sql.run('UPDATE delivery_endpoints SET failing_since = NULL WHERE service_id = ? AND failing_since IS NOT NULL', serviceId);
    }
    // `enabled: true` also lifts a disabled endpoint (DESIGN C): with the rest of the change, or neither is written.
    if (patch.enabled === true) sql.run('DELETE FROM delivery_endpoints WHERE service_id = ?', serviceId);
    if (redirectUris) setRedirectUris(sql, serviceId, redirectUris);
    return mustGetService(sql, serviceId);
  });
}

function rotateWebhookSecret(sql: Sql, serviceId: string, secret: string, at: number, previousExpiresAt: number): boolean {
  return sql.write(() => {
    if (!sql.one('SELECT 1 FROM services WHERE service_id = ?', serviceId)) return false;
    // Only the current secret and one previous one sign (DESIGN J): an older previous one goes now,
    // and so does the current one when it is retired at once.
    sql.run('DELETE FROM webhook_secrets WHERE service_id = ? AND (expires_at IS NOT NULL OR ? <= ?)', serviceId, previousExpiresAt, at);
    sql.run('UPDATE webhook_secrets SET expires_at = ? WHERE service_id = ? AND expires_at IS NULL', previousExpiresAt, serviceId);
    sql.run('INSERT INTO webhook_secrets (service_id, secret, created_at) VALUES (?, ?, ?)', serviceId, secret, at);
    return true;
  });
}

function createUser(sql: Sql, user: User): boolean {
  return (
    sql.run(
      'INSERT INTO users (user_number, country_code, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      user.userNumber,
      user.countryCode,
      user.createdAt,
    ) === 1
  );
}

function getUser(sql: Sql, userNumber: string): User | undefined {
  const row = sql.one<UserRow>('SELECT user_number, country_code, created_at FROM users WHERE user_number = ?', userNumber);
  return row && toUser(row);
}

/**
 * Unregisters the user's devices (with their messages), then removes the user: its connections and
 * their subscriptions cascade; its tokens stay, revoked, so they answer 1202.
 */
function deleteUser(sql: Sql, userNumber: string, at: number): boolean {
  return sql.write(() => {
    if (!getUser(sql, userNumber)) return false;
    for (const deviceId of userDeviceIds(sql, userNumber)) unregisterDevice(sql, deviceId, userNumber, at);
    revokeTokens(sql, 'user_number = ?', [userNumber], at);
    return sql.run('DELETE FROM users WHERE user_number = ?', userNumber) === 1;
  });
}

function createToken(sql: Sql, token: Omit<AccessToken, 'revokedAt' | 'revokedReason'>, at: number): void {
  sql.write(() => {
    sql.run(
      'INSERT INTO access_tokens (token_hash, user_number, service_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?)',
      token.tokenHash,
      token.userNumber,
      token.serviceId,
      token.expiresAt,
      at,
    );
    sql.run(
      'INSERT INTO connections (service_id, user_number, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      token.serviceId,
      token.userNumber,
      at,
    );
  });
}

function getToken(sql: Sql, tokenHash: string): AccessToken | undefined {
  const row = sql.one<TokenRow>(
    'SELECT token_hash, user_number, service_id, expires_at, revoked_at, revoked_reason FROM access_tokens WHERE token_hash = ?',
    tokenHash,
  );
  return row && toToken(row);
}

function getConnection(sql: Sql, serviceId: string, userNumber: string): Connection | undefined {
  const row = sql.one<ConnectionRow>(
    'SELECT service_id, user_number, device_list_loaded_at FROM connections WHERE service_id = ? AND user_number = ?',
    serviceId,
    userNumber,
  );
  return row && toConnection(row);
}

function listConnections(sql: Sql, userNumber: string): Connection[] {
  return sql
    .all<ConnectionRow>('SELECT service_id, user_number, device_list_loaded_at FROM connections WHERE user_number = ? ORDER BY created_at, service_id', userNumber)
    .map(toConnection);
}

function markDeviceListLoaded(sql: Sql, serviceId: string, userNumber: string, at: number): void {
  sql.run(
    'UPDATE connections SET device_list_loaded_at = ? WHERE service_id = ? AND user_number = ? AND device_list_loaded_at IS NULL',
    at,
    serviceId,
    userNumber,
  );
}

/** Deleting the connection cascades to the pair's subscriptions; outbox rows have no link to it. */
function disconnect(sql: Sql, serviceId: string, userNumber: string, at: number): boolean {
  return sql.write(() => {
    revokeTokens(sql, 'service_id = ? AND user_number = ?', [serviceId, userNumber], at);
    // The owner's consent goes in the same write (see the PostgreSQL store's disconnect).
    deleteShare(sql, serviceId, userNumber);
    return sql.run('DELETE FROM connections WHERE service_id = ? AND user_number = ?', serviceId, userNumber) === 1;
  });
}

/** Revokes as `disconnected`: the API answers 1202 for such a token, as DESIGN A.4 asks. */
function revokeTokens(sql: Sql, where: string, params: string[], at: number): void {
  sql.run(
    `UPDATE access_tokens SET revoked_at = ?, revoked_reason = 'disconnected' WHERE ${where} AND revoked_at IS NULL`,
    at,
    ...params,
  );
}

/** The accounts area on SQLite. */
export function sqliteAccounts(sql: Sql): AccountsArea {
  return area(sql, {
    createService, getService, listServices, updateService, rotateWebhookSecret, createUser, getUser, deleteUser,
    createToken, getToken, getConnection, listConnections, markDeviceListLoaded, disconnect,
  });
}
