/**
 * The partner pipeline: before the body is even read, every partner request passes the checks of
 * DESIGN A.2 in order (headers → service → token → connection → device), and carries what they found.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Lookups } from '../../core/cache.js';
import { fail } from '../../errors.js';
import type { Clock } from '../../ids.js';
import type { Connection, Device, Service, Store } from '../../store/store.js';
import { checkDevice, checkHeaders, checkService, checkTokenAndConnection, CredentialHashes, type PartnerHeaders } from '../checks.js';
import { rateLimiterFor } from '../rate-limit.js';

export interface PartnerContext {
  headers: PartnerHeaders;
  service: Service;
  connection: Connection;
  /** Set on routes with a device id, once it passed every device check. */
  device: Device | null;
}

/** What a partner route declares about itself in `config`. */
export interface PartnerRouteConfig {
  /** The route has a `:deviceId` parameter. */
  device?: boolean;
  /** The route is control (x-conditional-control applies). */
  control?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    partner: PartnerContext | null;
  }
  interface FastifyContextConfig {
    partner?: PartnerRouteConfig;
  }
}

/** The context of a partner route; present by construction once the hook ran. */
export function partnerOf(request: FastifyRequest): PartnerContext {
  if (!request.partner) throw new Error('partner context missing: route registered outside the partner plugin');
  return request.partner;
}

export function installPartnerChecks(app: FastifyInstance, deps: { config: Config; store: Store; clock: Clock; lookups: Lookups }): void {
  const limit = { perSecond: deps.config.rateLimitPerSecond, burst: deps.config.rateLimitBurst };
  const limiter = rateLimiterFor(limit, deps.store, (error) => {
    app.log.warn({ err: error }, 'rate limits: a lease from the shared bucket failed; this node limits alone until the next');
  });
  // Services, tokens, connections and devices are read through the context's cache (src/core/cache.ts).
  const { lookups } = deps;
  const hashes = new CredentialHashes();

  /**
   * Spends a token of the service, and tells it where it stands on every answer from here on (DESIGN
   * J): the bucket's size and what is left in it; a refusal adds when to retry.
   */
  async function takeToken(reply: FastifyReply, serviceId: string): Promise<void> {
    if (!limiter) return;
    const decision = await limiter.take(serviceId, deps.clock.now());
    reply.header('x-ratelimit-limit', limit.burst).header('x-ratelimit-remaining', decision.remaining);
    if (!decision.allowed) {
      throw fail('1306', `Rate limit of ${limit.perSecond} requests per second (bursts of ${limit.burst}) exceeded; retry in ${decision.retryAfter} s.`, {
        headers: { 'retry-after': String(decision.retryAfter) },
      });
    }
  }

  async function check(request: FastifyRequest, reply: FastifyReply, routeConfig: PartnerRouteConfig): Promise<void> {
    const headers = checkHeaders(request.headers, deps.config, routeConfig.control === true);
    const service = await checkService(lookups, headers.serviceId, hashes.of(headers.serviceKey));
    await takeToken(reply, service.serviceId);
    const connection = await checkTokenAndConnection(lookups, service, hashes.of(headers.token), deps.clock.now());
    let device: Device | null = null;
    if (routeConfig.device) {
      const { deviceId } = request.params as { deviceId: string };
      device = await checkDevice(lookups, service, connection, deviceId);
    }
    request.partner = { headers, service, connection, device };
  }

  app.decorateRequest('partner', null);
  // The checks go on the routes that declare `config.partner`, as they are registered: no other route pays for them.
  app.addHook('onRoute', (route) => {
    const routeConfig = (route.config as { partner?: PartnerRouteConfig } | undefined)?.partner;
    if (!routeConfig) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [(request, reply) => check(request, reply, routeConfig), ...own];
  });
}
