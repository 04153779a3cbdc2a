/**
 * The authorization server and the owner's pages over HTTP (DESIGN G): oidc-provider mounted under
 * /oauth as a raw handler, RFC 8414 metadata at /.well-known/oauth-authorization-server, /device,
 * the sign-in and consent steps of an authorization (its "interactions"), and /account.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { AppContext } from '../context.js';
import { baseUrl } from '../config.js';
import { normalizeEmail, SCOPES, type Scope } from '../core/owners.js';
import { ApiError, fail } from '../errors.js';
import { hashSecret, randomId } from '../ids.js';
import { csrfField, csrfMatches, CSRF_FIELD } from '../web/csrf.js';
import { firstForwarded, overTls, proxiedProtocol } from '../web/forwarded.js';
import { NOT_FRAMED } from '../web/html.js';
import { accountPage, consentPage, messagePage, signInPage } from './pages.js';
import { MOUNT, PARTNER_RESOURCE } from './constants.js';
import { HashGate, SignInThrottle } from './sign-in-throttle.js';
import { cookie, newSession, PRE_SESSION_COOKIE, readCookies, sessionUser, SESSION_COOKIE } from './session.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const FORM_LIMIT = 16 * 1024;
/** The cookie holding oidc-provider's session id (its default name). */
const AUTHORIZATION_SESSION_COOKIE = '_session';

/**
 * oidc-provider, built at the first request. Its issuer is PUBLIC_URL; else, in phase OP, the
 * deployment's base URL (DESIGN A.1), so that whoever sends the first request (with any
 * X-Forwarded-Host) cannot name the issuer every client then sees; else (QA: the sandbox on
 * localhost, a test deployment) that request's origin.
 */
class LazyProvider {
  #built: Promise<{ provider: Provider; handler: Handler }> | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: FastifyBaseLogger,
  ) {}

  get(request: FastifyRequest): Promise<{ provider: Provider; handler: Handler }> {
    const { config, store, clock, owners } = this.ctx;
    const issuer = config.publicUrl ?? (config.phase === 'OP' ? baseUrl(config) : proxiedOrigin(request));
    // Loaded at the first use: every process that builds the app (the CLI's too) would pay for it at start.
    const deps = { store, clock, accessTokenTtlSeconds: config.accessTokenTtlSeconds, grantRevoked: (grantId: string) => owners.grantRevoked(grantId) };
    this.#built ??= import('./provider.js').then(({ createProvider }) => createProvider(deps, issuer)).then(
      (provider) => {
        // oidc-provider answers its own faults with an error page; the cause would be nowhere else.
        provider.on('server_error', (_ctx, error) => this.log.error({ err: error }, 'oauth: internal error'));
        return { provider, handler: provider.callback() as Handler };
      },
      (error: unknown) => {
        this.#built = undefined;
        throw error;
      },
    );
    return this.#built;
  }
}

/**
 * The origin the client used, as oidc-provider (`proxy = true`) reads it for its endpoints: behind the
 * TLS proxy of DESIGN A.1, from the first X-Forwarded-Proto and X-Forwarded-Host. The issuer and the
 * endpoints of the metadata must agree (RFC 8414, 3.3): clients refuse metadata whose issuer is http.
 */
function proxiedOrigin(request: FastifyRequest): string {
  return `${proxiedProtocol(request)}://${firstForwarded(request.headers['x-forwarded-host']) ?? request.host}`;
}

/** Hands the request to oidc-provider as if it were mounted at /oauth (it derives its URLs from `originalUrl`). */
async function forward(oauth: LazyProvider, request: FastifyRequest, reply: FastifyReply, originalUrl: string): Promise<void> {
  const { handler } = await oauth.get(request);
  reply.hijack();
  const raw = request.raw as IncomingMessage & { originalUrl?: string };
  raw.originalUrl = originalUrl;
  raw.url = originalUrl.slice(MOUNT.length) || '/';
  handler(raw, reply.raw);
}

function sendPage(reply: FastifyReply, document: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').headers(NOT_FRAMED).send(document);
}

function field(body: URLSearchParams, name: string): string {
  return body.get(name) ?? '';
}

/** An owner signed in, or the page's error and status: wrong credentials, or too many attempts (with Retry-After). */
type SignIn = { userNumber: string } | { error: string; status: 401 | 429 };

/**
 * Checks the form's credentials, unless its email has had too many attempts or the node has too many
 * sign-ins on hand (sign-in-throttle.ts).
 */
type SignInCheck = (form: URLSearchParams, reply: FastifyReply) => Promise<SignIn>;

