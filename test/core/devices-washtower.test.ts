/** A washtower is one washer and one dryer, paired by groupId: the pair holds when its halves are registered at once. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
