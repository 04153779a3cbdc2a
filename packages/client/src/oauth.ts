/**
 * OAuth 2.0 helpers for linking an owner's account (DESIGN G), written against the RFCs and the
 * server's metadata document (RFC 8414): authorization code with PKCE S256 (RFC 7636), the device
 * authorization grant (RFC 8628), refresh with rotation (RFC 6749 §6, OAuth 2.1) and revocation
 * (RFC 7009). The calling service is the client: `client_id` = serviceId, secret = serviceKey.
 */
import type { TokenProvider } from './client.js';
import { base64url, toBase64 } from './message-id.js';
import { sleep } from './sleep.js';

/** The fields of RFC 8414 metadata these helpers use. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  device_authorization_endpoint?: string;
  revocation_endpoint?: string;
  scopes_supported?: string[];
  code_challenge_methods_supported?: string[];
}

/** A service's credentials as an OAuth client (sent with `client_secret_basic`). */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** A fetch of your own; the global one by default. */
  fetch?: typeof fetch;
  /**
   * How long a request to the authorization server may take, in milliseconds (30 s by default, as
   * the client's): then it fails with the OAuthError `timeout`, rather than holding every call that
   * waits for the token.
   */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The scopes of DESIGN G. */
export type Scope = 'devices' | 'control' | 'push' | 'events';

export interface TokenSet {
  accessToken: string;
  tokenType: string;
  /** Epoch milliseconds; null when the server did not say. */
  expiresAt: number | null;
  /** Rotated on every use: always keep the latest one. */
  refreshToken?: string;
  scope?: string;
}

/** An error answer of the authorization server (RFC 6749 §5.2, RFC 8628 §3.5). */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(readonly error: string, readonly httpStatus: number, description?: string) {
    super(description ? `${error}: ${description}` : error);
  }
}

/**
 * Reads `/.well-known/oauth-authorization-server` of a deployment, under `baseUrl`'s path as the
 * client's calls are (a gateway's prefix stays).
 */
export async function discover(baseUrl: string, options: { fetch?: typeof fetch; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<AuthorizationServerMetadata> {
  const url = `${baseUrl.replace(/\/+$/, '')}/.well-known/oauth-authorization-server`;
  return within(url, options.timeoutMs, options.signal, async (signal) => {
    const response = await (options.fetch ?? fetch)(url, { signal });
    if (!response.ok) throw new OAuthError('metadata_unavailable', response.status, `GET ${url} answered ${response.status}`);
    return (await response.json()) as AuthorizationServerMetadata;
  });
}

/** Runs `request` with a signal that aborts after `timeoutMs` or with `signal`; the timeout is the OAuthError `timeout`. */
async function within<T>(url: string, timeoutMs: number | undefined, signal: AbortSignal | undefined, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ms = timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(ms);
  try {
    return await request(signal ? AbortSignal.any([signal, timeout]) : timeout);
  } catch (error) {
    if (timeout.aborted && !signal?.aborted) throw new OAuthError('timeout', 0, `${url} did not answer within ${ms} ms`);
    throw error;
  }
}

export interface Pkce {
  /** Keep it until the code exchange; never send it to the browser. */
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** A PKCE pair (RFC 7636 §4): a 43-character verifier from 32 random bytes and its SHA-256 challenge. */
export async function createPkce(): Promise<Pkce> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: await pkceChallenge(verifier), method: 'S256' };
}

/** `BASE64URL(SHA256(ASCII(verifier)))`. */
export async function pkceChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

/** A random `state` to bind the redirect to the session that started it. */
export function randomState(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(16)));
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scope: readonly Scope[] | string;
  state: string;
  codeChallenge: string;
}

