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
import { checkDevice, checkHeaders, checkService, checkTokenAndConnection, type PartnerHeaders } from '../checks.js';
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

/**
 * The route whose handler disconnects the caller through the store (DELETE /user/service): the
 * cached credentials it came with are dropped before it answers, so its next call is refused.
 */
const DISCONNECT = { method: 'DELETE', url: '/user/service' } as const;

export function installPartnerChecks(app: FastifyInstance, deps: { config: Config; store: Store; clock: Clock }): void {
  const limiter = new RateLimiter(deps.config.rateLimitPerSecond, deps.config.rateLimitBurst);
  // Services, tokens, connections and devices are read through the store's cache (src/core/cache.ts).
  const lookups = lookupCacheOf(deps.store);
  app.decorateRequest('partner', null);
  app.addHook('onRequest', async (request) => {
    const routeConfig = request.routeOptions.config.partner;
    if (!routeConfig) return;
    const headers = checkHeaders(request.headers, deps.config, routeConfig.control === true);
    const service = await checkService(lookups, headers.serviceId, headers.serviceKey);
    const wait = limiter.take(service.serviceId, deps.clock.now());
    if (wait > 0) {
      throw fail('1306', `Rate limit of ${deps.config.rateLimitPerSecond} requests per second exceeded; retry in ${wait} s.`, {
        headers: { 'retry-after': String(wait) },
      });
    }
    const connection = await checkTokenAndConnection(lookups, service, headers.token, deps.clock.now());
    let device: Device | null = null;
    if (routeConfig.device) {
      const { deviceId } = request.params as { deviceId: string };
      device = await checkDevice(lookups, service, connection, deviceId);
    }
    request.partner = { headers, service, connection, device };
  });
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (request.partner && request.method === DISCONNECT.method && request.routeOptions.url === DISCONNECT.url) {
      lookups.userChanged(request.partner.connection.userNumber);
    }
    done(null, payload);
  });
}
