/** The OAuth area (src/store/areas/oauth.ts) on SQLite. */
import type { DeviceShare, OAuthArea, OAuthRecord, OwnerLogin } from '../areas/oauth.js';
import type { Sql } from './database.js';
import { parseJson } from './rows.js';

interface RecordRow {
  model: string;
  key: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

interface ShareRow {
  service_id: string;
  user_number: string;
  grant_id: string;
  scopes: string;
  device_ids: string | null;
  created_at: number;
}

const RECORD = 'SELECT model, key, payload, grant_id, user_code, uid, expires_at, consumed_at FROM oauth_records';
const UNEXPIRED = '(expires_at IS NULL OR expires_at > ?)';
const SHARE = 'SELECT service_id, user_number, grant_id, scopes, device_ids, created_at FROM device_shares';

/**
 * SQL: the pair (`service`, `user`) may be told about device `device` (SQL expressions): it has no
 * share (a pair linked by the admin API sees every device), or its share holds every device or this one.
 */
export function sharedWith(service: string, user: string, device: string): string {
  return `NOT EXISTS (SELECT 1 FROM device_shares g WHERE g.service_id = ${service} AND g.user_number = ${user}
    AND g.device_ids IS NOT NULL AND ${device} NOT IN (SELECT value FROM json_each(g.device_ids)))`;
}

function toRecord(row: RecordRow): OAuthRecord {
  return {
    model: row.model,
    key: row.key,
    payload: row.payload,
    grantId: row.grant_id,
    userCode: row.user_code,
    uid: row.uid,
    expiresAt: row.expires_at,
    consumedAt: row.consumed_at,
  };
}

function toShare(row: ShareRow): DeviceShare {
  return {
    serviceId: row.service_id,
    userNumber: row.user_number,
    grantId: row.grant_id,
    scopes: parseJson<string[]>(row.scopes),
    deviceIds: row.device_ids === null ? null : parseJson<string[]>(row.device_ids),
    createdAt: row.created_at,
  };
}

/** Unlinks the pair inside a write: its share and its grant's records but its access tokens (OAuthArea.deleteDeviceShare). */
export function deleteShare(sql: Sql, serviceId: string, userNumber: string): boolean {
  const removed = sql.one<{ grant_id: string }>('DELETE FROM device_shares WHERE service_id = ? AND user_number = ? RETURNING grant_id', serviceId, userNumber);
  if (removed) sql.run(`DELETE FROM oauth_records WHERE grant_id = ? AND model <> 'AccessToken'`, removed.grant_id);
  return removed !== undefined;
}

export function sqliteOAuth(sql: Sql): OAuthArea {
  const find = (where: string, ...params: (string | number)[]) => {
    const row = sql.one<RecordRow>(`${RECORD} WHERE ${where} AND ${UNEXPIRED}`, ...params);
    return Promise.resolve(row && toRecord(row));
  };

  return {
    async saveOAuthRecord(r) {
      sql.run(
        `INSERT INTO oauth_records (model, key, payload, grant_id, user_code, uid, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (model, key) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code,
           uid = excluded.uid, expires_at = excluded.expires_at, consumed_at = excluded.consumed_at`,
        r.model, r.key, r.payload, r.grantId, r.userCode, r.uid, r.expiresAt, r.consumedAt,
      );
    },
    findOAuthRecord: (model, key, now) => find('model = ? AND key = ?', model, key, now),
    findOAuthRecordByUserCode: (model, userCode, now) => find('model = ? AND user_code = ?', model, userCode, now),
    findOAuthRecordByUid: (model, uid, now) => find('model = ? AND uid = ?', model, uid, now),
    async consumeOAuthRecord(model, key, at) {
      return sql.run('UPDATE oauth_records SET consumed_at = ? WHERE model = ? AND key = ? AND consumed_at IS NULL', at, model, key) === 1;
    },
    async destroyOAuthRecord(model, key) {
      sql.run('DELETE FROM oauth_records WHERE model = ? AND key = ?', model, key);
    },
    async revokeOAuthGrant(grantId) {
      sql.run('DELETE FROM oauth_records WHERE grant_id = ?', grantId);
    },
    async deleteExpiredOAuthRecords(now, limit) {
      return sql.run('DELETE FROM oauth_records WHERE rowid IN (SELECT rowid FROM oauth_records WHERE expires_at <= ? LIMIT ?)', now, limit);
    },

    async saveDeviceShare(share) {
      sql.write(() => {
        const earlier = sql.one<{ grant_id: string }>('SELECT grant_id FROM device_shares WHERE service_id = ? AND user_number = ?', share.serviceId, share.userNumber);
        if (earlier && earlier.grant_id !== share.grantId) deleteShare(sql, share.serviceId, share.userNumber);
        sql.run(
          `INSERT INTO device_shares (service_id, user_number, grant_id, scopes, device_ids, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (service_id, user_number) DO UPDATE SET grant_id = excluded.grant_id, scopes = excluded.scopes, device_ids = excluded.device_ids`,
          share.serviceId, share.userNumber, share.grantId, JSON.stringify(share.scopes),
          share.deviceIds === null ? null : JSON.stringify(share.deviceIds), share.createdAt,
        );
        sql.run('INSERT INTO connections (service_id, user_number, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', share.serviceId, share.userNumber, share.createdAt);
      });
    },
    async getDeviceShare(serviceId, userNumber) {
      const row = sql.one<ShareRow>(`${SHARE} WHERE service_id = ? AND user_number = ?`, serviceId, userNumber);
      return row && toShare(row);
    },
    async getDeviceShareByGrant(grantId) {
      const row = sql.one<ShareRow>(`${SHARE} WHERE grant_id = ?`, grantId);
      return row && toShare(row);
    },
    async listDeviceShares(userNumber) {
      return sql.all<ShareRow>(`${SHARE} WHERE user_number = ? ORDER BY created_at, service_id`, userNumber).map(toShare);
    },
    async deleteDeviceShare(serviceId, userNumber) {
      return sql.write(() => deleteShare(sql, serviceId, userNumber));
    },

    async setOwnerLogin(login) {
      return sql.write(() => {
        const owner = sql.one<{ user_number: string }>('SELECT user_number FROM owner_logins WHERE email = ?', login.email);
        if (owner && owner.user_number !== login.userNumber) return false;
        sql.run(
          `INSERT INTO owner_logins (user_number, email, password_hash) VALUES (?, ?, ?)
           ON CONFLICT (user_number) DO UPDATE SET email = excluded.email, password_hash = excluded.password_hash`,
          login.userNumber, login.email, login.passwordHash,
        );
        return true;
      });
    },
    async findOwnerLogin(email) {
      const row = sql.one<{ user_number: string; email: string; password_hash: string }>(
        'SELECT user_number, email, password_hash FROM owner_logins WHERE email = ?',
        email,
      );
      return row && { userNumber: row.user_number, email: row.email, passwordHash: row.password_hash } satisfies OwnerLogin;
    },

    async getRedirectUris(serviceId) {
      const row = sql.one<{ redirect_uris: string }>('SELECT redirect_uris FROM oauth_clients WHERE service_id = ?', serviceId);
      return row ? parseJson<string[]>(row.redirect_uris) : [];
    },

    async sharedSecret(name, candidate) {
      sql.run('INSERT INTO shared_secrets (name, secret) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', name, candidate);
      return sql.one<{ secret: string }>('SELECT secret FROM shared_secrets WHERE name = ?', name)!.secret;
    },
  };
}
