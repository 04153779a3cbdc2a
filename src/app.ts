/**
 * buildApp: the HTTP server with every route, not listening. `main.ts` listens; tests `inject()`.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { adminRoutes } from './admin/routes.js';
import { ErrorEnvelope } from './api/envelope.js';
import { installErrorHandling } from './api/plugins/errors.js';
import { partnerApi } from './api/index.js';
import { opsRoutes } from './ops/routes.js';
import { baseUrl } from './config.js';
import type { AppContext } from './context.js';
import { fail } from './errors.js';
import { parseJsonText } from './json.js';
import { createMetrics, registerStoreMetrics, type Metrics } from './metrics.js';
import { ERRORS } from './errors.js';

export const BODY_LIMIT = 64 * 1024;

export interface App {
  server: FastifyInstance;
  metrics: Metrics;
}

/** The error table as a Markdown table, for the OpenAPI description: the docs come from the same source. */
function errorTableMarkdown(): string {
  const rows = Object.entries(ERRORS).map(([code, row]) => `| ${code} | ${row.http} | ${row.name} | ${row.when} |`);
  return ['| code | HTTP | name | when |', '|---|---|---|---|', ...rows].join('\n');
}

export async function buildApp(ctx: AppContext, readiness: { broker: () => boolean } = { broker: () => true }): Promise<App> {
  const { config, store, clock } = ctx;
  const server = Fastify({
    logger: { level: config.logLevel },
    // We log one line per request ourselves, with the partner's messageId and serviceId.
    logController: new LogController({ disableRequestLogging: true }),
    // No pino child per request: our lines name the request by its messageId, Fastify's reqId adds nothing.
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT,
    // Device ids are up to 128 characters; longer ones must reach our check (1224), not Fastify's 414.
    routerOptions: { maxParamLength: 1024 },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } },
    return503OnClosing: true,
  });
  const metrics = createMetrics({ connectedDevices: () => store.countOnlineDevices() });
  registerStoreMetrics(metrics.registry, store);

  // Bodies are parsed by us so that malformed and too deeply nested JSON answer 1000 in the envelope.
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, raw, done) => {
    const text = String(raw);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonText(text));
    } catch (error) {
      done(fail('1000', `The body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });

  installErrorHandling(server, clock);
  server.addSchema(ErrorEnvelope);
  await server.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Home Appliance Cloud Interface',
        version: config.version,
        description: `The partner interface of appliance-cloud. Every answer is an envelope; errors carry a code of this table:\n\n${errorTableMarkdown()}`,
      },
      servers: [{ url: baseUrl(config) }],
      components: {
        securitySchemes: { admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN, for /admin' } },
      },
    },
  });
  await server.register(swaggerUi, { routePrefix: '/docs' });

  // Every request: its latency in the per-route histogram, and its log line (built only when info is logged).
  const logRequests = ['trace', 'debug', 'info'].includes(config.logLevel);
  server.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    metrics.httpDuration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
    if (logRequests) {
      request.log.info({
        messageId: request.headers['x-message-id'],
        serviceId: request.partner?.service.serviceId,
        route: `${request.method} ${route}`,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      }, 'request');
    }
    done();
  });

  await server.register(partnerApi(ctx));
  adminRoutes(server, ctx);
  opsRoutes(server, ctx, metrics, readiness);
  return { server, metrics };
}
