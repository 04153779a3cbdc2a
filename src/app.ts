/**
 * buildApp: the HTTP server with every route, not listening. `server.ts` listens; tests `inject()`.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { adminRoutes } from './admin/routes.js';
import { ErrorEnvelope } from './api/envelope.js';
import { clientErrorHandler, connectRefusal, expectationRefusal, frameworkErrorHandler, installErrorHandling } from './api/plugins/errors.js';
import { partnerApi } from './api/index.js';
import { oauthRoutes } from './oauth/routes.js';
import { opsRoutes } from './ops/routes.js';
import { baseUrl } from './config.js';
import type { ContextWithSimulator } from './context.js';
import { fail } from './errors.js';
import { MAX_JSON_DEPTH, parseJsonText, type JsonTextError } from './json.js';
import { createMetrics, registerStoreMetrics, type Metrics } from './metrics.js';
import { ERRORS } from './errors.js';

export const BODY_LIMIT = 64 * 1024;
/** The request line and headers together, as Node's parser counts them: the same bound as a body. */
const HEAD_LIMIT = 64 * 1024;
/** `\u0000` in JSON text whose backslash is not itself escaped: U+0000 in a name or a value. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

export interface App {
  server: FastifyInstance;
  metrics: Metrics;
}

/** The error table as a Markdown table, for the OpenAPI description: the docs come from the same source. */
function errorTableMarkdown(): string {
  const rows = Object.entries(ERRORS).map(([code, row]) => `| ${code} | ${row.http} | ${row.name} | ${row.when} |`);
  return ['| code | HTTP | name | when |', '|---|---|---|---|', ...rows].join('\n');
}

export async function buildApp(ctx: ContextWithSimulator, readiness: { broker: () => boolean } = { broker: () => true }): Promise<App> {
  const { config, store, clock } = ctx;
  const server = Fastify({
    logger: { level: config.logLevel },
    // We log one line per request ourselves, with the partner's messageId and serviceId.
    logController: new LogController({ disableRequestLogging: true }),
    // No pino child per request: our lines name the request by its messageId, Fastify's reqId adds nothing.
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT,
    // A device id of any length that fits the head must reach our check (1224), not the router's 414:
    // the router has no limit of its own, Node's parser bounds the whole head (431 past it).
    routerOptions: { maxParamLength: Number.MAX_SAFE_INTEGER },
    // Without Host, Node would answer a bare 400 itself; installErrorHandling's check answers the envelope.
    http: { maxHeaderSize: HEAD_LIMIT, requireHostHeader: false },
    // What Node's parser and Fastify's router refuse before any route is an envelope too.
    clientErrorHandler: clientErrorHandler(clock),
    frameworkErrors: frameworkErrorHandler(clock),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } },
    return503OnClosing: true,
  });
  server.server.on('connect', connectRefusal(clock));
  server.server.on('checkExpectation', expectationRefusal(clock));
  const metrics = createMetrics({ connectedDevices: () => store.countOnlineDevices() });
  registerStoreMetrics(metrics.registry, store);

  // Bodies are parsed by us so that malformed and too deeply nested JSON answer 1000 in the envelope.
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, raw, done) => {
    const text = String(raw);
    if (text.trim() === '') return done(null, undefined);
    let body: unknown;
    try {
      body = parseJsonText(text);
    } catch (error) {
      const { message, tooDeep } = error as JsonTextError;
      return done(fail('1000', tooDeep ? `The body nests deeper than ${MAX_JSON_DEPTH} levels.` : `The body is not valid JSON: ${message}`), undefined);
    }
    // PostgreSQL text cannot hold U+0000: refused here for both stores alike, not as a 2000 at the insert.
    if (text.includes('\\u0000') && NUL_ESCAPE.test(text)) return done(fail('1000', 'The body holds the character U+0000, which no name or value may contain.'), undefined);
    done(null, body);
  });

  const noRoute = installErrorHandling(server, clock);
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
  adminRoutes(server, ctx, noRoute);
  oauthRoutes(server, ctx);
  opsRoutes(server, ctx, metrics, readiness);
  return { server, metrics };
}
