/**
 * Contract: what operators browse (DESIGN H). Users and devices page by id, byte order on both
 * databases; totals; and delivery attempts per minute since a time.
 */
import { expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, T0 } from './world.js';

const MINUTE = 60_000;

export function overviewContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  it('lists users and devices by id, a page at a time', async () => {
    for (const user of ['b', 'a', 'C', 'a_1']) await addUser(store(), user);
    await addDevice(store(), 'D2', 'a');
    await addDevice(store(), 'D1', 'b');
    await store().shareDevice('D1', 'a', T0);
    expect((await store().listUsers({ limit: 10 })).map((u) => u.userNumber)).toEqual(['C', 'a', 'a_1', 'b']);
    expect((await store().listUsers({ after: 'a', limit: 2 })).map((u) => u.userNumber)).toEqual(['a_1', 'b']);
    const devices = await store().listDevices({ limit: 10 });
    expect(devices.map((d) => [d.deviceId, d.userNumbers])).toEqual([['D1', ['b', 'a']], ['D2', ['a']]]);
    expect((await store().listDevices({ after: 'D1', limit: 1 })).map((d) => d.deviceId)).toEqual(['D2']);
  });

  it('counts services, users, devices and those online', async () => {
    expect(await store().countAccounts()).toEqual({ services: 0, users: 0, devices: 0, devicesOnline: 0 });
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await addDevice(store(), 'D1', 'U1');
    await addDevice(store(), 'D2', 'U1');
    await store().setOnline('D1', true);
    await store().setOnline('D2', false);
    expect(await store().countAccounts()).toEqual({ services: 1, users: 1, devices: 2, devicesOnline: 1 });
  });

  it('sums delivery attempts per minute since a time', async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1');
    await addDevice(store(), 'D2', 'U1');
    const minute = Math.floor(T0 / MINUTE) * MINUTE;
    const claimed = await store().claimDeliveries({ owner: 'n', now: T0 + 1, leaseMs: 30_000, limit: 10, perEndpointLimit: 10, inFlight: {} });
    expect(claimed).toHaveLength(2);
    const [first, second] = claimed;
    await store().recordAttempts([
      { messageId: first!.message.messageId, fencingToken: first!.fencingToken, startedAt: minute + 1000, durationMs: 10, responseStatus: 200, responseBody: '', error: null, verdict: { kind: 'delivered' } },
      { messageId: second!.message.messageId, fencingToken: second!.fencingToken, startedAt: minute + 2000, durationMs: 30, responseStatus: 500, responseBody: '', error: null, verdict: { kind: 'retry', nextAttemptAt: minute + MINUTE } },
    ], minute + 3000, 5 * 24 * 60 * MINUTE);
    expect(await store().attemptsByMinute(minute - MINUTE)).toEqual([{ minute, attempts: 2, succeeded: 1, meanMs: 20, maxMs: 30 }]);
    expect(await store().attemptsByMinute(minute + 1500)).toEqual([{ minute, attempts: 1, succeeded: 0, meanMs: 30, maxMs: 30 }]);
    expect(await store().attemptsByMinute(minute + MINUTE)).toEqual([]);
  });
}
