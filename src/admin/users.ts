/** Users, their access tokens, and the devices registered to them (DESIGN D). */
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { answer, type AdminApp } from './common.js';
import { parseLimit } from './messages.js';
import { adminSchema, Empty, NewDeviceBody, NewDeviceResponse, NewTokenBody, NewUserBody, PageQuery, TokenView, UserDeviceParams, UserParams, UserView } from './schemas.js';
import { iso } from './views.js';

export function userRoutes(app: AdminApp, ctx: AppContext): void {
  const { accounts, devices, owners, clock } = ctx;

  app.post('/users', {
    schema: adminSchema('createUser', 'Create a user', { body: NewUserBody }, UserView),
  }, async (request) => {
    const { countryCode, ...options } = request.body;
    const user = await owners.createUser(countryCode, options);
    return answer(request, clock, { userNumber: user.userNumber, countryCode: user.countryCode, ...(user.email !== undefined ? { email: user.email } : {}) });
  });

  app.get('/users', {
    schema: adminSchema('listUsers', 'List users', { description: 'By userNumber, a page at a time: pass the last userNumber of a page as `after` for the next.', querystring: PageQuery }, Type.Array(UserView)),
  }, async (request) => {
    const users = await accounts.listUsers({ ...request.query, limit: parseLimit(request.query.limit) });
    return answer(request, clock, users.map((user) => ({ userNumber: user.userNumber, countryCode: user.countryCode })));
  });

  app.delete('/users/:userNumber', {
    schema: adminSchema(
      'deleteUser', 'Delete a user',
      { description: "Unregisters the user's devices first (with their DEVICE_UNREGISTERED messages) and disconnects it from every service.", params: UserParams },
      Empty,
      ['1202'],
    ),
  }, async (request) => {
    await accounts.deleteUser(request.params.userNumber);
    return answer(request, clock, {});
  });

  app.post('/users/:userNumber/tokens', {
    schema: adminSchema(
      'issueToken', 'Issue an access token',
      { description: 'Connects the user to the service.', params: UserParams, body: NewTokenBody },
      TokenView,
      ['1202'],
    ),
  }, async (request) => {
    const { accessToken, expiresAt } = await accounts.issueToken(request.params.userNumber, request.body.serviceId, request.body.expiresInSeconds);
    return answer(request, clock, { accessToken, expiresAt: iso(expiresAt) });
  });

  app.post('/users/:userNumber/devices', {
    schema: adminSchema(
      'registerDevice', 'Register a device to a user',
      { description: 'Records DEVICE_REGISTERED. The device secret is in this answer only. A virtual device is online at once; a real one once it connects.', params: UserParams, body: NewDeviceBody },
      NewDeviceResponse,
      ['1202'],
    ),
  }, async (request) => {
    const { device, deviceSecret } = await devices.register(request.params.userNumber, request.body);
    return answer(request, clock, {
      deviceId: device.deviceId,
      deviceSecret,
      deviceType: device.deviceType,
      modelName: device.modelName,
      alias: device.alias,
      ...(device.groupId !== null ? { groupId: device.groupId } : {}),
      virtual: device.virtual,
      online: device.online,
    });
  });

  app.post('/users/:userNumber/devices/:deviceId', {
    schema: adminSchema(
      'shareDevice', 'Share a device with another user of the home',
      { description: 'Records DEVICE_REGISTERED for that user. 1102 when it is theirs already, or is a washtower half of a type their devices have in its group.', params: UserDeviceParams },
      Empty,
      ['1202', '1205', '1224'],
    ),
  }, async (request) => {
    await devices.share(request.params.deviceId, request.params.userNumber);
    return answer(request, clock, {});
  });

  app.delete('/users/:userNumber/devices/:deviceId', {
    schema: adminSchema(
      'unregisterDevice', 'Unregister a device from a user',
      { description: "Records DEVICE_UNREGISTERED and deletes that user's subscriptions to it; the device goes when no user is left.", params: UserDeviceParams },
      Empty,
      ['1202', '1205', '1224'],
    ),
  }, async (request) => {
    await devices.unregister(request.params.deviceId, request.params.userNumber);
    return answer(request, clock, {});
  });
}
