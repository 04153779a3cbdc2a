/**
 * The partner pipeline: before the body is even read, every partner request passes the checks of
 * DESIGN A.2 in order (headers → service → token → connection → device), and carries what they found.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { lookupCacheOf } from '../../core/cache.js';
import { fail } from '../../errors.js';
import type { Clock } from '../../ids.js';
import type { Connection, Device, Service, Store } from '../../store/store.js';
import { checkDevice, checkHeaders, checkService, checkTokenAndConnection, CredentialHashes, type PartnerHeaders } from '../checks.js';
import { RateLimiter } from '../rate-limit.js';

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

export function installPartnerChecks(app: FastifyInstance, deps: { config: Config; store: Store; clock: Clock }): void {
  const limiter = new RateLimiter(deps.config.rateLimitPerSecond, deps.config.rateLimitBurst);
  // Services, tokens, connections and devices are read through the store's cache (src/core/cache.ts).
  const lookups = lookupCacheOf(deps.store);
  const hashes = new CredentialHashes();

  async function check(request: FastifyRequest, routeConfig: PartnerRouteConfig): Promise<void> {
    const headers = checkHeaders(request.headers, deps.config, routeConfig.control === true);
    const service = await checkService(lookups, headers.serviceId, hashes.of(headers.serviceKey));
    const wait = limiter.take(service.serviceId, deps.clock.now());
    if (wait > 0) {
      throw fail('1306', `Rate limit of ${deps.config.rateLimitPerSecond} requests per second exceeded; retry in ${wait} s.`, {
        headers: { 'retry-after': String(wait) },
      });
    }
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
    route.onRequest = [(request) => check(request, routeConfig), ...own];
  });
}
