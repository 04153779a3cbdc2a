/** Push and event subscriptions: /push, /push/{id}, /event, /event/{id} (DESIGN A.5). */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { fail } from '../../errors.js';
import { Envelope, errorResponses, success } from '../envelope.js';
import { partnerOf } from '../plugins/partner.js';
import { COMMON_CODES, DEVICE_CODES, DeviceIdParams, Empty, EventSubscribeBody, EventSubscriptionItem, PartnerHeaders } from '../schemas/partner.js';

const UNIT_MS = { MINUTE: 60_000, HOUR: 3_600_000, DAY: 86_400_000 } as const;
/** The longest event subscription, in hours (DESIGN A.5). */
export const MAX_EXPIRE_HOURS = 4464;

/** The expiry an event subscription body asks for, in ms; 1102 beyond 4464 hours. */
export function expireMs(body: Static<typeof EventSubscribeBody> | undefined): number {
  const unit = body?.expire?.unit ?? 'HOUR';
  const timer = body?.expire?.timer ?? 1;
  const ms = timer * UNIT_MS[unit as keyof typeof UNIT_MS];
  if (ms > MAX_EXPIRE_HOURS * UNIT_MS.HOUR) {
    throw fail('1102', `expire must be at most ${MAX_EXPIRE_HOURS} hours; got ${timer} ${unit}.`);
  }
  return ms;
}

export function subscriptionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { store, clock, config } = ctx;
  const device = { partner: { device: true } };

  app.get('/push', {
    config: { partner: {} },
    schema: {
      summary: 'List push subscriptions', tags: ['push'], headers: PartnerHeaders,
      response: { 200: Envelope(Type.Union([Type.Array(Type.Object({ deviceId: Type.String() })), Type.Null()])), ...errorResponses(COMMON_CODES) },
    },
  }, async (request) => {
    const { service, connection, headers } = partnerOf(request);
    const subs = await store.listPushSubscriptions(service.serviceId, connection.userNumber);
    return success(headers.messageId, subs.length ? subs.map((s) => ({ deviceId: s.deviceId })) : null, clock);
  });

  app.post('/push/:deviceId', {
    config: device,
    schema: {
      summary: 'Subscribe to DEVICE_PUSH for a device', tags: ['push'], headers: PartnerHeaders, params: DeviceIdParams,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1207']) },
    },
  }, async (request) => {
    const { service, connection, device: target, headers } = partnerOf(request);
    if (!(await store.addPushSubscription(service.serviceId, connection.userNumber, target!.deviceId, clock.now()))) {
      throw fail('1207', `Push for device ${target!.deviceId} is already subscribed.`);
    }
    return success(headers.messageId, {}, clock);
  });

  app.delete('/push/:deviceId', {
    config: device,
    schema: {
      summary: 'Unsubscribe from DEVICE_PUSH for a device', tags: ['push'], headers: PartnerHeaders, params: DeviceIdParams,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1206']) },
    },
  }, async (request) => {
    const { service, connection, device: target, headers } = partnerOf(request);
    if (!(await store.removePushSubscription(service.serviceId, connection.userNumber, target!.deviceId))) {
      throw fail('1206', `Push for device ${target!.deviceId} is not subscribed.`);
    }
    return success(headers.messageId, {}, clock);
  });

  app.get('/event', {
    config: { partner: {} },
    schema: {
      summary: 'List event subscriptions (extension)', tags: ['event'], headers: PartnerHeaders,
      response: { 200: Envelope(Type.Union([Type.Array(EventSubscriptionItem), Type.Null()])), ...errorResponses(COMMON_CODES) },
    },
  }, async (request) => {
    const { service, connection, headers } = partnerOf(request);
    const subs = await store.listEventSubscriptions(service.serviceId, connection.userNumber, clock.now());
    const list = subs.map((s) => ({ deviceId: s.deviceId, expiresAt: new Date(s.expiresAt).toISOString() }));
    return success(headers.messageId, list.length ? list : null, clock);
  });

  app.post('/event/:deviceId', {
    config: device,
    // The body is optional: no body means the defaults.
    preValidation: async (request) => {
      request.body ??= {};
    },
    schema: {
      summary: 'Subscribe to DEVICE_STATUS events for a device',
      description: 'Body optional: `{"expire": {"unit": "HOUR", "timer": 1}}`; units MINUTE, HOUR (default), DAY; at most 4464 hours. Subscribing again renews the expiry.',
      tags: ['event'], headers: PartnerHeaders, params: DeviceIdParams, body: EventSubscribeBody,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1102', '1312']) },
    },
  }, async (request) => {
    const { service, connection, device: target, headers } = partnerOf(request);
    const now = clock.now();
    const expiresAt = now + expireMs(request.body as Static<typeof EventSubscribeBody>);
    const result = await store.upsertEventSubscription(
      { serviceId: service.serviceId, userNumber: connection.userNumber, deviceId: target!.deviceId, expiresAt },
      now,
      config.eventSubscriptionLimit,
    );
    if (result === 'limit') {
      throw fail('1312', `This service and user already hold ${config.eventSubscriptionLimit} event subscriptions, the limit.`);
    }
    return success(headers.messageId, {}, clock);
  });

  app.delete('/event/:deviceId', {
    config: device,
    schema: {
      summary: 'Unsubscribe from DEVICE_STATUS events for a device', tags: ['event'], headers: PartnerHeaders, params: DeviceIdParams,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1204']) },
    },
  }, async (request) => {
    const { service, connection, device: target, headers } = partnerOf(request);
    if (!(await store.removeEventSubscription(service.serviceId, connection.userNumber, target!.deviceId, clock.now()))) {
      throw fail('1204', `Events of device ${target!.deviceId} are not subscribed.`);
    }
    return success(headers.messageId, {}, clock);
  });
}