function signInCheck(ctx: AppContext): SignInCheck {
  const throttle = new SignInThrottle();
  const hashes = new HashGate();
  return async (form, reply) => {
    // Before the email's bucket: a sign-in refused for the node's load costs the owner no attempt.
    if (hashes.full) {
      reply.header('retry-after', '1');
      return { error: 'Too many sign-ins at once; try again in a second.', status: 429 };
    }
    const email = normalizeEmail(field(form, 'email'));
    const verdict = throttle.take(email, ctx.clock.now());
    if (!verdict.allowed) {
      reply.header('retry-after', String(verdict.retryAfterSeconds));
      return { error: `Too many sign-in attempts for this email; try again in ${waitText(verdict.retryAfterSeconds)}.`, status: 429 };
    }
    const userNumber = await hashes.run(() => ctx.owners.signIn(email, field(form, 'password')));
    if (!userNumber) return { error: 'The email or the password is wrong.', status: 401 };
    throttle.forgive(email);
    return { userNumber };
  };
}

function waitText(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? 'a second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? 'a minute' : `${minutes} minutes`;
}

export function oauthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { store, clock, owners } = ctx;
  const oauth = new LazyProvider(ctx, app.log);
  const signIn = signInCheck(ctx);
  let keys: Promise<{ csrf: string; session: string }> | undefined;
  const secrets = () => (keys ??= Promise.all([store.sharedSecret('csrf-key', randomId(32)), store.sharedSecret('owner-session-key', randomId(32))]).then(([csrf, session]) => ({ csrf, session })));

  // Everything under /oauth but the interaction pages below is the protocol: oidc-provider reads the body itself.
  app.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: `${MOUNT}/*`,
    schema: { hide: true },
    onRequest: (request, reply) => forward(oauth, request, reply, request.url),
    handler: async () => undefined,
  });
  app.get('/.well-known/oauth-authorization-server', { schema: { hide: true } }, (request, reply) =>
    forward(oauth, request, reply, `${MOUNT}/.well-known/openid-configuration`),
  );
  app.get('/device', { schema: { hide: true } }, (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    return reply.redirect(`${MOUNT}/device${query}`, 303);
  });

  app.register(async (pages) => {
    pages.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
      done(null, new URLSearchParams(String(body)));
    });
    pages.setErrorHandler((error: Error & { code?: string }, _request, reply) => {
      // oidc-provider's word for a page whose authorization is over: expired (1 h), finished, or its cookie gone.
      // An owner's browser shows a page that says so, not the interface's JSON envelope.
      if (error.name === 'SessionNotFound') {
        return sendPage(reply, messagePage('Link expired', 'This page belongs to a request to link your appliances that has expired or is over. Go back to the app and start again.'), 400);
      }
      // The app's handler names the interface's bound (64 KiB); these forms have their own.
      throw error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? fail('1102', `The form is larger than ${FORM_LIMIT / 1024} KiB.`, { httpStatus: 413 }) : error;
    });
    const formOf = (request: FastifyRequest): URLSearchParams => (request.body instanceof URLSearchParams ? request.body : new URLSearchParams());

    // The sign-in and consent steps of an authorization, bound to oidc-provider's interaction cookie.
    const interactionPath = (uid: string, step: string) => `${MOUNT}/interaction/${uid}/${step}`;

    async function renderInteraction(request: FastifyRequest, reply: FastifyReply, error?: string, status?: number): Promise<FastifyReply | void> {
      const { provider } = await oauth.get(request);
      const details = await provider.interactionDetails(request.raw, reply.raw);
      const { csrf, session } = await secrets();
      const hidden = csrfField(csrf, details.uid);
      if (details.prompt.name === 'login') {
        // An owner already signed in to /account is not asked again, while that owner still exists, unless the
        // service asked for a fresh sign-in (prompt=login, max_age): then the password is asked, as the request says.
        const signedIn = sessionUser(session, readCookies(request.headers.cookie).get(SESSION_COOKIE), clock.now());
        const freshAsked = details.prompt.reasons.some((reason) => reason === 'login_prompt' || reason === 'max_age');
        if (signedIn && !error && !freshAsked && (await store.getUser(signedIn))) {
          reply.hijack();
          return provider.interactionFinished(request.raw, reply.raw, { login: { accountId: signedIn } }, { mergeWithLastSubmission: false });
        }
        const client = await provider.Client.find(String(details.params.client_id));
        const note = `Sign in to link your appliances to ${client?.clientName ?? 'an app'}.`;
        // A refused sign-in keeps the email typed, as any sign-in form does.
        const email = error ? formOf(request).get('email') ?? undefined : undefined;
        return sendPage(reply, signInPage({ action: interactionPath(details.uid, 'login'), hidden }, { heading: 'Sign in', note, error, email }), error ? (status ?? 401) : 200);
      }
      const service = await store.getService(String(details.params.client_id));
      const userNumber = details.session?.accountId;
      if (!service || !userNumber) return sendPage(reply, messagePage('Unknown service', 'This request names no service we know.'), 400);
      const scopes = partnerScopes(String(details.params.scope ?? ''));
      const devices = await owners.shareableDevices(userNumber, service);
      return sendPage(reply, consentPage(
        { action: interactionPath(details.uid, 'consent'), hidden },
        { action: interactionPath(details.uid, 'abort'), hidden },
        { service, scopes, devices, error },
      ), error ? 400 : 200);
    }

    /** The interaction of the request, once its CSRF token holds; undefined after answering 403. */
    async function checkedInteraction(request: FastifyRequest, reply: FastifyReply) {
      const { provider } = await oauth.get(request);
      const details = await provider.interactionDetails(request.raw, reply.raw);
      const { csrf } = await secrets();
      if (!csrfMatches(csrf, details.uid, formOf(request).get(CSRF_FIELD))) {
        sendPage(reply, messagePage('Form expired', 'This form is no longer valid; go back and try again.'), 403);
        return undefined;
      }
      return { provider, details };
    }

    pages.get(`${MOUNT}/interaction/:uid`, { schema: { hide: true } }, (request, reply) => renderInteraction(request, reply));

    pages.post(`${MOUNT}/interaction/:uid/login`, { schema: { hide: true } }, async (request, reply) => {
      const checked = await checkedInteraction(request, reply);
      if (!checked) return reply;
      const owner = await signIn(formOf(request), reply);
      if (!('userNumber' in owner)) return renderInteraction(request, reply, owner.error, owner.status);
      reply.hijack();
      await checked.provider.interactionFinished(request.raw, reply.raw, { login: { accountId: owner.userNumber } }, { mergeWithLastSubmission: false });
    });

    pages.post(`${MOUNT}/interaction/:uid/consent`, { schema: { hide: true } }, async (request, reply) => {
      const checked = await checkedInteraction(request, reply);
      if (!checked) return reply;
      const { provider, details } = checked;
      const userNumber = details.session?.accountId;
      const service = await store.getService(String(details.params.client_id));
      if (details.prompt.name !== 'consent' || !userNumber || !service) return renderInteraction(request, reply);
      const form = formOf(request);
      // A device ticked is a choice even with the default "All of them" left selected (the page has no script to
      // move the radio): read otherwise, it would share every device, later ones too, with an owner who picked one.
      const ticked = form.getAll('device');
      const deviceIds = field(form, 'share') === 'chosen' || ticked.length > 0 ? ticked : null;
      const scopes = partnerScopes(String(details.params.scope ?? ''));
      // A grant of this browser's earlier consent to the service gains these scopes: the share shows all it now holds,
      // as its earlier tokens still carry them.
      const saveGrant = async () => {
        const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId: userNumber, clientId: service.serviceId });
        grant.addResourceScope(PARTNER_RESOURCE, scopes.join(' '));
        const missingOidc = details.prompt.details.missingOIDCScope;
        if (Array.isArray(missingOidc)) grant.addOIDCScope(missingOidc.join(' '));
        return { grantId: await grant.save(), scopes: partnerScopes(grant.getResourceScope(PARTNER_RESOURCE)) };
      };
      let grantId: string;
      try {
        grantId = await owners.link(service, userNumber, saveGrant, deviceIds);
      } catch (error) {
        if (error instanceof ApiError) return renderInteraction(request, reply, error.message);
        throw error;
      }
      reply.hijack();
      await provider.interactionFinished(request.raw, reply.raw, { consent: { grantId } }, { mergeWithLastSubmission: true });
    });

    pages.post(`${MOUNT}/interaction/:uid/abort`, { schema: { hide: true } }, async (request, reply) => {
      const checked = await checkedInteraction(request, reply);
      if (!checked) return reply;
      reply.hijack();
      await checked.provider.interactionFinished(
        request.raw, reply.raw,
        { error: 'access_denied', error_description: 'The owner did not link the appliances.' },
        { mergeWithLastSubmission: false },
      );
    });

    accountRoutes(pages, ctx, secrets, formOf, signIn);
  });
}

