/** A washtower is one washer and one dryer, paired by groupId: the pair holds when its halves are registered or shared at once. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCountry } from '../../src/regions.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

describe('Devices: washtower halves', () => {
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx, { deviceTypes: [] });
  });
  afterAll(() => t?.close());

  it.each(['DEVICE_WASHTOWER_WASHER', 'DEVICE_WASHTOWER_DRYER'])('registers one %s to a group of registrations asked for at once, and refuses the others as one at a time is', async (deviceType) => {
    const groupId = `tower-${deviceType}`;
    const register = (alias: string) => t.ctx.devices.register(world.userNumber, { deviceType, alias, groupId, virtual: true });

    const outcomes = await Promise.allSettled(['First', 'Second', 'Third', 'Fourth'].map(register));

    const registered = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.device.deviceId] : []));
    expect(registered).toHaveLength(1);
    const refusal = { code: '1102', message: `groupId "${groupId}" already has its ${deviceType}: ${registered[0]}.` };
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual(Array(3).fill({ status: 'rejected', reason: expect.objectContaining(refusal) }));
    expect((await t.ctx.devices.list({ limit: 100 })).filter((d) => d.groupId === groupId).map((d) => d.deviceId)).toEqual(registered);
    await expect(register('Later')).rejects.toMatchObject(refusal);
  });

  it('passes one of the shares and registrations of one half to a user asked for at once, and refuses the others as one at a time is', async () => {
    const groupId = 'tower-shared';
    const deviceType = 'DEVICE_WASHTOWER_WASHER';
    const half = async () => {
      const owner = await t.ctx.accounts.createUser(demoCountry(t.ctx.config.region));
      return (await t.ctx.devices.register(owner.userNumber, { deviceType, alias: 'Theirs', groupId, virtual: true })).device.deviceId;
    };
    const others = [await half(), await half(), await half()];
    const { userNumber } = await createWorld(t.ctx, { deviceTypes: [] });

    const outcomes = await Promise.allSettled([
      ...others.map((deviceId) => t.ctx.devices.share(deviceId, userNumber)),
      t.ctx.devices.register(userNumber, { deviceType, alias: 'Mine', groupId, virtual: true }),
    ]);

    const held = (await t.ctx.store.listUserDevices(userNumber)).filter((d) => d.groupId === groupId).map((d) => d.deviceId);
    expect(held).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refusal = { code: '1102', message: `groupId "${groupId}" already has its ${deviceType}: ${held[0]}.` };
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual(Array(3).fill({ status: 'rejected', reason: expect.objectContaining(refusal) }));
    await expect(t.ctx.devices.share(others.find((deviceId) => deviceId !== held[0])!, userNumber)).rejects.toMatchObject(refusal);
  });
});
