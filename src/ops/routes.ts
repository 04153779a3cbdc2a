/** GET /health, /ready and /metrics — DESIGN E; /metrics is an operator's page, behind the admin token. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { adminAuthorizer } from '../admin/routes.js';
import { baseUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { fail } from '../errors.js';
import { Envelope, errorResponses, requestMessageId, success } from '../api/envelope.js';
import type { Metrics } from '../metrics.js';

export function opsRoutes(app: FastifyInstance, ctx: AppContext, metrics: Metrics, readiness: { broker: () => boolean }): void {
  const { config, store, clock } = ctx;
  const hidden = { hide: true };

  app.get('/health', {
    schema: {
      operationId: 'getHealth', security: [], summary: 'Alive', tags: ['operations'],
      response: { 200: Envelope(Type.Object({ status: Type.Literal('ok'), baseUrl: Type.String(), version: Type.String(), region: Type.String(), phase: Type.String() })) },
    },
  }, async (request) => success(requestMessageId(request), {
    status: 'ok' as const, baseUrl: baseUrl(config), version: config.version, region: config.region, phase: config.phase,
  }, clock));

  app.get('/ready', {
    schema: {
      operationId: 'getReadiness', security: [], summary: 'Ready: the store and the broker answer', tags: ['operations'],
      response: { 200: Envelope(Type.Object({ store: Type.Boolean(), broker: Type.Boolean() })), ...errorResponses(['2000']) },
    },
  }, async (request) => {
    const storeUp = await store.ping().then(() => true, () => false);
    const brokerUp = readiness.broker();
    if (!storeUp || !brokerUp) throw fail('2000', `Not ready: store ${storeUp ? 'up' : 'down'}, broker ${brokerUp ? 'up' : 'down'}.`, { httpStatus: 503 });
    return success(requestMessageId(request), { store: true, broker: true }, clock);
  });

  // What the process counts is for its operators, not for anyone who can reach the public port.
  const authorize = adminAuthorizer(config.adminToken, '/metrics');
  app.get('/metrics', { schema: hidden, onRequest: async (request) => authorize(request) }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