/** The URL to send the owner's browser to (RFC 6749 §4.1.1 with PKCE S256). */
export function authorizationUrl(metadata: AuthorizationServerMetadata, request: AuthorizationRequest): string {
  const url = new URL(metadata.authorization_endpoint);
  // Added to the endpoint's own query, which RFC 6749 §3.1 says must be kept.
  const params = {
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    scope: scopeText(request.scope),
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

/** Exchanges the code of the redirect for tokens (RFC 6749 §4.1.3). */
export function exchangeCode(
  metadata: AuthorizationServerMetadata,
  client: OAuthClient,
  grant: { code: string; redirectUri: string; codeVerifier: string },
): Promise<TokenSet> {
  return tokenRequest(metadata.token_endpoint, client, {
    grant_type: 'authorization_code',
    code: grant.code,
    redirect_uri: grant.redirectUri,
    code_verifier: grant.codeVerifier,
  });
}

/** Trades a refresh token for new tokens; the answer's refresh token replaces the old one, which is spent. */
export function refreshTokens(metadata: AuthorizationServerMetadata, client: OAuthClient, refreshToken: string): Promise<TokenSet> {
  return tokenRequest(metadata.token_endpoint, client, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** RFC 8628 §3.2: what to show the owner, and what to poll with. */
export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  /** Epoch milliseconds after which the codes are void. */
  expiresAt: number;
  /** Seconds between polls. */
  interval: number;
}

/** Starts the device flow (RFC 8628 §3.1), for a partner without a browser. */
export async function startDeviceAuthorization(metadata: AuthorizationServerMetadata, client: OAuthClient, scope: readonly Scope[] | string): Promise<DeviceAuthorization> {
  if (!metadata.device_authorization_endpoint) throw new OAuthError('unsupported_grant_type', 0, 'the server offers no device_authorization_endpoint');
  const answer = await post(metadata.device_authorization_endpoint, client, { scope: scopeText(scope) });
  return {
    deviceCode: String(answer.device_code),
    userCode: String(answer.user_code),
    verificationUri: String(answer.verification_uri),
    ...(typeof answer.verification_uri_complete === 'string' ? { verificationUriComplete: answer.verification_uri_complete } : {}),
    expiresAt: Date.now() + Number(answer.expires_in) * 1000,
    interval: typeof answer.interval === 'number' ? answer.interval : 5,
  };
}

/** Polls the token endpoint until the owner approves (RFC 8628 §3.4–3.5): waits on `authorization_pending`, slows down on `slow_down`. */
export async function pollDeviceToken(
  metadata: AuthorizationServerMetadata,
  client: OAuthClient,
  authorization: DeviceAuthorization,
  options: { signal?: AbortSignal } = {},
): Promise<TokenSet> {
  let interval = authorization.interval;
  for (;;) {
    await sleep(interval * 1000, options.signal);
    if (Date.now() > authorization.expiresAt) throw new OAuthError('expired_token', 400, 'the device code expired before the owner approved');
    try {
      return await tokenRequest(
        metadata.token_endpoint,
        client,
        { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: authorization.deviceCode },
        options.signal,
      );
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === 'slow_down') interval += 5;
      else if (error.error !== 'authorization_pending') throw error;
    }
  }
}

/** Revokes a token (RFC 7009); revoking a refresh token ends the whole grant. */
export async function revokeToken(metadata: AuthorizationServerMetadata, client: OAuthClient, token: string, hint?: 'access_token' | 'refresh_token'): Promise<void> {
  if (!metadata.revocation_endpoint) throw new OAuthError('unsupported_token_type', 0, 'the server offers no revocation_endpoint');
  await post(metadata.revocation_endpoint, client, { token, ...(hint ? { token_type_hint: hint } : {}) });
}

/** Where a partner keeps one user's tokens (a database row, a secrets manager): the latest refresh token must survive restarts. */
export interface TokenStore {
  load(): Promise<TokenSet | null>;
  save(tokens: TokenSet): Promise<void>;
}

/**
 * A {@link TokenProvider} for `ApplianceCloud` that refreshes the access token shortly before it
 * expires and saves the rotated refresh token. Calls are served one at a time, each loading what the
 * previous saved: two refreshes with the same token would present a spent one, which revokes the
 * whole grant.
 */
export function refreshingTokenProvider(options: {
  metadata: AuthorizationServerMetadata;
  client: OAuthClient;
  store: TokenStore;
  /** Refresh this many seconds before expiry; default 60. */
  skewSeconds?: number;
  now?: () => number;
}): TokenProvider {
  const now = options.now ?? Date.now;
  const skewMs = (options.skewSeconds ?? 60) * 1000;
  const current = async (): Promise<string> => {
    const tokens = await options.store.load();
    if (!tokens) throw new OAuthError('invalid_grant', 0, 'no tokens stored: link the account first');
    if (tokens.expiresAt === null || tokens.expiresAt - skewMs > now()) return tokens.accessToken;
    if (!tokens.refreshToken) throw new OAuthError('invalid_grant', 0, 'the access token expired and there is no refresh token');
    const answered = await refreshTokens(options.metadata, options.client, tokens.refreshToken);
    // A server that does not rotate refresh tokens answers none (RFC 6749 §6): the one sent stays good.
    const fresh = answered.refreshToken ? answered : { ...answered, refreshToken: tokens.refreshToken };
    await options.store.save(fresh);
    return fresh.accessToken;
  };
  let queue: Promise<unknown> = Promise.resolve();
  return () => {
    const next = queue.then(current);
    queue = next.catch(() => undefined);
    return next;
  };
}

function scopeText(scope: readonly string[] | string): string {
  return typeof scope === 'string' ? scope : scope.join(' ');
}

async function tokenRequest(endpoint: string, client: OAuthClient, params: Record<string, string>, signal?: AbortSignal): Promise<TokenSet> {
  const answer = await post(endpoint, client, params, signal);
  if (typeof answer.access_token !== 'string') throw new OAuthError('invalid_response', 200, 'the token answer has no access_token');
  return {
    accessToken: answer.access_token,
    tokenType: String(answer.token_type ?? 'Bearer'),
    expiresAt: typeof answer.expires_in === 'number' ? Date.now() + answer.expires_in * 1000 : null,
    ...(typeof answer.refresh_token === 'string' ? { refreshToken: answer.refresh_token } : {}),
    ...(typeof answer.scope === 'string' ? { scope: answer.scope } : {}),
  };
}

/** A form POST authenticated with `client_secret_basic` (RFC 6749 §2.3.1: each part form-encoded first). */
async function post(endpoint: string, client: OAuthClient, params: Record<string, string>, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const credentials = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
  const { response, text } = await within(endpoint, client.timeoutMs, signal, async (signal) => {
    const response = await (client.fetch ?? fetch)(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${toBase64(new TextEncoder().encode(credentials))}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams(params).toString(),
      // A followed 307 would carry the code, refresh token or device code to wherever it points.
      redirect: 'manual',
      signal,
    });
    if (response.status >= 300 && response.status < 400) {
      throw new OAuthError('invalid_response', response.status, `${endpoint} redirected to ${response.headers.get('location') ?? 'nowhere'}: the grant was not sent there`);
    }
    return { response, text: await response.text() };
  });
  let answer: Record<string, unknown> = {};
  try {
    answer = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    throw new OAuthError('invalid_response', response.status, `${endpoint} answered ${response.status} without JSON`);
  }
  if (!response.ok) throw new OAuthError(String(answer.error ?? 'server_error'), response.status, typeof answer.error_description === 'string' ? answer.error_description : undefined);
  return answer;
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
