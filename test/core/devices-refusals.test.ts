/**
 * What a device sends, refused as a domain kind (issue 18): the MQTT bridge and the simulator act on
 * DeviceNotRegistered and DeviceInputRefused, never on a partner-API code, while the interfaces
 * still answer each with the code and message they always did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceInputRefused, DeviceNotRegistered } from '../../src/core/errors.js';
import { ApiError } from '../../src/errors.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe('Devices: refusals of what a device sends', () => {
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN'] });
  });
  afterAll(() => t?.close());

  const fan = () => world.devices[0]!.deviceId;

  it.each([
    ['a report', () => t.ctx.devices.report('no-such-device', { operation: {} })],
    ['a notification', () => t.ctx.devices.push('no-such-device', 'ANY')],
    ['a connection change', () => t.ctx.devices.setConnection('no-such-device', true)],
    ['a status read', () => t.ctx.devices.state('no-such-device')],
  ])('%s of an unknown device is DeviceNotRegistered, answered 1205', async (_, call) => {
    const refusal = await call().then(() => undefined, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(DeviceNotRegistered);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ code: '1205', httpStatus: 404, message: 'Device no-such-device is not registered.' });
  });

  it.each([
    ['a report outside the profile', () => t.ctx.devices.report(fan(), { airFlow: { windStrength: 'TORNADO' } }), /windStrength/],
    ['a report past the bound', () => t.ctx.devices.report(fan(), { junk: 'x'.repeat(40_000) }), /^The report is refused: /],
    ['a push code the model lacks', () => t.ctx.devices.push(fan(), 'NO_SUCH_CODE'), /^pushCode must be one of /],
  ])('%s is DeviceInputRefused, answered 1102', async (_, call, message) => {
    const refusal = await call().then(() => undefined, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(DeviceInputRefused);
    expect(refusal).toMatchObject({ code: '1102', httpStatus: 400, message: expect.stringMatching(message) });
  });

  it('the admin API still answers an unknown device with 1205 and the same message', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/devices/no-such-device/report', headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' }, payload: '{"operation":{}}' });
    expect([res.statusCode, res.json().error]).toEqual([404, { code: '1205', message: 'Device no-such-device is not registered.' }]);
  });
});
