/**
 * The platform admin API under /admin (DESIGN D): an encapsulated plugin whose hooks demand the
 * admin token and a JSON content type before any body is read, on its unknown paths too (a stranger
 * learns nothing of the API's shape); the calls go to the same domain functions as the CLI.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkContentType } from '../api/checks.js';
import type { NoRouteHandler } from '../api/plugins/errors.js';
import type { ContextWithSimulator } from '../context.js';
import { adminDocumentOptions, withServers } from '../docs/document.js';
import { fail } from '../errors.js';
import { hashSecret, secretMatches } from '../ids.js';
import type { Metrics } from '../metrics.js';
import { wellFormedDeviceId, type AdminApp } from './common.js';
import { deviceRoutes } from './devices.js';
import { messageRoutes } from './messages.js';
import { overviewRoutes } from './overview.js';
import { simRoutes } from './sim.js';
import { serviceRoutes } from './services.js';
import { userRoutes } from './users.js';

/** Checks `Authorization: Bearer <ADMIN_TOKEN>` in constant time; every refusal is 1301 and names `what` it guards. */
export function adminAuthorizer(adminToken: string | null, what = 'The admin API'): (request: FastifyRequest) => void {
  // Hashed once so that each check compares two digests of equal length, whatever was presented.
  const tokenHash = adminToken === null ? null : hashSecret(adminToken);
  return (request) => {
    if (tokenHash === null) throw fail('1301', `${what} is disabled: set ADMIN_TOKEN.`);
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw fail('1301', `${what} needs header Authorization: Bearer <ADMIN_TOKEN>.`);
    if (!secretMatches(match[1]!, tokenHash)) throw fail('1301', 'The admin token is wrong.');
  };
}

/** Registers the admin API; `noRoute` answers its unknown paths and methods once the token passed. */
export function adminRoutes(app: FastifyInstance, ctx: ContextWithSimulator, noRoute: NoRouteHandler, metrics: Pick<Metrics, 'reportsRejected'>): void {
  const authorize = adminAuthorizer(ctx.config.adminToken);
  app.register(async (admin) => {
    admin.addHook('onRequest', async (request) => {
      authorize(request);
      checkContentType(request.headers);
      // PostgreSQL text cannot hold U+0000: an id or a query value with it is refused before any lookup, on both stores alike.
      if (request.url.includes('%00')) throw fail('1000', 'The path or query holds %00 (the character U+0000), which no id or value may contain.');
    });
    // A device id in the path is judged as the partner interface judges it (DESIGN J: any length → 1224), not looked up.
    admin.addHook('preValidation', async (request) => {
      const { deviceId } = request.params as { deviceId?: unknown };
      if (typeof deviceId === 'string') wellFormedDeviceId(deviceId);
    });
    // Without this a missing body fails the schema as "not an object" (1000); it is a missing field (1101).
    admin.addHook('preValidation', async (request) => {
      if (request.routeOptions.schema?.body === undefined || request.body !== undefined) return;
      if (request.routeOptions.config.optionalBody) request.body = {};
      else throw fail('1101', 'The body is missing: this call needs a JSON body.');
    });
    // The plugin's own not-found handler runs its hooks: without the token, /admin/nowhere is 1301 like any admin call.
    admin.setNotFoundHandler(noRoute);
    // The admin API's own document, behind the same token: it tells a stranger nothing either.
    await admin.register(swagger, adminDocumentOptions(ctx.config));
    admin.get('/openapi.json', { schema: { hide: true } }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return withServers(admin.swagger(), request, ctx.config);
    });
    const typed: AdminApp = admin.withTypeProvider();
    serviceRoutes(typed, ctx);
    userRoutes(typed, ctx);
    deviceRoutes(typed, ctx, metrics);
    messageRoutes(typed, ctx);
    simRoutes(typed, ctx);
    overviewRoutes(typed, ctx);
  }, { prefix: '/admin' });
}
