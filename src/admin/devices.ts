/** A device as the platform sees it: rename, read, and act as the device would — report, push, connect (DESIGN D). */
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { DeviceInputRefused } from '../core/errors.js';
import { fail } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { answer, type AdminApp } from './common.js';
import { parseLimit } from './messages.js';
import { adminSchema, ConnectionBody, ControlBody, ControlledView, ControlQuery, DeviceParams, DeviceStateView, DeviceView, Empty, PageQuery, PushBody, RenameBody, ReportBody, VersionView } from './schemas.js';
import { deviceView } from './views.js';

export function deviceRoutes(app: AdminApp, ctx: AppContext, metrics: Pick<Metrics, 'reportsRejected'>): void {
  const { devices, clock } = ctx;

  app.get('/devices', {
    schema: adminSchema(
      'listDevices', 'List devices',
      { description: 'Every registered device with its users, by deviceId, a page at a time: pass the last deviceId of a page as `after` for the next.', querystring: PageQuery },
      Type.Array(DeviceView),
    ),
  }, async (request) => {
    const found = await devices.list({ ...request.query, limit: parseLimit(request.query.limit) });
    return answer(request, clock, found.map(deviceView));
  });

  app.patch('/devices/:deviceId', {
    schema: adminSchema('renameDevice', 'Rename a device', { description: 'Records DEVICE_ALIAS_CHANGED.', params: DeviceParams, body: RenameBody }, DeviceView, ['1205', '1224']),
  }, async (request) => answer(request, clock, deviceView(await devices.rename(request.params.deviceId, request.body.alias))));

  app.get('/devices/:deviceId', {
    schema: adminSchema('getDevice', 'Read a device with its status', { params: DeviceParams }, DeviceStateView, ['1205', '1224']),
  }, async (request) => {
    const device = await devices.get(request.params.deviceId);
    const state = await devices.state(device.deviceId);
    return answer(request, clock, { device: deviceView(device), status: state.status, online: state.online, version: state.version });
  });

  app.post('/devices/:deviceId/report', {
    schema: adminSchema(
      'reportDeviceStatus', 'Report a partial status, as the device would',
      { description: 'The same path as an MQTT report: it must fit the profile, and records DEVICE_STATUS for event subscribers.', params: DeviceParams, body: ReportBody },
      VersionView,
      ['1205', '1224'],
    ),
  }, async (request) => {
    try {
      const state = await devices.report(request.params.deviceId, request.body);
      return answer(request, clock, { version: state.version });
    } catch (error) {
      // Refused as a device's report over MQTT is (DESIGN J), and so logged and counted as one.
      if (error instanceof DeviceInputRefused) {
        request.log.warn({ deviceId: request.params.deviceId, problem: error.message }, 'Device report rejected');
        metrics.reportsRejected.inc({ source: 'admin' });
      }
      throw error;
    }
  });

  // The console's control form, for scripts and operators without a browser (DESIGN H: nothing is console-only).
  app.post('/devices/:deviceId/control', {
    schema: adminSchema(
      'sendDeviceControl', 'Control a device, as a partner would',
      {
        description: 'The same path as the partner interface\'s control: validated against the profile, sent to the device, and its answer recorded with DEVICE_STATUS for event subscribers.',
        params: DeviceParams,
        querystring: ControlQuery,
        body: ControlBody,
      },
      ControlledView,
      ['1205', '1222', '1224', '2207', '2208', '2209', '2301', '2302', '2303', '2304', '2305'],
    ),
  }, async (request) => {
    const device = await devices.get(request.params.deviceId);
    if (request.body === undefined) throw fail('1101', 'The control command is missing.');
    const state = await devices.control(device, request.body, request.query.conditional === 'true');
    return answer(request, clock, { status: state.status, version: state.version });
  });

  app.post('/devices/:deviceId/push', {
    schema: adminSchema(
      'raiseDevicePush', 'Raise a notification, as the device would',
      { description: 'Records DEVICE_PUSH for each service with a push subscription.', params: DeviceParams, body: PushBody },
      Empty,
      ['1205', '1224'],
    ),
  }, async (request) => {
    await devices.push(request.params.deviceId, request.body.pushCode);
    return answer(request, clock, {});
  });

  app.post('/devices/:deviceId/connection', {
    schema: adminSchema('setDeviceConnection', 'Connect or disconnect a device, as its broker session would', { params: DeviceParams, body: ConnectionBody }, Empty, ['1205', '1224']),
  }, async (request) => {
    await devices.setConnection(request.params.deviceId, request.body.online);
    return answer(request, clock, {});
  });
}
