/**
 * The authorization server's storage (oidc-provider's adapter) over our store, so that every node of
 * a deployment sees the same codes, tokens, grants and sessions (DESIGN G). Clients are not stored
 * here: a client is a calling service, read from the store as it is.
 */
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';
import { hashSecret, type Clock } from '../ids.js';
import type { OAuthRecord } from '../store/areas/oauth.js';
import type { Store } from '../store/store.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Found by their id only, which is the bearer secret itself: stored without it. */
const BEARER_MODELS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode']);

/**
 * How long a device code is kept after it expires. A device still polling then is told
 * `expired_token` (RFC 8628, 3.5), so that it starts again, not `invalid_grant` as for a code never
 * issued. oidc-provider judges the code's expiry by its own `exp`, never by the store's.
 */
export const DEVICE_CODE_KEPT_S = 600;

/** A calling service as an OAuth client: its key's hash is the secret, compared as such (provider.ts). */
async function clientOf(store: Store, serviceId: string): Promise<AdapterPayload | undefined> {
  // Any client_id a request names: one the store refuses to look up (U+0000, storable.ts) is no service's,
  // where an error would reach oidc-provider and answer server_error.
  if (serviceId.includes('\0')) return undefined;
  const service = await store.getService(serviceId);
  if (!service || !service.enabled) return undefined;
  const redirectUris = await store.getRedirectUris(serviceId);
  const codeFlow = redirectUris.length > 0;
  return {
    client_id: serviceId,
    client_secret: service.keyHash,
    client_name: service.name,
    redirect_uris: redirectUris,
    grant_types: [...(codeFlow ? ['authorization_code'] : []), 'refresh_token', DEVICE_CODE_GRANT],
    response_types: codeFlow ? ['code'] : [],
    token_endpoint_auth_method: 'client_secret_basic',
  };
}

/**
 * oidc-provider's storage over the store. `grantRevoked` is awaited when a grant is destroyed, which
 * oidc-provider does only when it revokes one. `reused` is the error for a code or token consumed
 * already: oidc-provider's own (this module is loaded at start, oidc-provider only when first used).
 */
export function storeAdapter(store: Store, clock: Clock, grantRevoked: (grantId: string) => Promise<void>, reused: (message: string) => Error): AdapterFactory {
  return (model: string): Adapter => {
    const toPayload = (id: string | undefined, record: { payload: string; consumedAt: number | null } | undefined): AdapterPayload | undefined => {
      if (!record) return undefined;
      const payload = JSON.parse(record.payload) as AdapterPayload;
      if (id !== undefined && BEARER_MODELS.has(model)) payload.jti = id;
      if (record.consumedAt !== null) payload.consumed = Math.floor(record.consumedAt / 1000);
      return payload;
    };
    return {
      async upsert(id, payload, expiresIn) {
        const { jti: _jti, ...withoutId } = payload;
        await store.saveOAuthRecord({
          model,
          key: hashSecret(id),
          payload: JSON.stringify(BEARER_MODELS.has(model) ? withoutId : payload),
          // A grant is its own grant: revoking it deletes it with its codes and tokens.
          grantId: model === 'Grant' ? id : (payload.grantId ?? null),
          userCode: payload.userCode ?? null,
          uid: payload.uid ?? null,
          expiresAt: expiresIn === undefined ? null : clock.now() + (expiresIn + (model === 'DeviceCode' ? DEVICE_CODE_KEPT_S : 0)) * 1000,
          consumedAt: typeof payload.consumed === 'number' ? payload.consumed * 1000 : null,
        });
      },
      async find(id) {
        if (model === 'Client') return clientOf(store, id);
        return toPayload(id, await store.findOAuthRecord(model, hashSecret(id), clock.now()));
      },
      async findByUserCode(userCode) {
        return toPayload(undefined, await store.findOAuthRecordByUserCode(model, userCode, clock.now()));
      },
      async findByUid(uid) {
        return toPayload(undefined, await store.findOAuthRecordByUid(model, uid, clock.now()));
      },
      async consume(id) {
        const key = hashSecret(id);
        if (await store.consumeOAuthRecord(model, key, clock.now())) return;
        // oidc-provider checks `consumed` on the record it read, then consumes: a code or refresh token
        // sent twice at once passed both checks and gave two sets of tokens. The loser is a reuse, and
        // a reuse revokes the grant, as oidc-provider does when it sees one in turn (DESIGN G).
        const grantId = (await store.findOAuthRecord(model, key, clock.now()))?.grantId;
        if (grantId) {
          await store.revokeOAuthGrant(grantId);
          await grantRevoked(grantId);
        }
        throw reused(`${model} already used`);
      },
      async destroy(id) {
        await store.destroyOAuthRecord(model, hashSecret(id));
        if (model === 'Grant') await grantRevoked(id);
      },
      async revokeByGrantId(grantId) {
        await store.revokeOAuthGrant(grantId);
      },
    };
  };
}

/** An access token the authorization server issued, as the partner checks read it. */
export interface IssuedAccessToken {
  userNumber: string;
  serviceId: string;
  grantId: string;
  scopes: string[];
}

/** Reads an AccessToken record; undefined when it lacks what every issued token carries. */
export function issuedAccessToken(record: OAuthRecord): IssuedAccessToken | undefined {
  const payload = JSON.parse(record.payload) as AdapterPayload;
  const { accountId, clientId, grantId, scope } = payload;
  if (!accountId || !clientId || !grantId) return undefined;
  return { userNumber: accountId, serviceId: clientId, grantId, scopes: (scope ?? '').split(' ').filter(Boolean) };
}
