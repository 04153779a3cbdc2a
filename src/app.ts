/**
 * buildApp: the HTTP server with every route, not listening. `server.ts` listens; tests `inject()`.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { adminRoutes } from './admin/routes.js';
import { consoleRoutes, SignInCodes } from './console/index.js';
import { ErrorEnvelope } from './api/envelope.js';
import { clientErrorHandler, connectRefusal, expectationRefusal, frameworkErrorHandler, installErrorHandling } from './api/plugins/errors.js';
import { partnerApi } from './api/index.js';
import { oauthRoutes } from './oauth/routes.js';
import { opsRoutes } from './ops/routes.js';
import type { ContextWithSimulator } from './context.js';
import { fail } from './errors.js';
import { parseJsonText, type JsonTextError } from './json.js';
import { createLog, type ProcessLog } from './logging.js';
import { createMetrics, registerStoreMetrics, type Metrics } from './metrics.js';
import { createTryItOut, publicDocs, type TryItOut } from './docs/index.js';
import { writeResponsesAtTurnEnd } from './socket-writes.js';

export const BODY_LIMIT = 64 * 1024;
/** The request line and headers together, as Node's parser counts them: the same bound as a body. */
const HEAD_LIMIT = 64 * 1024;

export interface App {
  server: FastifyInstance;
  metrics: Metrics;
  /** The credentials /docs enters under Authorize: the sandbox presets its own. */
  tryItOut: TryItOut;
  /** One-time console sign-in links served by this process (the sandbox prints one). */
  signInCodes: SignInCodes;
}

/**
 * Every request's latency in the per-route histogram, and its log line (written only when info is
 * logged), once Fastify is done with it: Fastify tells its log controller of each completed request.
 * Doing the same in an onResponse hook cost 2–6 % more CPU per status read (two pairs): its runner.
 */
class RequestRecorder extends LogController {
  constructor(
    private readonly metrics: Metrics,
    private readonly log: ProcessLog,
  ) {
    // Fastify's own lines per request stay off: ours is the one line of DESIGN E, with the partner's messageId and serviceId.
    super({ disableRequestLogging: true });
  }

  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? 'unknown';
    this.metrics.httpDuration.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    this.log.request({
      messageId: request.freshMessageId ?? request.headers['x-message-id'],
      serviceId: request.partner?.service.serviceId,
      route: `${request.method} ${route}`,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    });
  }
}

export async function buildApp(ctx: ContextWithSimulator, readiness: { broker: () => boolean } = { broker: () => true }): Promise<App> {
  const { config, store, clock } = ctx;
  const log = createLog(config.logLevel);
  // Widened to Fastify's logger type, which every route and plugin of ours is typed with.
  const loggerInstance: FastifyBaseLogger = log.logger;
  const metrics = createMetrics({ connectedDevices: () => store.countOnlineDevices() });
  registerStoreMetrics(metrics.registry, store.capabilities.statementCounts);
  const server = Fastify({
    loggerInstance,
    logController: new RequestRecorder(metrics, log),
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
    // While draining, installErrorHandling answers 503 as an envelope.
    return503OnClosing: false,
  });
  // Set only on the rare request that needs a fresh id; declared here so that every request has the same shape.
  server.decorateRequest('freshMessageId', null);
  server.server.on('connect', connectRefusal(clock));
  server.server.on('checkExpectation', expectationRefusal(clock));
  writeResponsesAtTurnEnd(server.server);

  // Bodies are parsed by us so that malformed and too deeply nested JSON answer 1000 in the envelope.
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, raw, done) => {
    const text = String(raw);
    if (text.trim() === '') return done(null, undefined);
    let body: unknown;
    try {
      body = parseJsonText(text);
    } catch (error) {
      return done(fail('1000', `The body ${(error as JsonTextError).message}.`), undefined);
    }
    done(null, body);
  });

  const noRoute = installErrorHandling(server, clock);
  server.addSchema(ErrorEnvelope);

  // The public document covers what is registered in this scope; the admin API has its own, behind its token.
  const tryItOut = createTryItOut();
  await server.register(async (partner) => {
    await publicDocs(partner, config, noRoute, tryItOut);
    await partner.register(partnerApi(ctx));
    opsRoutes(partner, ctx, metrics, readiness);
  });
  adminRoutes(server, ctx, noRoute, metrics);
  oauthRoutes(server, ctx);
  const signInCodes = new SignInCodes();
  consoleRoutes(server, ctx, signInCodes);
  return { server, metrics, tryItOut, signInCodes };
}
