/**
 * Contract: what is reached from beside the store, through another connection that each backend
 * gives (`SideConnection`): a change and its messages commit together or not at all when a fault
 * (a trigger) fails recording one of them; messages in states only the delivery engine sets; and a
 * write held midway while another races it.
 */
import { afterEach, expect, it } from 'vitest';
import { DeviceNotRegistered } from '../../../src/core/errors.js';
import type { DeliveryAttempt, MessageStatus } from '../../../src/core/model.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, HOUR, newDevice, pushTypes, recorded, T0 } from './world.js';

/** Reaches the database of the store opened last, from another connection. */
export interface SideConnection {
  /** Recording a message (an outbox row) for which `condition` holds fails with `injected fault`; `NEW.<column>` names the row's columns. */
  failMessagesWhere(condition: string): Promise<void>;
  /** Lifting a disabled delivery endpoint (deleting its row) fails with `injected fault`. */
  failEndpointLifts(): Promise<void>;
  /** Removes the fault: the database may outlive the test. */
  clear(): Promise<void>;
  /** The rows in `table`. */
  count(table: string): Promise<number>;
  /** Sets a message's state as a node still holding its lease would (owner `node-a`, fencing token 7, lease until `T0 + HOUR`). */
  settle(messageId: string, status: MessageStatus, attempts: number, deliveredAt: number | null): Promise<void>;
  addAttempt(attempt: DeliveryAttempt): Promise<void>;
  /** The message's lease, as stored. */
  lease(messageId: string): Promise<{ owner: string | null; expiresAt: number | null; fencingToken: number }>;
  /** Holds the next write that records a message in the (service, device) queue there, after what it read before. */
  holdQueue(serviceId: string, deviceId: string): Promise<HeldWrite>;
}

/**
 * A write held midway. Where writes cannot interleave (SQLite: one writer, and a change is one
 * write) nothing is held: the write is reached once it has recorded its message.
 */
export interface HeldWrite {
  /** Resolves once the write is held. */
  reached(): Promise<void>;
  /** Lets the write go on once `others` have finished, or wait: for it, or held as well. */
  releaseAfter(others: Promise<unknown>): Promise<void>;
}

