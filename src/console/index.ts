/**
 * The web console under /console (DESIGN H): an encapsulated plugin of server-rendered pages.
 * Operators sign in with the admin token (or a one-time link the sandbox prints); every other page
 * needs that session, and every form carries the session's CSRF token. Its actions call the same
 * domain functions as the admin API.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ContextWithSimulator } from '../context.js';
import { ApiError, fail } from '../errors.js';
import { hashSecret, secretMatches } from '../ids.js';
import { CSRF_FIELD, csrfMatches } from '../web/csrf.js';
import { html, NOT_FRAMED } from '../web/html.js';
import { accountRoutes } from './accounts.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { field, type ConsoleDeps, type Form } from './deps.js';
import { deviceRoutes } from './device.js';
import { csrf, plainPage, type Viewer } from './layout.js';
import { DeviceWatch } from './live.js';
import { messageRoutes } from './messages.js';
import { overviewRoutes } from './overview.js';
import { serviceRoutes } from './services.js';
import {
  consoleKeys,
  decodeSession,
  encodeSession,
  Flashes,
  newSession,
  readCookie,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  setSessionCookie,
  SignInCodes,
  type ConsoleKeys,
  type Session,
} from './session.js';

export { SignInCodes } from './session.js';

/** Pages anyone may open: the sign-in form, one-time links, and the stylesheet and script. */
const PUBLIC = /^\/console\/(?:sign-in(?:\/[^/?]*)?|assets\/[^/?]+)(?:\?.*)?$/;
const FORM_LIMIT = 64 * 1024;

/** Parses an urlencoded form keeping every value of a repeated name (a multiple select). */
function parseForm(text: string): Form {
  const form: Form = Object.create(null) as Form;
  for (const [name, value] of new URLSearchParams(text)) (form[name] ??= []).push(value);
  return form;
}

/** A query as the pages read it: a repeated parameter (?after=a&after=b) is its first value, as a repeated form field is. */
function firstValues(query: unknown): Record<string, string> {
  const first: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(query as Record<string, string | string[]>)) first[name] = Array.isArray(value) ? value[0]! : value;
  return first;
}

/**
 * Where to go after signing in: a console page, never another site. Only visible ASCII, as a browser
 * sends a URL: a line break or a character outside Latin-1 cannot be a Location header, and failed as a 500.
 */
function safeNext(next: string | undefined): string {
  return next !== undefined && /^\/console(?:[/?][\x21-\x7e]*)?$/.test(next) ? next : '/console';
}

function signInForm(viewer: Viewer, next: string, problem: string | null): string {
  return plainPage('Console sign-in', html`${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}
<form method="post" action="/console/sign-in">${csrf(viewer)}<input type="hidden" name="next" value="${next}">
<label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="current-password" required size="40">
<p><button type="submit">Sign in</button></p></form>
<p class="muted">The admin token is ADMIN_TOKEN (the sandbox prints it, with a one-time sign-in link).</p>`);
}

