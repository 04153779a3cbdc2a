/**
 * Contract: a change and its messages commit together or not at all. Each backend gives a fault
 * hook that reaches its database from beside the store (another connection), as a crash midway
 * through a transaction would: a trigger that fails recording certain messages.
 */
import { afterEach, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, HOUR, newDevice, recorded, T0 } from './world.js';

/** Reaches the database of the store opened last, from another connection. */
export interface StoreFaults {
  /** Recording a message (an outbox row) for which `condition` holds fails with `injected fault`; `NEW.<column>` names the row's columns. */
  failMessagesWhere(condition: string): Promise<void>;
  /** Removes the fault: the database may outlive the test. */
  clear(): Promise<void>;
  /** The rows in `table`. */
  count(table: string): Promise<number>;
}

export function faultsContract(open: () => Promise<Store>, faults: StoreFaults): void {
  const store = freshStore(open);
  afterEach(() => faults.clear());

  it('leaves no device, message or sequence behind when recording the second message fails', async () => {
    await addService(store(), 'S1');
    await addService(store(), 'S2');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await connect(store(), 'S2', 'U1');
    await faults.failMessagesWhere("NEW.service_id = 'S2'");

    await expect(addDevice(store(), 'D1', 'U1')).rejects.toThrow(/injected fault/);

    expect(await store().getDevice('D1')).toBeUndefined();
    expect(await store().getDeviceState('D1')).toBeUndefined();
    expect(await store().listUserDevices('U1')).toEqual([]);
    expect(await faults.count('outbox')).toBe(0);
    expect(await faults.count('message_sequences')).toBe(0);

    await faults.clear();
    await addDevice(store(), 'D1', 'U1');
    expect((await recorded(store(), 'S1')).map((m) => m.message.sequence)).toEqual([1]);
  });

  it('keeps the old status and version when recording the event fails', async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1');
    await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
    await faults.failMessagesWhere("NEW.kind = 'event'");

    await expect(store().applyReport('D1', { a: 2 }, { a: 2 }, T0 + 1)).rejects.toThrow(/injected fault/);

    expect(await store().getDeviceState('D1')).toMatchObject({ status: newDevice('D1').status, version: 1 });
    expect(await faults.count('outbox')).toBe(1);
  });

  it('keeps the registration, subscriptions and tokens when deleting a user fails midway', async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1');
    await store().addPushSubscription('S1', 'U1', 'D1', T0);
    await faults.failMessagesWhere("NEW.push_type = 'DEVICE_UNREGISTERED'");

    await expect(store().deleteUser('U1', T0 + 1)).rejects.toThrow(/injected fault/);

    expect(await store().getUser('U1')).toBeDefined();
    expect((await store().getDevice('D1'))?.userNumbers).toEqual(['U1']);
    expect(await store().listPushSubscriptions('S1', 'U1')).toHaveLength(1);
    expect(await store().getToken('tok-S1-U1')).toMatchObject({ revokedAt: null });
  });
}
