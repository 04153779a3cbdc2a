/**
 * The partner pipeline: before the body is even read, every partner request passes the checks of
 * DESIGN A.2 in order (headers → service → rate limit → token → connection → device), and carries
 * what they found. The checks are the `onRequest` hooks of the route groups, each an encapsulated
 * plugin: the account group's routes have no device, the device and control groups' have one by type.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { AppContext } from '../../context.js';
import { fail } from '../../errors.js';
import { andThen, type Eventually } from '../../eventually.js';
import type { Connection, Device, Service } from '../../core/model.js';
import { SCOPES, type Scope } from '../../core/owners.js';
import { checkScope, type Access } from '../access.js';
import { checkDevice, checkHeaders, checkService, checkTokenAndConnection, CredentialHashes, type PartnerHeaders, type TokenSource } from '../checks.js';
import { rateLimiterFor } from '../rate-limit.js';

/** What the checks found: the calling service, its connection to the token's user, and what the token may do. */
export interface PartnerContext {
  headers: PartnerHeaders;
  service: Service;
  connection: Connection;
  access: Access;
}

/** What the checks found on a route of the device group: also the device, which passed every device check. */
export interface DevicePartnerContext extends PartnerContext {
  device: Device;
}

declare module 'fastify' {
  interface FastifyRequest {
    partner: PartnerContext | DevicePartnerContext | null;
  }
}

/** A partner route group's instance, typed so that a route's params, headers and body follow from its schema. */
export type PartnerApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** The context of a partner route, present once its group's hook ran. */
export function partnerOf(request: FastifyRequest): PartnerContext {
  if (!request.partner) throw new Error('partner context missing: route registered outside the partner groups');
  return request.partner;
}

/** The context of a route of the device group, with its device. */
export function devicePartnerOf(request: FastifyRequest): DevicePartnerContext {
  const { partner } = request;
  if (!partner || !('device' in partner)) throw new Error('device missing: route registered outside the device group');
  return partner;
}

/** Registers routes on a group's instance. */
export type PartnerRoutes = (app: PartnerApp) => void;

/**
 * The partner routes by what their checks need: whether they take a `:deviceId`, and the scope their
 * token must have. A group's scope is fixed when it is registered, so no request looks it up.
 */
export interface PartnerGroups {
  /** Routes without a device id: the checks up to the connection. `any`: every token will do. */
  account: Partial<Record<Scope | 'any', PartnerRoutes>>;
  /** Routes with a `:deviceId` parameter: the checks, then the device's. On `control`, x-conditional-control applies. */
  device: Partial<Record<Scope, PartnerRoutes>>;
}

/**
 * The partner interface as one encapsulated plugin holding the groups, each an encapsulated
 * plugin whose `onRequest` hook runs the checks on its own routes only.
 */
export function partnerPlugin(ctx: Pick<AppContext, 'config' | 'store' | 'clock' | 'lookups'>, groups: PartnerGroups): FastifyPluginAsync {
  const { config, store, clock, lookups } = ctx;
  return async (app) => {
    const limit = { perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst };
    const limiter = rateLimiterFor(limit, store.capabilities.sharedRateLimit, (error) => {
      app.log.warn({ err: error }, 'rate limits: a lease from the shared bucket failed; this node limits alone until the next');
    });
    // Services, tokens, connections and devices are read through the context's cache (src/core/cache.ts).
    const hashes = new CredentialHashes();
    // Admin tokens through the cache; the authorization server's are read as they are, so a revocation holds at once.
    const tokens: TokenSource = {
      getToken: (tokenHash) => lookups.getToken(tokenHash),
      getConnection: (serviceId, userNumber) => lookups.getConnection(serviceId, userNumber),
      findOAuthRecord: (model, key, now) => store.findOAuthRecord(model, key, now),
      getDeviceShare: (serviceId, userNumber) => store.getDeviceShare(serviceId, userNumber),
    };

    /**
     * Spends a token of the service, and tells it where it stands on every answer from here on (DESIGN
     * J): the bucket's size and what is left in it; a refusal adds when to retry.
     */
    function takeToken(reply: FastifyReply, serviceId: string): Eventually<void> {
      if (!limiter) return;
      return andThen(limiter.take(serviceId, clock.now()), (decision) => {
        reply.header('x-ratelimit-limit', limit.burst).header('x-ratelimit-remaining', decision.remaining);
        if (!decision.allowed) {
          throw fail('1306', `Rate limit of ${limit.perSecond} requests per second (bursts of ${limit.burst}) exceeded; retry in ${decision.retryAfter} s.`, {
            headers: { 'retry-after': String(decision.retryAfter) },
          });
        }
      });
    }

    /**
     * The checks up to the connection and the token's scope, in DESIGN's order; on `control`,
     * x-conditional-control too. At once when every lookup is in memory (see `Eventually`).
     */
    function checkAccount(request: FastifyRequest, reply: FastifyReply, scope: Scope | undefined): Eventually<PartnerContext> {
      const headers = checkHeaders(request.headers, config, scope === 'control', request.raw.rawHeaders);
      return andThen(checkService(lookups, headers.serviceId, hashes.of(headers.serviceKey)), (service) =>
        andThen(takeToken(reply, service.serviceId), () =>
          andThen(checkTokenAndConnection(tokens, service, hashes.of(headers.token), clock.now()), ({ connection, access }) => {
            checkScope(access, scope);
            return { headers, service, connection, access };
          })));
    }

    app.decorateRequest('partner', null);

    const accountGroup = (scope: Scope | undefined, routes: PartnerRoutes) => app.register(async (group) => {
      group.addHook('onRequest', (request, reply, done) => {
        settle(checkAccount(request, reply, scope), (partner) => (request.partner = partner), done);
      });
      routes(group.withTypeProvider<TypeBoxTypeProvider>());
    });

    /** A group of routes with a `:deviceId` parameter, whose checks end with the device's. */
    const deviceGroup = (scope: Scope, routes: PartnerRoutes) => app.register(async (group) => {
      group.addHook<{ Params: { deviceId: string } }>('onRequest', (request, reply, done) => {
        const checked = andThen(checkAccount(request, reply, scope), (partner) =>
          andThen(checkDevice(lookups, partner.service, partner, request.params.deviceId), (device): DevicePartnerContext =>
            // Written out, not spread: this runs on every device request.
            ({ headers: partner.headers, service: partner.service, connection: partner.connection, access: partner.access, device })));
        settle(checked, (partner) => (request.partner = partner), done);
      });
      routes(group.withTypeProvider<TypeBoxTypeProvider>());
    });

    if (groups.account.any) await accountGroup(undefined, groups.account.any);
    for (const scope of SCOPES) {
      const account = groups.account[scope];
      if (account) await accountGroup(scope, account);
      const device = groups.device[scope];
      if (device) await deviceGroup(scope, device);
    }
  };
}

/**
 * Hands a hook's result to `use` and tells Fastify the hook is done: at once when the result is at
 * hand, or with what it rejects with. (What the checks throw at once, Fastify's hook runner catches.)
 */
function settle<T>(result: Eventually<T>, use: (value: T) => void, done: (error?: Error) => void): void {
  if (result instanceof Promise) {
    result.then((value) => {
      use(value);
      done();
    }, done);
  } else {
    use(result);
    done();
  }
}
