/**
 * What operators browse (DESIGN H, through the admin API as the console does): the overview's
 * numbers, every user and device page by page, and a service's endpoint health.
 */
import { Type, type Static } from 'typebox';
import type { AppContext } from '../context.js';
import { overview, type ServiceHealth } from '../core/overview.js';
import { fail } from '../errors.js';
import { answer, type AdminApp } from './common.js';
import { parseLimit } from './messages.js';
import { adminSchema, ServiceIdParams } from './schemas.js';
import { iso } from './views.js';

const NullableIso = Type.Union([Type.String({ description: 'ISO 8601 UTC' }), Type.Null()]);

export const EndpointView = Type.Object({
  serviceId: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean({ description: 'Whether the service itself is enabled.' }),
  failingSince: NullableIso,
  disabledAt: NullableIso,
  disabledReason: Type.Union([Type.Literal('gone'), Type.Literal('failing'), Type.Null()]),
});

const OverviewView = Type.Object({
  services: Type.Integer(),
  users: Type.Integer(),
  devices: Type.Integer(),
  devicesOnline: Type.Integer(),
  pending: Type.Integer({ description: 'Messages waiting for their next attempt.' }),
  delivering: Type.Integer(),
  held: Type.Integer({ description: 'Messages held while their service or endpoint is disabled.' }),
  oldestPendingAgeSeconds: Type.Union([Type.Number(), Type.Null()], { description: 'Age of the oldest pending or delivering message.' }),
  troubledEndpoints: Type.Array(EndpointView, { description: 'Services that are disabled or whose endpoint is failing or disabled.' }),
  lastHour: Type.Array(
    Type.Object({
      minute: Type.String({ description: 'ISO 8601 UTC start of the minute' }),
      attempts: Type.Integer(),
      succeeded: Type.Integer(),
      meanMs: Type.Number(),
      maxMs: Type.Number(),
    }),
    { description: 'Delivery attempts per minute over the last hour; minutes without any are left out.' },
  ),
});


export function endpointView({ service, health }: ServiceHealth): Static<typeof EndpointView> {
  const time = (epochMs: number | null) => (epochMs === null ? null : iso(epochMs));
  return {
    serviceId: service.serviceId,
    name: service.name,
    enabled: service.enabled,
    failingSince: time(health.failingSince),
    disabledAt: time(health.disabledAt),
    disabledReason: health.disabledReason,
  };
}

export function overviewRoutes(app: AdminApp, ctx: AppContext): void {
  const { store, clock } = ctx;

  app.get('/overview', {
    schema: adminSchema('getOverview', 'The platform at a glance', { description: 'What the console overview shows.' }, OverviewView),
  }, async (request) => {
    const o = await overview(ctx);
    return answer(request, clock, {
      services: o.services,
      users: o.users,
      devices: o.devices,
      devicesOnline: o.devicesOnline,
      pending: o.pending,
      delivering: o.delivering,
      held: o.held,
      oldestPendingAgeSeconds: o.oldestPendingAgeMs === null ? null : o.oldestPendingAgeMs / 1000,
      troubledEndpoints: o.troubled.map(endpointView),
      lastHour: o.lastHour.map((m) => ({ ...m, minute: iso(m.minute) })),
    });
  });

  app.get('/services/:serviceId/endpoint', {
    schema: adminSchema('getServiceEndpoint', "A service's delivery endpoint health", { params: ServiceIdParams }, EndpointView, ['1305']),
  }, async (request) => {
    const service = await ctx.accounts.getService(request.params.serviceId);
    const health = await store.getEndpointHealth(service.serviceId);
    if (!health) throw fail('1305', `Service ${service.serviceId} does not exist.`);
    return answer(request, clock, endpointView({ service, health }));
  });
}

/** A page of a listing from its query. */
export function page(query: { after?: string; limit?: string }): { after?: string; limit: number } {
  return { ...(query.after !== undefined ? { after: query.after } : {}), limit: parseLimit(query.limit) };
}