export function faultsContract(open: () => Promise<Store>, faults: SideConnection): void {
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

  it('refuses only the report whose event fails among reports asked for at once; the others commit', async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    for (const deviceId of ['D1', 'D2', 'D3']) {
      await addDevice(store(), deviceId, 'U1');
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt: T0 + HOUR }, T0, 100);
    }
    await faults.failMessagesWhere("NEW.kind = 'event' AND NEW.device_id = 'D2'");

    const outcomes = await Promise.allSettled(['D1', 'D2', 'D3'].map((deviceId) => store().applyReport(deviceId, { a: 2 }, { a: 2 }, T0 + 1)));

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/injected fault/);
    expect(await store().getDeviceState('D2')).toMatchObject({ status: newDevice('D2').status, version: 1 });
    for (const deviceId of ['D1', 'D3']) {
      expect(await store().getDeviceState(deviceId)).toMatchObject({ status: { a: 2 }, version: 2 });
      expect((await recorded(store(), 'S1', deviceId)).map((m) => m.message.pushType)).toEqual(['DEVICE_REGISTERED', 'DEVICE_STATUS']);
    }
  });

  it('keeps the service as it was when lifting its disabled endpoint with the change fails', async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1');
    // Its first message got 410 Gone: the endpoint is disabled.
    const [claimed] = await store().claimDeliveries({ owner: 'n', now: T0 + 10, leaseMs: 30_000, limit: 10, perEndpointLimit: 10, inFlight: {} });
    const attempt = { messageId: claimed!.message.messageId, fencingToken: claimed!.fencingToken, startedAt: T0 + 20, durationMs: 1, responseStatus: 410, responseBody: '', error: null };
    await store().recordAttempts([{ ...attempt, verdict: { kind: 'gone', url: claimed!.url } }], T0 + 30, 1e9);
    await faults.failEndpointLifts();

    await expect(store().updateService('S1', { name: 'Renamed', enabled: true })).rejects.toThrow(/injected fault/);

    expect((await store().getService('S1'))?.name).toBe('Service S1');
    expect(await store().getEndpointHealth('S1')).toMatchObject({ disabledReason: 'gone' });
    await faults.clear();
    await store().updateService('S1', { name: 'Renamed', enabled: true });
    expect([(await store().getService('S1'))?.name, await store().getEndpointHealth('S1')]).toEqual([
      'Renamed',
      { serviceId: 'S1', failingSince: null, disabledAt: null, disabledReason: null },
    ]);
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

export function deliveryStatesContract(open: () => Promise<Store>, side: SideConnection): void {
  const store = freshStore(open);

  /** Three DEVICE_PUSH messages to S1, oldest first. */
  async function threePushes(): Promise<string[]> {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1', false);
    await addDevice(store(), 'D1', 'U1');
    await store().addPushSubscription('S1', 'U1', 'D1', T0);
    for (const at of [T0 + 1, T0 + 2, T0 + 3]) await store().recordPush('D1', 'WASHING_IS_COMPLETE', at);
    return (await recorded(store(), 'S1')).map((m) => m.message.messageId);
  }

  const attempt = (messageId: string, n: number, startedAt: number, durationMs: number, responseStatus: number | null, responseBody: string | null, error: string | null): DeliveryAttempt => ({
    messageId,
    attempt: n,
    startedAt,
    durationMs,
    responseStatus,
    responseBody,
    error,
  });

  it('lists the attempts of the given messages, by message then attempt, times to the microsecond', async () => {
    const [a = '', b = '', c = ''] = (await threePushes()).sort();
    await side.addAttempt(attempt(b, 2, T0 + 20, 12.5, 200, 'ok', null));
    await side.addAttempt(attempt(b, 1, T0 + 10, 10000, null, null, 'timeout after 10000 ms'));
    await side.addAttempt(attempt(a, 1, T0 + 5, 3, 503, 'busy', null));
    await side.addAttempt(attempt(c, 1, T0 + 30, 3, 503, 'busy', null));
    expect(await store().listAttempts([b, a])).toEqual([
      attempt(a, 1, T0 + 5, 3, 503, 'busy', null),
      attempt(b, 1, T0 + 10, 10000, null, null, 'timeout after 10000 ms'),
      attempt(b, 2, T0 + 20, 12.5, 200, 'ok', null),
    ]);
  });

  it('resends a delivered or failed message: pending, due now, lease cleared and fenced, attempts kept', async () => {
    const [a = '', b = ''] = await threePushes();
    await side.settle(a, 'delivered', 1, T0 + 10);
    await side.settle(b, 'failed', 8, null);
    expect(await store().resendMessage(a, T0 + 100)).toBe(true);
    expect(await store().getMessage(a)).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: T0 + 100, deliveredAt: null });
    expect(await side.lease(a)).toEqual({ owner: null, expiresAt: null, fencingToken: 8 });
    expect(await store().resendMessage(b, T0 + 100)).toBe(true);
    expect(await store().getMessage(b)).toMatchObject({ status: 'pending', attempts: 8, nextAttemptAt: T0 + 100 });
  });

  it('recovers the failed messages of a service created since a time', async () => {
    const ids = await threePushes();
    for (const id of ids) await side.settle(id, 'failed', 8, null);
    expect(await store().recoverFailed('S1', T0 + 2, T0 + 100)).toBe(2);
    const states = (await recorded(store(), 'S1')).map((m) => [m.message.status, m.message.nextAttemptAt]);
    expect(states).toEqual([
      ['failed', T0 + 1],
      ['pending', T0 + 100],
      ['pending', T0 + 100],
    ]);
    expect(await store().listMessages('S1', { status: 'failed' })).toHaveLength(1);
    expect(await store().recoverFailed('S2', 0, T0)).toBe(0);
  });
}

