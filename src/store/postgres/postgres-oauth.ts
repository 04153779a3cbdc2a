/** The OAuth area (src/store/areas/oauth.ts) on PostgreSQL. */
import type { DeviceShare, OAuthArea, OAuthRecord, OwnerLogin } from '../areas/oauth.js';
import type { Sql } from './database.js';

const RECORD = `SELECT model, key, payload, grant_id AS "grantId", user_code AS "userCode", uid, expires_at AS "expiresAt",
  consumed_at AS "consumedAt" FROM oauth_records`;
const SHARE = `SELECT service_id AS "serviceId", user_number AS "userNumber", grant_id AS "grantId", scopes, device_ids AS "deviceIds",
  created_at AS "createdAt" FROM device_shares`;

/**
 * SQL: the pair (`service`, `user`) may be told about device `device` (SQL expressions): it has no
 * share (a pair linked by the admin API sees every device), or its share holds every device or this one.
 */
export function sharedWith(service: string, user: string, device: string): string {
  return `NOT EXISTS (SELECT 1 FROM device_shares g WHERE g.service_id = ${service} AND g.user_number = ${user}
    AND g.device_ids IS NOT NULL AND NOT (${device} = ANY (g.device_ids)))`;
}

/** Unlinks the pair inside `tx`: its share and its grant's records but its access tokens (OAuthArea.deleteDeviceShare). */
export async function deleteShare(tx: Sql, serviceId: string, userNumber: string): Promise<boolean> {
  const removed = await tx.one<{ grantId: string }>(
    'DELETE FROM device_shares WHERE service_id = $1 AND user_number = $2 RETURNING grant_id AS "grantId"',
    serviceId,
    userNumber,
  );
  if (removed) await tx.run(`DELETE FROM oauth_records WHERE grant_id = $1 AND model <> 'AccessToken'`, removed.grantId);
  return removed !== undefined;
}

export function postgresOAuth(sql: Sql): OAuthArea {
  const find = (where: string, ...params: (string | number)[]) =>
    sql.one<OAuthRecord>(`${RECORD} WHERE ${where} AND (expires_at IS NULL OR expires_at > $3)`, ...params);

  return {
    async saveOAuthRecord(r) {
      await sql.run(
        `INSERT INTO oauth_records (model, key, payload, grant_id, user_code, uid, expires_at, consumed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (model, key) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code,
           uid = excluded.uid, expires_at = excluded.expires_at, consumed_at = excluded.consumed_at`,
        r.model, r.key, r.payload, r.grantId, r.userCode, r.uid, r.expiresAt, r.consumedAt,
      );
    },
    findOAuthRecord: (model, key, now) => find('model = $1 AND key = $2', model, key, now),
    findOAuthRecordByUserCode: (model, userCode, now) => find('model = $1 AND user_code = $2', model, userCode, now),
    findOAuthRecordByUid: (model, uid, now) => find('model = $1 AND uid = $2', model, uid, now),
    async consumeOAuthRecord(model, key, at) {
      return (await sql.run('UPDATE oauth_records SET consumed_at = $3 WHERE model = $1 AND key = $2 AND consumed_at IS NULL', model, key, at)) === 1;
    },
    async destroyOAuthRecord(model, key) {
      await sql.run('DELETE FROM oauth_records WHERE model = $1 AND key = $2', model, key);
    },
    async revokeOAuthGrant(grantId) {
      await sql.run('DELETE FROM oauth_records WHERE grant_id = $1', grantId);
    },
    async deleteExpiredOAuthRecords(now, limit) {
      return sql.run(
        'DELETE FROM oauth_records WHERE (model, key) IN (SELECT model, key FROM oauth_records WHERE expires_at <= $1 LIMIT $2)',
        now,
        limit,
      );
    },

    async saveDeviceShare(share) {
      await sql.transaction(async (tx) => {
        // The pair's connection row first, locked (a no-op update when it exists), as disconnect takes it
        // first: a consent and an unlink at once then go one after the other, never leaving a share
        // without its connection.
        await tx.run(
          `INSERT INTO connections (service_id, user_number, created_at) VALUES ($1, $2, $3)
           ON CONFLICT (service_id, user_number) DO UPDATE SET created_at = connections.created_at`,
          share.serviceId, share.userNumber, share.createdAt,
        );
        const earlier = await tx.one<{ grantId: string }>(
          'SELECT grant_id AS "grantId" FROM device_shares WHERE service_id = $1 AND user_number = $2 FOR UPDATE',
          share.serviceId,
          share.userNumber,
        );
        if (earlier && earlier.grantId !== share.grantId) await deleteShare(tx, share.serviceId, share.userNumber);
        await tx.run(
          `INSERT INTO device_shares (service_id, user_number, grant_id, scopes, device_ids, created_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (service_id, user_number) DO UPDATE SET grant_id = excluded.grant_id, scopes = excluded.scopes, device_ids = excluded.device_ids`,
          share.serviceId, share.userNumber, share.grantId, share.scopes, share.deviceIds, share.createdAt,
        );
      });
    },
    getDeviceShare: (serviceId, userNumber) => sql.one<DeviceShare>(`${SHARE} WHERE service_id = $1 AND user_number = $2`, serviceId, userNumber),
    getDeviceShareByGrant: (grantId) => sql.one<DeviceShare>(`${SHARE} WHERE grant_id = $1`, grantId),
    listDeviceShares: (userNumber) => sql.all<DeviceShare>(`${SHARE} WHERE user_number = $1 ORDER BY created_at, service_id COLLATE "C"`, userNumber),
    deleteDeviceShare: (serviceId, userNumber) => sql.transaction((tx) => deleteShare(tx, serviceId, userNumber)),

    async setOwnerLogin(login) {
      const saved = await sql.one<{ userNumber: string }>(
        `INSERT INTO owner_logins (user_number, email, password_hash) VALUES ($1, $2, $3)
         ON CONFLICT (user_number) DO UPDATE SET email = excluded.email, password_hash = excluded.password_hash
         RETURNING user_number AS "userNumber"`,
        login.userNumber, login.email, login.passwordHash,
      ).catch((error: unknown) => {
        // The email is another user's (unique_violation).
        if ((error as { code?: string }).code === '23505') return undefined;
        throw error;
      });
      return saved !== undefined;
    },
    findOwnerLogin: (email) =>
      sql.one<OwnerLogin>('SELECT user_number AS "userNumber", email, password_hash AS "passwordHash" FROM owner_logins WHERE email = $1', email),

    async getRedirectUris(serviceId) {
      const row = await sql.one<{ uris: string[] }>('SELECT redirect_uris AS uris FROM oauth_clients WHERE service_id = $1', serviceId);
      return row?.uris ?? [];
    },

    async sharedSecret(name, candidate) {
      await sql.run('INSERT INTO shared_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', name, candidate);
      return (await sql.one<{ secret: string }>('SELECT secret FROM shared_secrets WHERE name = $1', name))!.secret;
    },
  };
}
