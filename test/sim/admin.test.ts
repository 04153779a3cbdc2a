/**
 * The simulator's admin calls (src/admin/sim.ts), mounted under /admin as the admin plugin mounts
 * its route files (its token and content-type hooks are routes.ts's and tested there).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdminApp } from '../../src/admin/common.js';
import { simRoutes } from '../../src/admin/sim.js';
import { ErrorEnvelope } from '../../src/api/envelope.js';
import { installErrorHandling } from '../../src/api/plugins/errors.js';
import { newMessageId } from '../../src/ids.js';
import { read, simWorld, type SimWorld } from './helpers.js';

let w: SimWorld;
let server: FastifyInstance;

beforeEach(async () => {
  w = await simWorld();
  server = Fastify({ ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } } });
  installErrorHandling(server, w.scheduler);
  server.addSchema(ErrorEnvelope);
  await server.register(async (admin) => {
    const typed: AdminApp = admin.withTypeProvider();
    simRoutes(typed, w.ctx);
  }, { prefix: '/admin' });
  await server.ready();
});
afterEach(async () => {
  await server.close();
  await w.close();
});

const call = async (method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown) => {
  const messageId = newMessageId();
  const res = await server.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { 'x-message-id': messageId } });
  return { status: res.statusCode, body: res.json(), messageId };
};

describe('admin: simulator', () => {
  it('PUT /admin/sim/time-scale sets the speed and answers it in the envelope', async () => {
    const { status, body, messageId } = await call('PUT', '/admin/sim/time-scale', { scale: 30 });
    expect(status).toBe(200);
    expect(body).toEqual({ messageId, timestamp: expect.any(String), response: { scale: 30 } });
    expect(w.ctx.simulator.timeScale).toBe(30);
    for (const scale of [0, -1, 0.00001, 100_000, '10']) expect((await call('PUT', '/admin/sim/time-scale', { scale })).body.error.code).toBe('1102');
    expect((await call('PUT', '/admin/sim/time-scale', {})).body.error).toEqual({ code: '1101', message: 'scale is missing.' });
    expect((await call('GET', '/admin/sim/time-scale')).body.response).toEqual({ scale: 30 });
  });

  it('POST /admin/devices/{id}/sim acts on the appliance and answers its status; the change is a DEVICE_STATUS', async () => {
    const fridge = await w.add('DEVICE_REFRIGERATOR');
    const { status, body } = await call('POST', `/admin/devices/${fridge}/sim`, { action: 'open-door' });
    expect(status).toBe(200);
    expect(body.response).toEqual(await w.status(fridge));
    expect(body.response.doorStatus).toEqual([{ locationName: 'MAIN', doorState: 'OPEN' }]);
    expect(await w.messages(fridge)).toContainEqual(expect.objectContaining({ pushType: 'DEVICE_STATUS', report: { doorStatus: [{ locationName: 'MAIN', doorState: 'OPEN' }] } }));
    const offline = await call('POST', `/admin/devices/${fridge}/sim`, { action: 'go-offline' });
    expect(offline.status).toBe(200);
    expect((await w.ctx.devices.state(fridge)).online).toBe(false);
  });

  it('passes args to the action', async () => {
    const oven = await w.add('DEVICE_OVEN', 'DOUBLE_OVEN_910604_WW');
    const { body } = await call('POST', `/admin/devices/${oven}/sim`, { action: 'start', args: { location: 'UPPER', minutes: 25 } });
    expect([read(body.response, 'runState.currentState', 'UPPER'), read(body.response, 'timer.remainMinute', 'UPPER')]).toEqual(['COOKING_IN_PROGRESS', 25]);
  });

  it('refuses an unknown action naming the allowed ones, a real device (1102), and an unknown device (1205)', async () => {
    const fan = await w.add('DEVICE_CEILING_FAN');
    expect((await call('POST', `/admin/devices/${fan}/sim`, { action: 'open-door' })).body.error).toEqual({ code: '1102', message: 'action must be one of go-offline, go-online; got "open-door"' });
    const { device } = await w.ctx.devices.register(w.userNumber, { deviceType: 'DEVICE_CEILING_FAN', alias: 'real', virtual: false });
    expect((await call('POST', `/admin/devices/${device.deviceId}/sim`, { action: 'go-online' })).body.error.code).toBe('1102');
    const unknown = await call('POST', '/admin/devices/nobody/sim', { action: 'open-door' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, '1205']);
  });

  it('POST /admin/sim/scenarios/{name} starts a scenario for a user and answers the devices it involves', async () => {
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    const dryer = await w.add('DEVICE_DRYER');
    const { status, body } = await call('POST', '/admin/sim/scenarios/laundry-day', { userNumber: w.userNumber });
    expect([status, body.response]).toEqual([200, { started: [washer, dryer] }]);
    expect(read(await w.status(washer), 'runState.currentState')).toBe('DETECTING');
    expect((await call('POST', '/admin/sim/scenarios/nothing', { userNumber: w.userNumber })).body.error.code).toBe('1102');
  });

  it('POST /admin/sim/scenarios/{name} for a user that does not exist answers 1202, as every admin call naming a user does', async () => {
    const { status, body } = await call('POST', '/admin/sim/scenarios/laundry-day', { userNumber: 'nobody' });
    expect([status, body.error]).toEqual([404, { code: '1202', message: 'User nobody does not exist.' }]);
  });
});