/** Registers /console; `codes` are the one-time sign-in links this process hands out. */
export function consoleRoutes(app: FastifyInstance, ctx: ContextWithSimulator, codes: SignInCodes): void {
  const keys: ConsoleKeys | null = ctx.config.adminToken === null ? null : consoleKeys(ctx.config.adminToken);
  const tokenHash = ctx.config.adminToken === null ? null : hashSecret(ctx.config.adminToken);
  const sessions = new WeakMap<FastifyRequest, Session>();
  const flashes = new Flashes(ctx.store, ctx.clock);
  const watch = new DeviceWatch(ctx.store, undefined, (error) => app.log.warn({ err: error }, 'console: reading a watched device failed'));
  const streams = new Set<() => void>();

  const viewerOf = (session: Session): Viewer => ({ csrfKey: keys!.csrf, sessionId: session.id });
  const startSession = (request: FastifyRequest, reply: FastifyReply, operator: boolean): Session => {
    const session = newSession(operator, ctx.clock.now());
    setSessionCookie(request, reply, encodeSession(keys!.session, session), SESSION_TTL_MS, ctx.config.publicUrl);
    sessions.set(request, session);
    return session;
  };

  app.register(async (web) => {
    // Pages, not API: left out of /openapi.json.
    web.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    // Forms only: a JSON body's values would reach the actions as numbers or objects where they read text.
    web.removeAllContentTypeParsers();
    web.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
      const form = parseForm(String(body));
      // As %00 in the URL below: refused before any action, as JSON is (json.ts), so that both stores answer alike.
      if (Object.values(form).some((values) => values.some((value) => value.includes('\0')))) {
        done(fail('1000', 'The form holds the character U+0000, which no id, name or value may contain.'), undefined);
      } else done(null, form);
    });

    web.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      const status = error instanceof ApiError ? error.httpStatus : error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
      if (status >= 500) request.log.error({ err: error }, 'console: internal error');
      const message = status >= 500 ? 'Something went wrong on our side; it was logged.' : error.message;
      const code = error instanceof ApiError ? html`<strong>${error.code}</strong> ` : '';
      return reply.code(status).type('text/html; charset=utf-8').send(plainPage('Console', html`<p class="error">${code}${message}</p><p><a href="/console">Back to the console</a></p>`));
    });
    web.setNotFoundHandler((request, reply) => {
      reply.code(404).type('text/html; charset=utf-8').send(plainPage('Not found', html`<p>There is no console page ${request.url.split('?')[0]}.</p><p><a href="/console">Overview</a></p>`));
    });

    web.addHook('onRequest', async (request, reply) => {
      if (!keys) {
        return reply.code(503).type('text/html; charset=utf-8').send(plainPage('Console', html`<p>The console is off: set ADMIN_TOKEN to sign in with it.</p>`));
      }
      // PostgreSQL text cannot hold U+0000: refused before any lookup, on both stores alike, as the admin API does.
      if (request.url.includes('%00')) throw fail('1000', 'The path or query holds %00 (the character U+0000), which no id or value may contain.');
      request.query = firstValues(request.query);
      const session = decodeSession(keys.session, readCookie(request, SESSION_COOKIE), ctx.clock.now());
      if (session) sessions.set(request, session);
      if (session?.operator || PUBLIC.test(request.url)) return;
      if (request.method === 'GET') return reply.redirect(`/console/sign-in?next=${encodeURIComponent(request.url)}`, 303);
      return reply.code(401).type('text/html; charset=utf-8').send(plainPage('Console', html`<p class="error">Sign in first.</p><p><a href="/console/sign-in">Sign in</a></p>`));
    });

    // Every form (sign-in included) carries the CSRF token of the session it was drawn for.
    web.addHook('preHandler', async (request, reply) => {
      if (request.method !== 'POST') return;
      const session = sessions.get(request);
      if (session && csrfMatches(keys!.csrf, session.id, field(request.body, CSRF_FIELD))) return;
      return reply.code(403).type('text/html; charset=utf-8').send(plainPage('Console', html`<p class="error">This form has expired or did not come from the console. Reload the page and try again.</p>`));
    });

    web.addHook('onSend', async (_request, reply, payload) => {
      // Pages show secrets and live state: never cached (the assets say otherwise), never framed.
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      reply.headers(NOT_FRAMED).header('x-content-type-options', 'nosniff');
      return payload;
    });

    web.addHook('preClose', async () => {
      for (const end of [...streams]) end();
      watch.close();
    });

    const asset = (type: string, text: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
      reply.type(type).header('cache-control', 'public, max-age=3600').send(text);
    web.get('/assets/console.css', asset('text/css; charset=utf-8', CONSOLE_CSS));
    web.get('/assets/console.js', asset('text/javascript; charset=utf-8', CONSOLE_JS));

    web.get<{ Querystring: { next?: string } }>('/sign-in', async (request, reply) => {
      const next = safeNext(request.query.next);
      const session = sessions.get(request);
      if (session?.operator) return reply.redirect(next, 303);
      reply.type('text/html; charset=utf-8');
      return signInForm(viewerOf(session ?? startSession(request, reply, false)), next, null);
    });

    web.post('/sign-in', async (request, reply) => {
      const next = safeNext(field(request.body, 'next'));
      const token = field(request.body, 'token') ?? '';
      if (!secretMatches(token, tokenHash!)) {
        return reply.code(401).type('text/html; charset=utf-8').send(signInForm(viewerOf(sessions.get(request)!), next, 'The admin token is wrong.'));
      }
      startSession(request, reply, true);
      return reply.redirect(next, 303);
    });

    web.get<{ Params: { code: string } }>('/sign-in/:code', async (request, reply) => {
      if (codes.redeem(request.params.code, ctx.clock.now())) {
        startSession(request, reply, true);
        return reply.redirect('/console', 303);
      }
      // An operator already signed in here who opens a spent link (a second tab, the printed link clicked twice) is not asked for the token.
      const session = sessions.get(request) ?? startSession(request, reply, false);
      if (session.operator) return reply.redirect('/console', 303);
      return reply.code(401).type('text/html; charset=utf-8').send(signInForm(viewerOf(session), '/console', 'This sign-in link was used already or has expired: sign in with the admin token.'));
    });

    web.post('/sign-out', async (request, reply) => {
      setSessionCookie(request, reply, '', 0, ctx.config.publicUrl);
      return reply.redirect('/console/sign-in', 303);
    });

    const deps: ConsoleDeps = {
      ctx,
      viewer: (request) => viewerOf(sessions.get(request)!),
      sessionEndsAt: (request) => sessions.get(request)!.expiresAt,
      leaveFlash: (request, message) => flashes.leave(sessions.get(request)!.id, message),
      takeFlash: async (request) => {
        const message = await flashes.take(sessions.get(request)!.id);
        return message === null ? null : { ok: true, message };
      },
      watch,
      streams,
    };
    overviewRoutes(web, deps);
    serviceRoutes(web, deps);
    messageRoutes(web, deps);
    accountRoutes(web, deps);
    deviceRoutes(web, deps);
  }, { prefix: '/console' });
}
