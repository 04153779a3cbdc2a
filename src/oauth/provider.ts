/**
 * The authorization server of DESIGN G: panva's oidc-provider does the protocol (authorization code
 * with PKCE S256, refresh tokens that rotate and revoke their grant when reused, the device
 * authorization grant, revocation, RFC 8414 metadata); this module configures it over our store and
 * our pages. Its routes are relative to `/oauth`, where routes.ts mounts it.
 */
import { generateKeyPairSync, timingSafeEqual } from 'node:crypto';
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { SCOPES } from '../core/owners.js';
import { hashSecret, randomId, type Clock } from '../ids.js';
import type { Store } from '../store/store.js';
import { html, NOT_FRAMED } from '../web/html.js';
import { storeAdapter } from './adapter.js';
import { MOUNT, PARTNER_RESOURCE } from './constants.js';
import { deviceCodePage, deviceConfirmPage, messagePage } from './pages.js';


const DAY = 24 * 60 * 60;

export interface ProviderDeps {
  store: Store;
  clock: Clock;
  accessTokenTtlSeconds: number;
  /** A grant was revoked: Owners.grantRevoked. */
  grantRevoked(grantId: string): Promise<void>;
}

/** The form oidc-provider built for a device-flow page: its action and its own CSRF field, reused in ours. */
function formTarget(form: string): { action: string; xsrf: string } {
  const action = /action="([^"]+)"/.exec(form)?.[1] ?? `${MOUNT}/device`;
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)?.[1] ?? '';
  return { action, xsrf };
}

function hidden(xsrf: string, fields: Record<string, string> = {}) {
  return html`<input type="hidden" name="xsrf" value="${xsrf}">${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;
}

function render(ctx: KoaContextWithOIDC, document: string): void {
  ctx.type = 'html';
  ctx.set(NOT_FRAMED);
  ctx.body = document;
}

/** The signing key (id tokens, should a client ask for openid), generated once per deployment and shared by its nodes. */
function newSigningKey(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: randomId(8), use: 'sig', alg: 'RS256' });
}

/**
 * oidc-provider's prompts, with one more reason to sign in: a session whose owner was deleted since
 * (its consent checks read the account, and failed with a 500 on every authorization of that browser).
 */
function prompts(): interactionPolicy.Prompt[] {
  const { base, Check } = interactionPolicy;
  const policy = base();
  policy.get('login')!.checks.add(new Check('account_gone', 'the signed-in owner no longer exists', (ctx) =>
    ctx.oidc.session?.accountId !== undefined && ctx.oidc.account === undefined ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
  ));
  return policy;
}

export async function createProvider(deps: ProviderDeps, issuer: string): Promise<Provider> {
  const { store, clock, accessTokenTtlSeconds, grantRevoked } = deps;
  const cookieKey = await store.sharedSecret('oauth-cookie-key', randomId(32));
  const signingKey = JSON.parse(await store.sharedSecret('oauth-signing-key', newSigningKey())) as Record<string, string>;

  const configuration: Configuration = {
    adapter: storeAdapter(store, clock, grantRevoked, (message) => new errors.InvalidGrant(message)),
    async findAccount(_ctx, sub) {
      return (await store.getUser(sub)) ? { accountId: sub, claims: () => ({ sub }) } : undefined;
    },
    jwks: { keys: [signingKey] },
    // The owner's session is SameSite=Lax (DESIGN G), as ours is; oidc-provider's default is None, with a legacy twin.
    cookies: { keys: [cookieKey], long: { httpOnly: true, sameSite: 'lax' } },
    pkce: { required: () => true },
    responseTypes: ['code'],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    routes: {
      authorization: '/authorize',
      token: '/token',
      revocation: '/revoke',
      device_authorization: '/device_authorization',
      code_verification: '/device',
      jwks: '/jwks',
      userinfo: '/userinfo',
    },
    ttl: {
      AccessToken: accessTokenTtlSeconds,
      AuthorizationCode: 60,
      DeviceCode: 600,
      RefreshToken: 30 * DAY,
      Grant: 365 * DAY,
      Interaction: 3600,
      Session: 14 * DAY,
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Every use gives a new refresh token; oidc-provider revokes the whole grant when a used one comes back.
    rotateRefreshToken: true,
    interactions: { policy: prompts(), url: (_ctx, interaction) => `${MOUNT}/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      // OpenID Connect's RP-initiated logout is no part of DESIGN G: its page was oidc-provider's own,
      // and its sign-out revokes every grant of the browser's session, unlinking the owner's services.
      // An owner signs out on /account, which ends the session and leaves the links.
      rpInitiatedLogout: { enabled: false },
      // A client revokes only its own tokens: oidc-provider refuses another client's.
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => PARTNER_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: SCOPES.join(' '), accessTokenFormat: 'opaque', accessTokenTTL: accessTokenTtlSeconds }),
      },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource(ctx, form, _out, error) {
          const { action, xsrf } = formTarget(form);
          render(ctx, deviceCodePage({ action, hidden: hidden(xsrf) }, error ? 'That code is wrong or has expired; try again.' : undefined));
        },
        userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
          const { action, xsrf } = formTarget(form);
          render(ctx, deviceConfirmPage({ action, hidden: hidden(xsrf, { user_code: userCode }) }, { clientName: client.clientName ?? client.clientId, userCode }));
        },
        successSource(ctx) {
          render(ctx, messagePage('Linked', `${ctx.oidc.client?.clientName ?? 'The app'} is linked to your appliances. You may close this page.`));
        },
      },
    },
    async renderError(ctx, out) {
      render(ctx, messagePage('Something went wrong', `${out.error}: ${out.error_description ?? ''}`));
    },
  };

  const provider = new Provider(issuer, configuration);
  // Secure cookies and https URLs behind the TLS proxy of DESIGN A.1, which says so in X-Forwarded-Proto.
  provider.proxy = true;
  // The partner interface's scopes are a resource server's, which oidc-provider leaves out of its
  // metadata; a client reads there what it may ask for (DESIGN G, RFC 8414 scopes_supported).
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery') {
      const body = ctx.body as { scopes_supported?: string[] };
      body.scopes_supported = [...new Set([...(body.scopes_supported ?? []), ...SCOPES])];
    }
  });
  // The secret of a client is a service key, which we store only hashed (DESIGN A.2): compare hashes.
  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientSecret?: string }, actual: string): boolean {
    const stored = Buffer.from(this.clientSecret ?? '');
    const presented = Buffer.from(hashSecret(actual));
    return stored.length === presented.length && timingSafeEqual(stored, presented);
  };
  return provider;
}
