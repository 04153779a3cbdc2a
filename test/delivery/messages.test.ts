/**
 * DESIGN A.8 and C end to end: changes made through the partner and admin APIs reach real loopback
 * receivers, signed (verified with the public `standardwebhooks` package), in order, to the right URL.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getModel, parsedProfile } from '../../src/catalog/index.js';
import { callAdmin, createWorld, partnerHeaders, type World } from '../helpers/app.js';
import { deliveryApp, secretsOf, setCallbacks, settled, startReceiver, waitFor, type DeliveryApp, type Receiver } from './harness.js';

describe('delivery of messages to partners (DESIGN A.8, C)', () => {
  let t: DeliveryApp;
  const receivers: Receiver[] = [];
  beforeEach(async () => {
    t = await deliveryApp();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await t.close();
  });

  const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => callAdmin(t.app, method, url, body);
  async function receiver(): Promise<Receiver> {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  }
  const partner = (world: Pick<World, 'accessToken' | 'countryCode' | 'serviceId' | 'serviceKey'>, method: 'GET' | 'POST', url: string) =>
    t.app.inject({ method, url, headers: partnerHeaders(world) });

  it('sends lifecycle pushes only after the first GET /devices, and only for allowed types', async () => {
    const world = await createWorld(t.ctx, { allowedDevices: ['DEVICE_WASHER'], deviceTypes: [] });
    const hooks = await receiver();
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    const users = `/admin/users/${world.userNumber}/devices`;

    expect((await admin('POST', users, { deviceType: 'DEVICE_WASHER', alias: 'Before', deviceId: 'washer-before', virtual: true })).statusCode).toBe(200);
    expect((await partner(world, 'GET', '/devices')).statusCode).toBe(200);
    await admin('POST', users, { deviceType: 'DEVICE_DRYER', alias: 'Not allowed', deviceId: 'dryer-1', virtual: true });
    await admin('POST', users, { deviceType: 'DEVICE_WASHER', alias: 'After', deviceId: 'washer-after', virtual: true });
    await admin('PATCH', '/admin/devices/washer-after', { alias: 'Renamed' });
    await admin('PATCH', '/admin/devices/dryer-1', { alias: 'Dryer renamed' });
    await admin('DELETE', `${users}/washer-after`);

    await settled(t.ctx.store, world.serviceId);
    const delivered = hooks.delivered(await secretsOf(t.ctx.store, world.serviceId));
    expect(delivered.map((d) => [d.payload.pushType, d.payload.deviceId, d.sequence])).toEqual([
      ['DEVICE_REGISTERED', 'washer-after', 1],
      ['DEVICE_ALIAS_CHANGED', 'washer-after', 2],
      ['DEVICE_UNREGISTERED', 'washer-after', 3],
    ]);
    expect(delivered.every((d) => d.webhookId === d.body.messageId)).toBe(true);
    expect(delivered[1]?.payload).toEqual({ pushType: 'DEVICE_ALIAS_CHANGED', serviceId: world.serviceId, deviceId: 'washer-after', userNumber: world.userNumber, alias: 'Renamed' });
  });

  it('sends DEVICE_PUSH only for subscribed devices, once per service with every subscribed user', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER'] });
    const [washer, dryer] = world.devices.map((d) => d.deviceId) as [string, string];
    const hooks = await receiver();
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    // A second user of the home, with the washer shared and a token of the same service.
    const second = await t.ctx.accounts.createUser(world.countryCode);
    await admin('POST', `/admin/users/${second.userNumber}/devices/${washer}`);
    const { accessToken } = await t.ctx.accounts.issueToken(second.userNumber, world.serviceId);
    const other = { ...world, userNumber: second.userNumber, accessToken };

    for (const who of [world, other]) {
      await partner(who, 'GET', '/devices');
      expect((await partner(who, 'POST', `/push/${washer}`)).statusCode).toBe(200);
    }
    const washerCode = parsedProfile(getModel('DEVICE_WASHER')!).pushCodes[0];
    const dryerCode = parsedProfile(getModel('DEVICE_DRYER')!).pushCodes[0];
    expect((await admin('POST', `/admin/devices/${dryer}/push`, { pushCode: dryerCode })).statusCode).toBe(200);
    expect((await admin('POST', `/admin/devices/${washer}/push`, { pushCode: washerCode })).statusCode).toBe(200);

    await settled(t.ctx.store, world.serviceId);
    const delivered = hooks.delivered(await secretsOf(t.ctx.store, world.serviceId));
    expect(delivered.map((d) => d.payload)).toEqual([
      { pushType: 'DEVICE_PUSH', serviceId: world.serviceId, deviceId: washer, pushCode: washerCode, deviceType: 'DEVICE_WASHER', userList: [world.userNumber, second.userNumber] },
    ]);
  });

  it('sends DEVICE_STATUS to the event callback with only the changed part of each report, in order', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN'] });
    const fan = world.devices[0]!.deviceId;
    const [pushes, events] = [await receiver(), await receiver()];
    await setCallbacks(t, world.serviceId, { callbackUrl: pushes.url, eventCallbackUrl: events.url });
    await partner(world, 'GET', '/devices');
    expect((await partner(world, 'POST', `/event/${fan}`)).statusCode).toBe(200);

    const mode = (await t.ctx.store.getDeviceState(fan))!.status as { operation: { ceilingfanOperationMode: string } };
    const strengths = ['HIGH', 'LOW', 'MID', 'TURBO', 'LOW', 'HIGH', 'MID', 'LOW'];
    for (const windStrength of strengths) {
      // The unchanged operation mode is sent along and must not appear in the event.
      const res = await admin('POST', `/admin/devices/${fan}/report`, { airFlow: { windStrength }, operation: mode.operation });
      expect(res.statusCode).toBe(200);
    }

    await settled(t.ctx.store, world.serviceId);
    const delivered = events.delivered(await secretsOf(t.ctx.store, world.serviceId));
    expect(delivered.map((d) => d.payload.report)).toEqual(strengths.map((windStrength) => ({ airFlow: { windStrength } })));
    expect(delivered.map((d) => d.sequence)).toEqual(strengths.map((_, i) => i + 1));
    expect(delivered[0]?.payload).toMatchObject({ pushType: 'DEVICE_STATUS', deviceId: fan, deviceType: 'DEVICE_CEILING_FAN', userList: [world.userNumber] });
    expect(pushes.received).toHaveLength(0);
  });

  it('stops messages about devices of a type the service lost, still delivers those recorded before, and lists them no more (DESIGN J)', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER'] });
    const [washer, dryer] = world.devices.map((d) => d.deviceId) as [string, string];
    await partner(world, 'GET', '/devices');
    for (const deviceId of [washer, dryer]) {
      expect((await partner(world, 'POST', `/push/${deviceId}`)).statusCode).toBe(200);
      expect((await partner(world, 'POST', `/event/${deviceId}`)).statusCode).toBe(200);
    }
    const listed = async (path: '/push' | '/event') => ((await partner(world, 'GET', path)).json().response as { deviceId: string }[] | null)?.map((s) => s.deviceId);
    const push = (deviceId: string, pushCode: string) => admin('POST', `/admin/devices/${deviceId}/push`, { pushCode });
    const report = (currentState: string) => admin('POST', `/admin/devices/${dryer}/report`, { runState: { currentState } });

    // No callback URL yet: these are accepted for delivery and held until there is one.
    expect((await push(dryer, 'DRYING_IS_COMPLETE')).statusCode).toBe(200);
    expect((await report('RUNNING')).statusCode).toBe(200);
    expect((await admin('PATCH', `/admin/services/${world.serviceId}`, { allowedDevices: ['DEVICE_WASHER'] })).statusCode).toBe(200);
    expect(await listed('/push')).toEqual([washer]);
    expect(await listed('/event')).toEqual([washer]);
    expect((await push(dryer, 'DRYING_FAILED')).statusCode).toBe(200);
    expect((await report('END')).statusCode).toBe(200);
    expect((await push(washer, 'WASHING_IS_COMPLETE')).statusCode).toBe(200);

    const hooks = await receiver();
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await settled(t.ctx.store, world.serviceId);
    const secrets = await secretsOf(t.ctx.store, world.serviceId);
    const about = (deviceId: string) => hooks.delivered(secrets).filter((d) => d.payload.deviceId === deviceId).map((d) => d.payload.pushCode ?? d.payload.report);
    expect(about(dryer)).toEqual(['DRYING_IS_COMPLETE', { runState: { currentState: 'RUNNING' } }]);
    expect(about(washer)).toEqual(['WASHING_IS_COMPLETE']);

    // The dryer's subscriptions were kept, dormant: allowing dryers again brings them back.
    await admin('PATCH', `/admin/services/${world.serviceId}`, { allowedDevices: ['DEVICE_WASHER', 'DEVICE_DRYER'] });
    expect(await listed('/push')).toEqual([washer, dryer]);
    expect(await listed('/event')).toEqual([washer, dryer]);
    expect((await push(dryer, 'DRYING_IS_COMPLETE')).statusCode).toBe(200);
    await settled(t.ctx.store, world.serviceId);
    expect(about(dryer)).toEqual(['DRYING_IS_COMPLETE', { runState: { currentState: 'RUNNING' } }, 'DRYING_IS_COMPLETE']);
    expect(about(washer)).toEqual(['WASHING_IS_COMPLETE']);
  });

  it('signs with both the old and the new secret during a rotation, each verifying alone', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const hooks = await receiver();
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await partner(world, 'GET', '/devices');
    const [old] = await secretsOf(t.ctx.store, world.serviceId);
    const rotated = await admin('POST', `/admin/services/${world.serviceId}/rotate-secret`);
    const current = rotated.json().response.webhookSecret as string;
    await admin('PATCH', `/admin/devices/${world.devices[0]!.deviceId}`, { alias: 'Rotated' });

    await settled(t.ctx.store, world.serviceId);
    expect(hooks.delivered([old!]).map((d) => d.payload.alias)).toEqual(['Rotated']);
    expect(hooks.delivered([current]).map((d) => d.payload.alias)).toEqual(['Rotated']);
    expect(String(hooks.received[0]?.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('signs with at most two secrets after five rotations: the current one and the one before it (DESIGN J)', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const hooks = await receiver();
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await partner(world, 'GET', '/devices');
    const secrets = await secretsOf(t.ctx.store, world.serviceId);
    for (let i = 0; i < 5; i++) secrets.unshift((await admin('POST', `/admin/services/${world.serviceId}/rotate-secret`)).json().response.webhookSecret);
    await admin('PATCH', `/admin/devices/${world.devices[0]!.deviceId}`, { alias: 'Rotated five times' });

    await settled(t.ctx.store, world.serviceId);
    expect(String(hooks.received[0]?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(hooks.delivered([secrets[0]!]).map((d) => d.payload.alias)).toEqual(['Rotated five times']);
    expect(hooks.delivered([secrets[1]!])).toHaveLength(1);
    for (const retired of secrets.slice(2)) expect(() => hooks.delivered([retired])).toThrow(/does not verify/);
  });

  it('signs with the new secret alone once the previous one is retired with expirePreviousNow', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const hooks = await receiver();
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await partner(world, 'GET', '/devices');
    const [leaked] = await secretsOf(t.ctx.store, world.serviceId);
    const rotated = await admin('POST', `/admin/services/${world.serviceId}/rotate-secret`, { expirePreviousNow: true });
    const current = rotated.json().response.webhookSecret as string;
    await admin('PATCH', `/admin/devices/${world.devices[0]!.deviceId}`, { alias: 'After the leak' });

    await settled(t.ctx.store, world.serviceId);
    expect(String(hooks.received[0]?.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(hooks.delivered([current]).map((d) => d.payload.alias)).toEqual(['After the leak']);
    expect(() => hooks.delivered([leaked!])).toThrow(/does not verify/);
  });

  it('retries with the same webhook-id until the receiver accepts, and the admin lists every attempt', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const hooks = await startReceiver((response, count) => response.writeHead(count < 3 ? 500 : 204).end(count < 3 ? 'busy' : ''));
    receivers.push(hooks);
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await partner(world, 'GET', '/devices');
    await admin('PATCH', `/admin/devices/${world.devices[0]!.deviceId}`, { alias: 'Retried' });

    await settled(t.ctx.store, world.serviceId);
    const delivered = hooks.delivered(await secretsOf(t.ctx.store, world.serviceId));
    expect(delivered).toHaveLength(3);
    expect(new Set(delivered.map((d) => d.webhookId)).size).toBe(1);
    const listed = (await admin('GET', `/admin/services/${world.serviceId}/messages`)).json().response;
    expect(listed[0]).toMatchObject({ messageId: delivered[0]!.webhookId, status: 'delivered' });
    expect(listed[0].attempts.map((a: { attempt: number; responseStatus: number; responseBody: string }) => [a.attempt, a.responseStatus, a.responseBody])).toEqual([
      [1, 500, 'busy'],
      [2, 500, 'busy'],
      [3, 204, ''],
    ]);
    expect(listed[0].attempts.every((a: { durationMs: number }) => a.durationMs > 0)).toBe(true);
  });

  it('records an answer holding U+0000 (a gzip body, a C string) and moves on to the next message', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const hooks = await startReceiver((response, count) => response.writeHead(count === 1 ? 500 : 200).end(count === 1 ? 'busy\0' : 'ok\0'));
    receivers.push(hooks);
    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await partner(world, 'GET', '/devices');
    await admin('PATCH', `/admin/devices/${world.devices[0]!.deviceId}`, { alias: 'First' });
    await admin('PATCH', `/admin/devices/${world.devices[0]!.deviceId}`, { alias: 'Second' });

    await settled(t.ctx.store, world.serviceId);
    const delivered = hooks.delivered(await secretsOf(t.ctx.store, world.serviceId));
    expect(delivered.map((d) => [d.payload.alias, d.sequence])).toEqual([['First', 1], ['First', 1], ['Second', 2]]);
    const listed = (await admin('GET', `/admin/services/${world.serviceId}/messages`)).json().response;
    expect(listed.map((m: { status: string; attempts: { responseStatus: number; responseBody: string }[] }) => [m.status, m.attempts.map((a) => [a.responseStatus, a.responseBody])])).toEqual([
      ['delivered', [[200, 'ok\uFFFD']]],
      ['delivered', [[500, 'busy\uFFFD'], [200, 'ok\uFFFD']]],
    ]);
  });

  it('fails a message whose schedule is exhausted, keeps it, and moves on to the next of the device', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const washer = world.devices[0]!.deviceId;
    // Every request for the first message fails; the second message is accepted.
    const hooks = await startReceiver((response) => response.writeHead(200).end());
    receivers.push(hooks);
    const failing = await startReceiver((response) => response.writeHead(503).end());
    receivers.push(failing);
    await setCallbacks(t, world.serviceId, { callbackUrl: failing.url });
    await partner(world, 'GET', '/devices');
    await admin('PATCH', `/admin/devices/${washer}`, { alias: 'One' });
    const first = await waitFor('the first message to fail', async () => (await t.ctx.store.listMessages(world.serviceId, { status: 'failed' }))[0]?.messageId);
    expect(failing.received).toHaveLength(3);

    await setCallbacks(t, world.serviceId, { callbackUrl: hooks.url });
    await admin('PATCH', `/admin/devices/${washer}`, { alias: 'Two' });
    await settled(t.ctx.store, world.serviceId);
    expect(hooks.delivered(await secretsOf(t.ctx.store, world.serviceId)).map((d) => d.payload.alias)).toEqual(['Two']);
    expect((await t.ctx.store.getMessage(first))?.status).toBe('failed');
  });
});