/** /account: the owner's devices (rename) and linked services (unlink), behind the session cookie. */
function accountRoutes(
  pages: FastifyInstance,
  ctx: AppContext,
  secrets: () => Promise<{ csrf: string; session: string }>,
  formOf: (request: FastifyRequest) => URLSearchParams,
  signIn: SignInCheck,
): void {
  const { owners, clock, config, store } = ctx;
  const cookies = (request: FastifyRequest) => readCookies(request.headers.cookie);

  async function signedIn(request: FastifyRequest): Promise<{ userNumber: string; sessionId: string } | undefined> {
    const { session } = await secrets();
    const sessionId = cookies(request).get(SESSION_COOKIE);
    const userNumber = sessionUser(session, sessionId, clock.now());
    // A session outlives nothing: an owner deleted since is signed out.
    return userNumber && sessionId && (await store.getUser(userNumber)) ? { userNumber, sessionId } : undefined;
  }

  async function showSignIn(request: FastifyRequest, reply: FastifyReply, error?: string, status = 401): Promise<FastifyReply> {
    const { csrf } = await secrets();
    // A blank one is no browser's: its token (the key's MAC of "") would be the same for every page.
    const pre = cookies(request).get(PRE_SESSION_COOKIE) || randomId(16);
    reply.header('set-cookie', cookie(PRE_SESSION_COOKIE, pre, { secure: overTls(request, config.publicUrl) }));
    const form = { action: '/account/sign-in', hidden: csrfField(csrf, pre) };
    const email = error ? formOf(request).get('email') ?? undefined : undefined;
    return sendPage(reply, signInPage(form, { heading: 'Sign in to your account', error, email }), error ? status : 200);
  }

  async function showAccount(reply: FastifyReply, userNumber: string, sessionId: string, notice?: string): Promise<FastifyReply> {
    const { csrf } = await secrets();
    const [devices, links] = await Promise.all([owners.devicesOf(userNumber), owners.links(userNumber)]);
    return sendPage(reply, accountPage({ devices, links, csrf: csrfField(csrf, sessionId), notice }));
  }

  /**
   * Ends the authorization server's session of this browser (its record, found by its cookie as the
   * adapter stores it): an authorization after signing out, or after another owner signed in here,
   * would otherwise go through as the owner who signed in to it, without a page.
   */
  async function endAuthorizationSession(request: FastifyRequest): Promise<void> {
    const id = cookies(request).get(AUTHORIZATION_SESSION_COOKIE);
    if (id) await store.destroyOAuthRecord('Session', hashSecret(id));
  }

  /** A signed-in owner's form post with a valid CSRF token; else the answer is sent and undefined returned. */
  async function ownerPost(request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> {
    const owner = await signedIn(request);
    if (!owner) {
      await showSignIn(request, reply);
      return undefined;
    }
    if (!csrfMatches((await secrets()).csrf, owner.sessionId, formOf(request).get(CSRF_FIELD))) {
      sendPage(reply, messagePage('Form expired', 'This form is no longer valid; go back and try again.'), 403);
      return undefined;
    }
    return owner.userNumber;
  }

  pages.get('/account', { schema: { hide: true } }, async (request, reply) => {
    const owner = await signedIn(request);
    return owner ? showAccount(reply, owner.userNumber, owner.sessionId) : showSignIn(request, reply);
  });

  pages.post('/account/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const { csrf, session } = await secrets();
    const form = formOf(request);
    // The form is this browser's only with its own pre-session cookie: a post from another site carries none (SameSite=Lax).
    const pre = cookies(request).get(PRE_SESSION_COOKIE);
    if (!pre || !csrfMatches(csrf, pre, form.get(CSRF_FIELD))) return showSignIn(request, reply, 'The form expired; sign in again.');
    const owner = await signIn(form, reply);
    if (!('userNumber' in owner)) return showSignIn(request, reply, owner.error, owner.status);
    await endAuthorizationSession(request);
    const value = newSession(session, owner.userNumber, clock.now());
    reply.header('set-cookie', cookie(SESSION_COOKIE, value, { secure: overTls(request, config.publicUrl) }));
    return reply.redirect('/account', 303);
  });

  pages.post('/account/sign-out', { schema: { hide: true } }, async (request, reply) => {
    if (!(await ownerPost(request, reply))) return reply;
    await endAuthorizationSession(request);
    reply.header('set-cookie', cookie(SESSION_COOKIE, '', { secure: overTls(request, config.publicUrl), maxAgeSeconds: 0 }));
    return reply.redirect('/account', 303);
  });

  pages.post<{ Params: { deviceId: string } }>('/account/devices/:deviceId/rename', { schema: { hide: true } }, async (request, reply) => {
    const userNumber = await ownerPost(request, reply);
    if (!userNumber) return reply;
    const alias = field(formOf(request), 'alias').trim();
    if (alias === '' || alias.length > 100) return sendPage(reply, messagePage('Name refused', 'A name has 1 to 100 characters.'), 400);
    await owners.renameDevice(userNumber, request.params.deviceId, alias);
    return reply.redirect('/account', 303);
  });

  pages.post<{ Params: { serviceId: string } }>('/account/services/:serviceId/unlink', { schema: { hide: true } }, async (request, reply) => {
    const userNumber = await ownerPost(request, reply);
    if (!userNumber) return reply;
    await owners.unlink(userNumber, request.params.serviceId);
    return reply.redirect('/account', 303);
  });
}

/** The partner API's scopes named in a space-separated list, in SCOPES' order. */
function partnerScopes(list: string | undefined): Scope[] {
  const named = new Set((list ?? '').split(' '));
  return SCOPES.filter((scope) => named.has(scope));
}