export function racesContract(open: () => Promise<Store>, side: SideConnection): void {
  const store = freshStore(open);
  afterEach(() => side.clear());

  it('records a push that read its registration before the unregistration, never after it and the registration that follows', async () => {
    await addService(store(), 'S1');
    await addService(store(), 'S2');
    await addUser(store(), 'U1');
    // S1 hears only D1's pushes, so that holding its queue holds the push alone; S2 hears every
    // message of D1, in the order they were recorded.
    await connect(store(), 'S1', 'U1', false);
    await connect(store(), 'S2', 'U1');
    await addDevice(store(), 'D1', 'U1');
    for (const serviceId of ['S1', 'S2']) await store().addPushSubscription(serviceId, 'U1', 'D1', T0);
    const held = await side.holdQueue('S1', 'D1');

    const pushing = store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 1, 'secret-of-D1');
    await held.reached();
    // Unregistered, registered again under its id and subscribed to again, while the push is held.
    const again = (async () => {
      await store().unregisterDevice('D1', 'U1', T0 + 2);
      await store().registerDevice({ ...newDevice('D1'), secretHash: 'secret-of-the-second-D1' }, 'U1', T0 + 3);
      for (const serviceId of ['S1', 'S2']) await store().addPushSubscription(serviceId, 'U1', 'D1', T0 + 4);
    })();
    await held.releaseAfter(again);
    await Promise.all([pushing, again]);

    // In the order delivered (their sequence), not the times the callers gave.
    const told = async (serviceId: string) =>
      (await recorded(store(), serviceId, 'D1')).sort((a, b) => a.message.sequence - b.message.sequence).map((m) => m.message.pushType);
    expect(await told('S2')).toEqual(['DEVICE_REGISTERED', 'DEVICE_PUSH', 'DEVICE_UNREGISTERED', 'DEVICE_REGISTERED']);
    expect(await told('S1')).toEqual(['DEVICE_PUSH']);
  });

  it('refuses a push that comes while its device is being unregistered, once the unregistration is done', async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1');
    await store().addPushSubscription('S1', 'U1', 'D1', T0);
    const held = await side.holdQueue('S1', 'D1');

    // The unregistration is held as it records DEVICE_UNREGISTERED, the device already in its hands.
    const unregistering = store().unregisterDevice('D1', 'U1', T0 + 1);
    await held.reached();
    const pushing = store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 2, 'secret-of-D1');
    await held.releaseAfter(pushing);

    expect(await unregistering).toBe(true);
    await expect(pushing).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect((await recorded(store(), 'S1', 'D1')).map((m) => m.message.pushType)).toEqual(['DEVICE_REGISTERED', 'DEVICE_UNREGISTERED']);
  });

  /**
   * D1 is U1's, shared with U2; S1 hears U2 and S2 hears U1, each subscribed to D1's pushes and
   * events. U2's unregistration of D1 is held as it records DEVICE_UNREGISTERED for S1, and `message`
   * comes from the device meanwhile: U1 still has the device, so it is recorded, but for S2 alone.
   */
  async function messageDuringUnregistrationOfAShare(message: () => Promise<unknown>): Promise<void> {
    await addService(store(), 'S1');
    await addService(store(), 'S2');
    await addUser(store(), 'U1');
    await addUser(store(), 'U2');
    await connect(store(), 'S1', 'U2');
    await connect(store(), 'S2', 'U1');
    await addDevice(store(), 'D1', 'U1');
    await store().shareDevice('D1', 'U2', T0);
    for (const [serviceId, userNumber] of [['S1', 'U2'], ['S2', 'U1']] as const) {
      await store().addPushSubscription(serviceId, userNumber, 'D1', T0);
      await store().upsertEventSubscription({ serviceId, userNumber, deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
    }
    const held = await side.holdQueue('S1', 'D1');

    const unregistering = store().unregisterDevice('D1', 'U2', T0 + 1);
    await held.reached();
    const coming = message();
    await held.releaseAfter(coming);
    expect(await unregistering).toBe(true);
    await coming;

    const told = async (serviceId: string) =>
      (await recorded(store(), serviceId, 'D1')).sort((a, b) => a.message.sequence - b.message.sequence).map((m) => m.message.pushType);
    expect(await told('S1')).toEqual(['DEVICE_REGISTERED', 'DEVICE_UNREGISTERED']);
  }

  it("records a push that comes while one user of a shared device unregisters it for the other users alone, once the unregistration is done", async () => {
    await messageDuringUnregistrationOfAShare(() => store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 2, 'secret-of-D1'));
    expect(await pushTypes(store(), 'S2')).toEqual(['DEVICE_REGISTERED', 'DEVICE_PUSH']);
  });

  it("records a report that comes while one user of a shared device unregisters it for the other users alone, once the unregistration is done", async () => {
    const running = { runState: { currentState: 'RUNNING' } };
    await messageDuringUnregistrationOfAShare(() => store().applyReport('D1', running, running, T0 + 2, undefined, 'secret-of-D1'));
    expect(await pushTypes(store(), 'S2')).toEqual(['DEVICE_REGISTERED', 'DEVICE_STATUS']);
  });
}
