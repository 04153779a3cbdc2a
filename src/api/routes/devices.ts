/** GET /devices, GET /devices/profile/{id}, GET /devices/{id}, POST /devices/{id} (DESIGN A.5, A.7). */
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import type { ServiceDeviceList } from '../../core/devices.js';
import type { Device } from '../../core/model.js';
import { fail } from '../../errors.js';
import { andThen } from '../../eventually.js';
import { Envelope, errorResponses, success, successJson } from '../envelope.js';
import { mayAccess, type Access } from '../access.js';
import { devicePartnerOf, partnerOf, type PartnerApp } from '../plugins/partner.js';
import { ControlCommand, ControlHeaders, DEVICE_CODES, DeviceIdParams, DeviceListItem, PartnerHeaders, PARTNER_SECURITY, Profile, SCOPED_CODES, Status } from '../schemas/partner.js';

/**
 * Each device's item of GET /devices as JSON text, split around its `reportable`: built once per
 * device record (the lookup cache hands out the same object until the device changes), so that a
 * list is joined text rather than twelve objects serialized on every request.
 */
const listItemParts = new WeakMap<Device, readonly [string, string]>();

function listItemJson(device: Device, reportable: boolean): string {
  let parts = listItemParts.get(device);
  if (parts === undefined) {
    const { deviceId, deviceType, modelName, alias, groupId } = device;
    const head = JSON.stringify({ deviceId, deviceInfo: { deviceType, modelName, alias } }).slice(0, -2);
    parts = [`${head},"reportable":`, groupId !== null ? `,"groupId":${JSON.stringify(groupId)}}}` : '}}'];
    listItemParts.set(device, parts);
  }
  return `${parts[0]}${reportable}${parts[1]}`;
}

/**
 * The answer of each visible list (see `Devices.listForService`) to the tokens that see all of it,
 * while its reportable set is the same: a partner polling the list gets it without building it.
 */
const wholeLists = new WeakMap<readonly Device[], { reportable: ReadonlySet<string>; json: string }>();

function listJson({ devices, reportable }: ServiceDeviceList, access: Access): string {
  const whole = access.deviceIds === null;
  const kept = whole ? wholeLists.get(devices) : undefined;
  if (kept?.reportable === reportable) return kept.json;
  const items: string[] = [];
  for (const device of devices) {
    // Only what the owner shared with the service (DESIGN G).
    if (mayAccess(access, device)) items.push(listItemJson(device, reportable.has(device.deviceId)));
  }
  const json = `[${items.join(',')}]`;
  if (whole) wholeLists.set(devices, { reportable, json });
  return json;
}

/** GET /devices, in the account group of the devices scope. */
export function deviceListRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, devices } = ctx;

  app.get<{ Reply: string }>('/devices', {
    schema: {
      operationId: 'listDevices', security: PARTNER_SECURITY, summary: "List the user's devices",
      description: "Only types in the service's allowedDevices. The first call for a user loads the device list (the precondition of every device operation) and subscribes the service to the user's lifecycle pushes.",
      tags: ['devices'],
      headers: PartnerHeaders,
      response: { 200: Envelope(Type.Array(DeviceListItem)), ...errorResponses(SCOPED_CODES) },
    },
  }, async (request, reply) => {
    const { service, connection, headers, access } = partnerOf(request);
    const json = listJson(await devices.listForService(service, connection), access);
    // Text in the schema's shape, sent as it is, as the status read does.
    reply.header('content-type', 'application/json; charset=utf-8');
    return successJson(headers.messageId, json, clock);
  });
}

/** Reading one device, in the device group of the devices scope. */
export function deviceRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, devices } = ctx;

  app.get('/devices/profile/:deviceId', {
    schema: {
      operationId: 'getDeviceProfile', security: PARTNER_SECURITY, summary: "Read a device's profile",
      tags: ['devices'],
      headers: PartnerHeaders,
      params: DeviceIdParams,
      response: { 200: Envelope(Profile), ...errorResponses(DEVICE_CODES) },
    },
  }, async (request) => {
    const { device, headers } = devicePartnerOf(request);
    return success(headers.messageId, devices.modelOf(device).profile, clock);
  });

  // The answer is the envelope as JSON text around the stored status, sent as it is.
  app.get<{ Reply: string }>('/devices/:deviceId', {
    schema: {
      operationId: 'getDeviceStatus', security: PARTNER_SECURITY, summary: "Read a device's current status",
      description: 'Header `ETag: "<version>"` carries the status version, which increments on every change.',
      tags: ['devices'],
      headers: PartnerHeaders,
      params: DeviceIdParams,
      response: { 200: Envelope(Status), ...errorResponses([...DEVICE_CODES, '1222']) },
    },
  }, (request, reply) => {
    const { device, headers } = devicePartnerOf(request);
    // At once when the status is in memory: Fastify sends what a handler returns, promise or not.
    return andThen(devices.readableStatusJson(device.deviceId), (state) => {
      // The stored status goes out as stored: with the content type set, Fastify sends the text as it is.
      reply.header('etag', `"${state.version}"`).header('content-type', 'application/json; charset=utf-8');
      return successJson(headers.messageId, state.statusJson, clock);
    });
  });
}

/** POST /devices/{id}, in the device group of the control scope (where x-conditional-control applies). */
export function controlRoutes(app: PartnerApp, ctx: AppContext): void {
  const { clock, devices } = ctx;

  app.post('/devices/:deviceId', {
    schema: {
      operationId: 'controlDevice', security: PARTNER_SECURITY, summary: 'Control a device',
      description: 'Validates the command against the profile, checks conditions with `x-conditional-control: true`, sends it to the device and answers with the full status after it.',
      tags: ['devices'],
      headers: ControlHeaders,
      params: DeviceIdParams,
      body: ControlCommand,
      response: {
        200: Envelope(Status),
        ...errorResponses([...DEVICE_CODES, '1102', '1222', '2201', '2207', '2208', '2209', '2301', '2302', '2303', '2304', '2305']),
      },
    },
  }, async (request, reply) => {
    const { device, headers } = devicePartnerOf(request);
    if (request.body === undefined) throw fail('1101', 'The control command is missing.');
    const state = await devices.control(device, request.body, headers.conditional);
    reply.header('etag', `"${state.version}"`);
    return success(headers.messageId, state.status, clock);
  });
}
