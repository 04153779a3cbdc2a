/** Contract: the messages each change records (DESIGN A.8), their bodies, recipients and order. */
import { describe, expect, it } from 'vitest';
import { formatTimestamp, isMessageId } from '../../../src/ids.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, DRYER, freshStore, HOUR, pushTypes, recorded, T0, WASHER } from './world.js';

export function fanoutContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  /** S1 (loaded, washers and dryers), S2 (connected, list not loaded), S3 (loaded, dryers only), all to U1. */
  async function threeServices(): Promise<void> {
    await addService(store(), 'S1', [WASHER, DRYER]);
    await addService(store(), 'S2', [WASHER, DRYER]);
    await addService(store(), 'S3', [DRYER]);
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await connect(store(), 'S2', 'U1', false);
    await connect(store(), 'S3', 'U1');
  }

  describe('DEVICE_REGISTERED', () => {
    it('goes to each service that loaded the user\'s list and allows the type, with the exact body', async () => {
      await threeServices();
      await addDevice(store(), 'D1', 'U1', WASHER, T0);

      const [message, ...rest] = await recorded(store(), 'S1');
      expect(rest).toEqual([]);
      expect(message?.message).toMatchObject({
        serviceId: 'S1',
        deviceId: 'D1',
        kind: 'push',
        pushType: 'DEVICE_REGISTERED',
        sequence: 1,
        status: 'pending',
        attempts: 0,
        createdAt: T0,
        nextAttemptAt: T0,
        deliveredAt: null,
      });
      expect(Object.keys(message?.body ?? {})).toEqual(['messageId', 'timestamp', 'push']);
      expect(message?.body.messageId).toBe(message?.message.messageId);
      expect(isMessageId(message?.body.messageId ?? '')).toBe(true);
      expect(message?.body.timestamp).toBe('2025-01-09T04:24:35.540658');
      expect(Object.entries(message?.payload ?? {})).toEqual([
        ['pushType', 'DEVICE_REGISTERED'],
        ['serviceId', 'S1'],
        ['deviceId', 'D1'],
        ['userNumber', 'U1'],
        ['modelName', `MODEL-${WASHER}`],
        ['deviceType', WASHER],
        ['alias', 'My D1'],
      ]);
      expect(await recorded(store(), 'S2')).toEqual([]);
      expect(await recorded(store(), 'S3')).toEqual([]);
    });

    it('goes out when a device is shared, naming the user it was shared with', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await connect(store(), 'S1', 'U2');
      await addDevice(store(), 'D1', 'U1');
      expect(await recorded(store(), 'S1')).toEqual([]);
      await store().shareDevice('D1', 'U2', T0 + 1);
      const messages = await recorded(store(), 'S1');
      expect(messages.map((m) => [m.payload.pushType, m.payload.userNumber, m.message.sequence])).toEqual([['DEVICE_REGISTERED', 'U2', 1]]);
    });
  });

  describe('DEVICE_UNREGISTERED', () => {
    it('carries the alias and type the device had, and deletes that user\'s subscriptions to it in every service', async () => {
      await threeServices();
      await addUser(store(), 'U2');
      await connect(store(), 'S1', 'U2');
      await addDevice(store(), 'D1', 'U1', DRYER);
      await store().renameDevice('D1', 'Old dryer', T0 + 1);
      await store().shareDevice('D1', 'U2', T0 + 2);
      await store().addPushSubscription('S1', 'U1', 'D1', T0);
      await store().addPushSubscription('S3', 'U1', 'D1', T0);
      await store().addPushSubscription('S1', 'U2', 'D1', T0);
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);

      await store().unregisterDevice('D1', 'U1', T0 + 3);

      for (const serviceId of ['S1', 'S3']) {
        const last = (await recorded(store(), serviceId)).filter((m) => m.payload.userNumber === 'U1').at(-1);
        expect(Object.entries(last?.payload ?? {})).toEqual([
          ['pushType', 'DEVICE_UNREGISTERED'],
          ['serviceId', serviceId],
          ['deviceId', 'D1'],
          ['userNumber', 'U1'],
          ['deviceType', DRYER],
          ['alias', 'Old dryer'],
        ]);
        expect(last?.body.timestamp).toBe(formatTimestamp(T0 + 3));
      }
      expect(await recorded(store(), 'S2')).toEqual([]);
      expect(await store().listPushSubscriptions('S1', 'U1')).toEqual([]);
      expect(await store().listPushSubscriptions('S3', 'U1')).toEqual([]);
      expect(await store().listEventSubscriptions('S1', 'U1', T0)).toEqual([]);
      expect((await store().listPushSubscriptions('S1', 'U2')).map((s) => s.deviceId)).toEqual(['D1']);
    });

    it('keeps every recorded message when the device itself goes', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await addDevice(store(), 'D1', 'U1');
      await store().addPushSubscription('S1', 'U1', 'D1', T0);
      await store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 1);
      await store().unregisterDevice('D1', 'U1', T0 + 2);
      expect(await store().getDevice('D1')).toBeUndefined();
      const messages = await recorded(store(), 'S1', 'D1');
      expect(messages.map((m) => [m.payload.pushType, m.message.sequence])).toEqual([
        ['DEVICE_REGISTERED', 1],
        ['DEVICE_PUSH', 2],
        ['DEVICE_UNREGISTERED', 3],
      ]);
      expect(await store().getMessage(messages[0]?.message.messageId ?? '')).toEqual(messages[0]?.message);
    });
  });

  describe('DEVICE_ALIAS_CHANGED', () => {
    it('goes to each listening service once per user of the device, with the new alias', async () => {
      await threeServices();
      await addUser(store(), 'U2');
      await connect(store(), 'S1', 'U2');
      await addDevice(store(), 'D1', 'U1');
      await store().shareDevice('D1', 'U2', T0);
      await store().renameDevice('D1', 'Laundry', T0 + 1);
      const renamed = (await recorded(store(), 'S1')).filter((m) => m.payload.pushType === 'DEVICE_ALIAS_CHANGED');
      expect(renamed.map((m) => Object.entries(m.payload))).toEqual(
        ['U1', 'U2'].map((userNumber) => [
          ['pushType', 'DEVICE_ALIAS_CHANGED'],
          ['serviceId', 'S1'],
          ['deviceId', 'D1'],
          ['userNumber', userNumber],
          ['alias', 'Laundry'],
        ]),
      );
      expect(renamed.map((m) => m.message.sequence)).toEqual([3, 4]);
      expect(await recorded(store(), 'S2')).toEqual([]);
      expect(await recorded(store(), 'S3')).toEqual([]);
    });

    it('is not sent when the alias does not change', async () => {
      await threeServices();
      await addDevice(store(), 'D1', 'U1');
      await store().renameDevice('D1', 'My D1', T0 + 1);
      expect(await pushTypes(store(), 'S1')).toEqual(['DEVICE_REGISTERED']);
    });
  });

  describe('DEVICE_PUSH', () => {
    it('goes once to each service with a push subscription, listing its subscribed users by subscription time', async () => {
      await threeServices();
      await addUser(store(), 'U2');
      await addUser(store(), 'U3');
      await connect(store(), 'S1', 'U2');
      await connect(store(), 'S1', 'U3');
      await connect(store(), 'S3', 'U2');
      await addDevice(store(), 'D1', 'U1', DRYER);
      await store().shareDevice('D1', 'U2', T0);
      await store().shareDevice('D1', 'U3', T0);
      await store().addPushSubscription('S1', 'U2', 'D1', T0 + 1);
      await store().addPushSubscription('S1', 'U1', 'D1', T0 + 2);
      await store().addPushSubscription('S3', 'U2', 'D1', T0 + 3);

      await store().recordPush('D1', 'DRYING_IS_COMPLETE', T0 + 10);

      const push = (await recorded(store(), 'S1')).filter((m) => m.payload.pushType === 'DEVICE_PUSH');
      expect(push).toHaveLength(1);
      expect(push[0]?.message).toMatchObject({ kind: 'push', pushType: 'DEVICE_PUSH', createdAt: T0 + 10 });
      expect(Object.entries(push[0]?.payload ?? {})).toEqual([
        ['pushType', 'DEVICE_PUSH'],
        ['serviceId', 'S1'],
        ['deviceId', 'D1'],
        ['pushCode', 'DRYING_IS_COMPLETE'],
        ['deviceType', DRYER],
        ['userList', ['U2', 'U1']],
      ]);
      const s3 = (await recorded(store(), 'S3')).filter((m) => m.payload.pushType === 'DEVICE_PUSH');
      expect(s3.map((m) => m.payload.userList)).toEqual([['U2']]);
      expect(await recorded(store(), 'S2')).toEqual([]);
    });

    it('records nothing without a subscriber, or for an unknown device', async () => {
      await threeServices();
      await addDevice(store(), 'D1', 'U1');
      await store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 1);
      await store().recordPush('nope', 'WASHING_IS_COMPLETE', T0 + 1);
      expect(await pushTypes(store(), 'S1')).toEqual(['DEVICE_REGISTERED']);
    });
  });

  describe('DEVICE_STATUS', () => {
    it('goes once to each service with an unexpired event subscription, with the report and its users', async () => {
      await threeServices();
      await addUser(store(), 'U2');
      await connect(store(), 'S1', 'U2');
      await addDevice(store(), 'D1', 'U1', DRYER);
      await store().shareDevice('D1', 'U2', T0);
      const at = T0 + 100;
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U2', deviceId: 'D1', expiresAt: at + 1 }, T0 + 1, 100);
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: at + HOUR }, T0 + 2, 100);
      // Expiring exactly at the report's time counts as expired.
      await store().upsertEventSubscription({ serviceId: 'S3', userNumber: 'U1', deviceId: 'D1', expiresAt: at }, T0 + 3, 100);

      const report = { runState: { currentState: 'RUNNING' } };
      await store().applyReport('D1', { ...report, remain: 3 }, report, at);

      const events = (await recorded(store(), 'S1')).filter((m) => m.message.kind === 'event');
      expect(events).toHaveLength(1);
      // After DEVICE_REGISTERED for U1, then for U2 when it was shared.
      expect(events[0]?.message).toMatchObject({ pushType: 'DEVICE_STATUS', sequence: 3, createdAt: at, status: 'pending' });
      expect(Object.keys(events[0]?.body ?? {})).toEqual(['messageId', 'timestamp', 'event']);
      expect(Object.entries(events[0]?.payload ?? {})).toEqual([
        ['pushType', 'DEVICE_STATUS'],
        ['serviceId', 'S1'],
        ['deviceId', 'D1'],
        ['deviceType', DRYER],
        ['report', report],
        ['userList', ['U2', 'U1']],
      ]);
      expect(await pushTypes(store(), 'S3')).toEqual(['DEVICE_REGISTERED']);
      expect(await recorded(store(), 'S2')).toEqual([]);
    });

    it('goes for each report of one write in turn, none for an empty one, and the status is the last', async () => {
      await threeServices();
      await addDevice(store(), 'D1', 'U1', DRYER);
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
      const reports = [
        { status: { a: 1 }, report: { a: 1 } },
        { status: { a: 1 }, report: {} },
        { status: { a: 2, b: 1 }, report: { a: 2, b: 1 } },
      ];
      expect(await store().applyReports('D1', reports, T0 + 1)).toBe(3);

      expect(await store().getDeviceState('D1')).toMatchObject({ status: { a: 2, b: 1 }, version: 3 });
      const events = (await recorded(store(), 'S1')).filter((m) => m.message.kind === 'event');
      // After DEVICE_REGISTERED.
      expect(events.map((e) => [e.message.sequence, e.payload.report])).toEqual([
        [2, { a: 1 }],
        [3, { a: 2, b: 1 }],
      ]);
    });

    it('records nothing for an empty report or without a subscriber', async () => {
      await threeServices();
      await addDevice(store(), 'D1', 'U1');
      await store().applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1);
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
      await store().applyReport('D1', { a: 1 }, {}, T0 + 2);
      await store().applyReport('D1', [{ a: 1 }], [], T0 + 3);
      expect(await pushTypes(store(), 'S1')).toEqual(['DEVICE_REGISTERED']);
    });
  });

  describe('a service that no longer allows a device type (DESIGN J)', () => {
    /** S1 allows washers and dryers; U1's washer D1 and dryer D2 are subscribed to push and events. */
    async function subscribedToBoth(): Promise<void> {
      await addService(store(), 'S1', [WASHER, DRYER]);
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await addDevice(store(), 'D1', 'U1', WASHER);
      await addDevice(store(), 'D2', 'U1', DRYER);
      for (const deviceId of ['D1', 'D2']) {
        await store().addPushSubscription('S1', 'U1', deviceId, T0);
        await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt: T0 + HOUR }, T0, 100);
      }
    }

    const changes = async (at: number): Promise<void> => {
      for (const deviceId of ['D1', 'D2']) {
        await store().recordPush(deviceId, 'A_NOTIFICATION', at);
        await store().applyReport(deviceId, { a: at }, { a: at }, at);
      }
    };
    const told = async (since: number) =>
      (await recorded(store(), 'S1')).filter((m) => m.message.createdAt >= since).map((m) => [m.payload.pushType, m.payload.deviceId]);

    it('is told nothing more about devices of the type it lost; what was recorded before stays pending', async () => {
      await subscribedToBoth();
      await changes(T0 + 1);
      await store().updateService('S1', { allowedDevices: [DRYER] });
      await changes(T0 + 2);

      expect(await told(T0 + 2)).toEqual([['DEVICE_PUSH', 'D2'], ['DEVICE_STATUS', 'D2']]);
      const before = (await recorded(store(), 'S1')).filter((m) => m.message.createdAt === T0 + 1);
      expect(before.map((m) => [m.payload.pushType, m.payload.deviceId, m.message.status])).toEqual([
        ['DEVICE_PUSH', 'D1', 'pending'],
        ['DEVICE_STATUS', 'D1', 'pending'],
        ['DEVICE_PUSH', 'D2', 'pending'],
        ['DEVICE_STATUS', 'D2', 'pending'],
      ]);
    });

    it('is told again once the type is allowed again: the subscriptions were kept', async () => {
      await subscribedToBoth();
      await store().updateService('S1', { allowedDevices: [] });
      await changes(T0 + 1);
      expect(await told(T0 + 1)).toEqual([]);
      await store().updateService('S1', { allowedDevices: [WASHER] });
      await changes(T0 + 2);
      expect(await told(T0 + 2)).toEqual([['DEVICE_PUSH', 'D1'], ['DEVICE_STATUS', 'D1']]);
    });

    it('leaves the other services that allow the type their messages', async () => {
      await subscribedToBoth();
      await addService(store(), 'S2', [WASHER]);
      await connect(store(), 'S2', 'U1');
      await store().addPushSubscription('S2', 'U1', 'D1', T0);
      await store().updateService('S1', { allowedDevices: [DRYER] });
      await store().recordPush('D1', 'A_NOTIFICATION', T0 + 1);
      expect((await recorded(store(), 'S2')).map((m) => m.payload.pushType)).toEqual(['DEVICE_PUSH']);
      expect(await told(T0 + 1)).toEqual([]);
    });
  });

  describe('sequence', () => {
    it('numbers each (service, device) pair from 1 in the order the changes occurred', async () => {
      await addService(store(), 'S1');
      await addService(store(), 'S2');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await connect(store(), 'S2', 'U1');
      await addDevice(store(), 'D1', 'U1');
      await addDevice(store(), 'D2', 'U1');
      await store().addPushSubscription('S1', 'U1', 'D2', T0);
      await store().upsertEventSubscription({ serviceId: 'S2', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
      await store().recordPush('D2', 'WASHING_IS_COMPLETE', T0 + 1);
      await store().applyReport('D1', { a: 1 }, { a: 1 }, T0 + 2);
      await store().renameDevice('D1', 'One', T0 + 3);
      await store().recordPush('D2', 'WASHING_IS_COMPLETE', T0 + 4);

      const numbered = async (serviceId: string, deviceId: string) =>
        (await recorded(store(), serviceId, deviceId)).map((m) => [m.payload.pushType, m.message.sequence]);
      expect(await numbered('S1', 'D1')).toEqual([['DEVICE_REGISTERED', 1], ['DEVICE_ALIAS_CHANGED', 2]]);
      expect(await numbered('S1', 'D2')).toEqual([['DEVICE_REGISTERED', 1], ['DEVICE_PUSH', 2], ['DEVICE_PUSH', 3]]);
      expect(await numbered('S2', 'D1')).toEqual([['DEVICE_REGISTERED', 1], ['DEVICE_STATUS', 2], ['DEVICE_ALIAS_CHANGED', 3]]);
      expect(await numbered('S2', 'D2')).toEqual([['DEVICE_REGISTERED', 1]]);
      const ids = [...(await recorded(store(), 'S1')), ...(await recorded(store(), 'S2'))].map((m) => m.message.messageId);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('continues after a device id is unregistered and registered again', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await addDevice(store(), 'D1', 'U1');
      await store().unregisterDevice('D1', 'U1', T0 + 1);
      await addDevice(store(), 'D1', 'U1', WASHER, T0 + 2);
      expect((await recorded(store(), 'S1', 'D1')).map((m) => m.message.sequence)).toEqual([1, 2, 3]);
    });
  });
}
