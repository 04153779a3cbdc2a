/** Push and event subscriptions: /push, /push/{id}, /event, /event/{id} (DESIGN A.5). */
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { Envelope, errorResponses, success } from '../envelope.js';
import { devicePartnerOf, partnerOf, type PartnerApp } from '../plugins/partner.js';
import { DEVICE_CODES, DeviceIdParams, Empty, EventSubscribeBody, EventSubscriptionItem, PartnerHeaders, PARTNER_SECURITY, SCOPED_CODES } from '../schemas/partner.js';

/** GET /push, in the account group of the push scope. */
export function pushListRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, subscriptions } = ctx;

  app.get('/push', {
    schema: {
      operationId: 'listPushSubscriptions', security: PARTNER_SECURITY, summary: 'List push subscriptions', tags: ['push'], headers: PartnerHeaders,
      response: { 200: Envelope(Type.Union([Type.Array(Type.Object({ deviceId: Type.String() })), Type.Null()])), ...errorResponses(SCOPED_CODES) },
    },
  }, async (request) => {
    const { connection, headers } = partnerOf(request);
    const deviceIds = await subscriptions.pushDeviceIds(connection);
    return success(headers.messageId, deviceIds.length ? deviceIds.map((deviceId) => ({ deviceId })) : null, clock);
  });
}

/** GET /event, in the account group of the events scope. */
export function eventListRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, subscriptions } = ctx;

  app.get('/event', {
    schema: {
      operationId: 'listEventSubscriptions', security: PARTNER_SECURITY, summary: 'List event subscriptions (extension)', tags: ['event'], headers: PartnerHeaders,
      response: { 200: Envelope(Type.Union([Type.Array(EventSubscriptionItem), Type.Null()])), ...errorResponses(SCOPED_CODES) },
    },
  }, async (request) => {
    const { connection, headers } = partnerOf(request);
    const list = (await subscriptions.events(connection)).map((s) => ({ deviceId: s.deviceId, expiresAt: new Date(s.expiresAt).toISOString() }));
    return success(headers.messageId, list.length ? list : null, clock);
  });
}

/** Subscribing one device to its pushes and unsubscribing it, in the device group of the push scope. */
export function pushRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, subscriptions } = ctx;

  app.post('/push/:deviceId', {
    schema: {
      operationId: 'subscribePush', security: PARTNER_SECURITY, summary: 'Subscribe to DEVICE_PUSH for a device', tags: ['push'], headers: PartnerHeaders, params: DeviceIdParams,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1207']) },
    },
  }, async (request) => {
    const { connection, device, headers } = devicePartnerOf(request);
    await subscriptions.subscribePush(connection, device.deviceId);
    return success(headers.messageId, {}, clock);
  });

  app.delete('/push/:deviceId', {
    schema: {
      operationId: 'unsubscribePush', security: PARTNER_SECURITY, summary: 'Unsubscribe from DEVICE_PUSH for a device', tags: ['push'], headers: PartnerHeaders, params: DeviceIdParams,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1206']) },
    },
  }, async (request) => {
    const { connection, device, headers } = devicePartnerOf(request);
    await subscriptions.unsubscribePush(connection, device.deviceId);
    return success(headers.messageId, {}, clock);
  });
}

/** Subscribing one device to its status events and unsubscribing it, in the device group of the events scope. */
export function eventRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, subscriptions } = ctx;

  app.post('/event/:deviceId', {
    // The body is optional: no body means the defaults. A body of JSON null is a body, and no object.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {};
    },
    schema: {
      operationId: 'subscribeEvents', security: PARTNER_SECURITY, summary: 'Subscribe to DEVICE_STATUS events for a device',
      description: 'Body optional: `{"expire": {"unit": "HOUR", "timer": 1}}`; units MINUTE, HOUR (default), DAY; at most 4464 hours. Subscribing again renews the expiry.',
      tags: ['event'], headers: PartnerHeaders, params: DeviceIdParams, body: EventSubscribeBody,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1102', '1312']) },
    },
  }, async (request) => {
    const { connection, device, headers } = devicePartnerOf(request);
    await subscriptions.subscribeEvents(connection, device.deviceId, request.body.expire);
    return success(headers.messageId, {}, clock);
  });

  app.delete('/event/:deviceId', {
    schema: {
      operationId: 'unsubscribeEvents', security: PARTNER_SECURITY, summary: 'Unsubscribe from DEVICE_STATUS events for a device', tags: ['event'], headers: PartnerHeaders, params: DeviceIdParams,
      response: { 200: Envelope(Empty), ...errorResponses([...DEVICE_CODES, '1204']) },
    },
  }, async (request) => {
    const { connection, device, headers } = devicePartnerOf(request);
    await subscriptions.unsubscribeEvents(connection, device.deviceId);
    return success(headers.messageId, {}, clock);
  });
}
