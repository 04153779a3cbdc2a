/** Contract: devices, their users, status and connection. */
import { describe, expect, it } from 'vitest';
import { DeviceNotRegistered, StatusMoved } from '../../../src/core/errors.js';
import type { Device, NewDevice } from '../../../src/core/model.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, DRYER, freshStore, HOUR, newDevice, pushTypes, recorded, T0, WASHER } from './world.js';

const TOWER_WASHER = 'DEVICE_WASHTOWER_WASHER';
const TOWER_DRYER = 'DEVICE_WASHTOWER_DRYER';

/** A washtower half, in group G1 unless told. */
function half(deviceId: string, deviceType: string, groupId = 'G1'): NewDevice {
  return { ...newDevice(deviceId, deviceType), groupId };
}

export function devicesContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  describe('registration', () => {
    it('registers a device to its owner with its first status at version 1', async () => {
      await addUser(store(), 'U1');
      const status = [{ location: { locationName: 'MAIN' }, runState: { currentState: 'POWER_OFF' } }];
      const device = await store().registerDevice({ ...newDevice('D1', WASHER, 'Washer'), groupId: 'G1', virtual: false, online: false, status }, 'U1', T0);
      const expected = {
        deviceId: 'D1',
        deviceType: WASHER,
        modelName: `MODEL-${WASHER}`,
        alias: 'Washer',
        groupId: 'G1',
        secretHash: 'secret-of-D1',
        virtual: false,
        online: false,
        userNumbers: ['U1'],
        createdAt: T0,
      };
      expect(device).toEqual(expected);
      expect(await store().getDevice('D1')).toEqual(expected);
      expect(await store().getDeviceState('D1')).toEqual({ deviceId: 'D1', status, version: 1, online: false });
      expect(await store().getDevice('D2')).toBeUndefined();
      expect(await store().getDeviceState('D2')).toBeUndefined();
    });

    it('rejects a taken device id and writes nothing', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await connect(store(), 'S1', 'U2');
      await addDevice(store(), 'D1', 'U1');
      await expect(store().registerDevice(newDevice('D1', DRYER, 'Other'), 'U2', T0 + 1)).rejects.toThrow();
      expect(await store().getDevice('D1')).toMatchObject({ deviceType: WASHER, userNumbers: ['U1'] });
      expect(await store().listUserDevices('U2')).toEqual([]);
      expect(await pushTypes(store(), 'S1')).toEqual([]);
    });

    it("rejects a group's second device of a type among its owner's devices, and writes nothing; of two at once, one", async () => {
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await store().registerDevice(half('W1', TOWER_WASHER), 'U1', T0);
      await expect(store().registerDevice(half('W2', TOWER_WASHER), 'U1', T0 + 1)).rejects.toThrow(/group "G1"/);
      expect(await store().getDevice('W2')).toBeUndefined();
      // The other half, another group, or another user's group of the same name, are free.
      await store().registerDevice(half('D1', TOWER_DRYER), 'U1', T0 + 2);
      await store().registerDevice(half('W3', TOWER_WASHER, 'G2'), 'U1', T0 + 3);
      await store().registerDevice(half('W4', TOWER_WASHER), 'U2', T0 + 4);
      // A device shared with the user counts among its devices.
      await store().registerDevice(half('W5', TOWER_WASHER, 'G3'), 'U2', T0 + 5);
      await store().shareDevice('W5', 'U1', T0 + 6);
      await expect(store().registerDevice(half('W6', TOWER_WASHER, 'G3'), 'U1', T0 + 7)).rejects.toThrow(/group "G3"/);

      const outcomes = await Promise.allSettled(['W7', 'W8'].map((deviceId) => store().registerDevice(half(deviceId, TOWER_WASHER, 'G4'), 'U1', T0 + 8)));
      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((await store().listUserDevices('U1')).filter((d) => d.groupId === 'G4')).toHaveLength(1);
    });

    it('rejects an unknown owner and writes nothing', async () => {
      await expect(addDevice(store(), 'D1', 'ghost')).rejects.toThrow();
      expect(await store().getDevice('D1')).toBeUndefined();
      expect(await store().getDeviceState('D1')).toBeUndefined();
    });

    it('shares a device with more users: the owner stays first', async () => {
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await addUser(store(), 'U3');
      await addDevice(store(), 'D1', 'U1');
      expect(await store().shareDevice('D1', 'U3', T0 + 1)).toBe(true);
      expect(await store().shareDevice('D1', 'U2', T0 + 2)).toBe(true);
      expect((await store().getDevice('D1'))?.userNumbers).toEqual(['U1', 'U3', 'U2']);
      expect(await store().shareDevice('D1', 'U2', T0 + 3)).toBe(false);
      expect(await store().shareDevice('D1', 'ghost', T0 + 3)).toBe(false);
      expect(await store().shareDevice('nope', 'U2', T0 + 3)).toBe(false);
    });

    it("refuses to share a group's second device of a type with a user, and writes nothing; of two at once, one", async () => {
      await addService(store(), 'S1', [TOWER_WASHER, TOWER_DRYER]);
      for (const userNumber of ['U1', 'U2', 'U3']) await addUser(store(), userNumber);
      await store().registerDevice(half('W1', TOWER_WASHER), 'U1', T0);
      await store().registerDevice(half('W2', TOWER_WASHER), 'U2', T0 + 1);
      await connect(store(), 'S1', 'U1');
      await expect(store().shareDevice('W2', 'U1', T0 + 2)).rejects.toThrow(/group "G1"/);
      expect((await store().getDevice('W2'))?.userNumbers).toEqual(['U2']);
      expect(await pushTypes(store(), 'S1')).toEqual([]);
      // The other half completes the tower; a device the user has already is no second half of it.
      await store().registerDevice(half('D2', TOWER_DRYER), 'U2', T0 + 3);
      expect(await store().shareDevice('D2', 'U1', T0 + 4)).toBe(true);
      expect(await store().shareDevice('D2', 'U1', T0 + 5)).toBe(false);
      expect(await store().shareDevice('W1', 'U1', T0 + 5)).toBe(false);

      // Of two shares at once, or a share and a registration, of one half to the user: one.
      await store().registerDevice(half('W3', TOWER_WASHER, 'G2'), 'U2', T0 + 6);
      await store().registerDevice(half('W4', TOWER_WASHER, 'G2'), 'U3', T0 + 6);
      await store().registerDevice(half('W5', TOWER_WASHER, 'G3'), 'U2', T0 + 6);
      const outcomes = await Promise.allSettled([
        store().shareDevice('W3', 'U1', T0 + 7),
        store().shareDevice('W4', 'U1', T0 + 7),
        store().shareDevice('W5', 'U1', T0 + 7),
        store().registerDevice(half('W6', TOWER_WASHER, 'G3'), 'U1', T0 + 7),
      ]);
      expect(outcomes.slice(0, 2).map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(outcomes.slice(2).map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      const groups = (await store().listUserDevices('U1')).map((d) => d.groupId);
      expect([groups.filter((g) => g === 'G2'), groups.filter((g) => g === 'G3')]).toEqual([['G2'], ['G3']]);
    });

    it("lists a user's devices, owned and shared, in the order they were registered to the user", async () => {
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await addDevice(store(), 'D1', 'U1');
      await addDevice(store(), 'D2', 'U2', DRYER);
      await addDevice(store(), 'D3', 'U1');
      await store().shareDevice('D2', 'U1', T0 + 1);
      const devices = await store().listUserDevices('U1');
      expect(devices.map((d) => [d.deviceId, d.userNumbers])).toEqual([
        ['D1', ['U1']],
        ['D3', ['U1']],
        ['D2', ['U2', 'U1']],
      ]);
      expect(devices[2]).toMatchObject({ deviceType: DRYER, alias: 'My D2' });
      expect(await store().listUserDevices('nobody')).toEqual([]);
    });

    it('unregisters from one user, and deletes the device with its status when no user is left', async () => {
      await addUser(store(), 'U1');
      await addUser(store(), 'U2');
      await addDevice(store(), 'D1', 'U1');
      await store().shareDevice('D1', 'U2', T0);
      expect(await store().unregisterDevice('D1', 'U1', T0 + 1)).toBe(true);
      expect((await store().getDevice('D1'))?.userNumbers).toEqual(['U2']);
      expect(await store().unregisterDevice('D1', 'U1', T0 + 2)).toBe(false);
      expect(await store().unregisterDevice('D1', 'U2', T0 + 3)).toBe(true);
      expect(await store().getDevice('D1')).toBeUndefined();
      expect(await store().getDeviceState('D1')).toBeUndefined();
      expect(await store().unregisterDevice('D1', 'U2', T0 + 4)).toBe(false);
      // The id is free again.
      await addDevice(store(), 'D1', 'U1', DRYER);
      expect(await store().getDeviceState('D1')).toMatchObject({ version: 1 });
    });

    it('renames a device', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      expect(await store().renameDevice('D1', 'Laundry', T0 + 1)).toMatchObject({ deviceId: 'D1', alias: 'Laundry' });
      expect((await store().getDevice('D1'))?.alias).toBe('Laundry');
      expect(await store().renameDevice('nope', 'x', T0)).toBeUndefined();
    });
  });

  describe('status and connection', () => {
    it('replaces the status and increments the version on each report', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      const running = { runState: { currentState: 'RUNNING' }, timer: { remainHour: 1 } };
      expect(await store().applyReport('D1', running, { runState: { currentState: 'RUNNING' } }, T0 + 1)).toBe(2);
      expect(await store().getDeviceState('D1')).toEqual({ deviceId: 'D1', status: running, version: 2, online: true });
      const listed = [{ locationName: 'FRIDGE', targetTemperature: 3 }];
      expect(await store().applyReport('D1', listed, listed, T0 + 2)).toBe(3);
      expect((await store().getDeviceState('D1'))?.status).toEqual(listed);
    });

    it('gives the status as the JSON text it keeps, keys in their order, for a status read to answer unparsed', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      const running = { timer: { remainHour: 1 }, runState: { currentState: 'RUNNING' } };
      await store().applyReport('D1', running, running, T0 + 1);
      expect(await store().getDeviceStatusJson('D1')).toEqual({ statusJson: JSON.stringify(running), version: 2, online: true });
      expect(await store().getDeviceStatusJson('D2')).toBeUndefined();
    });

    it('gives each status read what the last write left: report, reports, connection, unregistration', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      const read = async () => store().getDeviceStatusJson('D1');
      expect(await read()).toMatchObject({ version: 1, online: true });
      await store().applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1);
      expect(await read()).toEqual({ statusJson: '{"a":1}', version: 2, online: true });
      await store().applyReports('D1', [{ status: { a: 2 }, report: { a: 2 } }, { status: { a: 3 }, report: { a: 3 } }], T0 + 2);
      expect(await read()).toEqual({ statusJson: '{"a":3}', version: 4, online: true });
      await store().setOnline('D1', false);
      expect(await read()).toMatchObject({ version: 4, online: false });
      await store().unregisterDevice('D1', 'U1', T0 + 3);
      expect(await read()).toBeUndefined();
    });

    it('changes nothing for an empty report', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      const before = await store().getDeviceState('D1');
      expect(await store().applyReport('D1', { other: true }, {}, T0 + 1)).toBe(1);
      expect(await store().applyReport('D1', [{ other: true }], [], T0 + 2)).toBe(1);
      expect(await store().getDeviceState('D1')).toEqual(before);
    });

    it('rejects a report for an unknown device', async () => {
      await expect(store().applyReport('nope', { a: 1 }, { a: 1 }, T0)).rejects.toThrow(/nope/);
      await expect(store().applyReports('nope', [{ status: { a: 1 }, report: { a: 1 } }], T0)).rejects.toThrow(/nope/);
    });

    it('stores a change worked out from the version stored, and nothing from one that another write overtook', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      await addService(store(), 'S1');
      await connect(store(), 'S1', 'U1');
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + 3_600_000 }, T0, 10);
      expect(await store().applyReport('D1', { a: 1 }, { a: 1 }, T0 + 1, 1)).toBe(2);
      // Worked out from version 1, which the write above overtook: its change would lose `a`.
      await expect(store().applyReport('D1', { b: 1 }, { b: 1 }, T0 + 2, 1)).rejects.toBeInstanceOf(StatusMoved);
      await expect(store().applyReports('D1', [{ status: { b: 1 }, report: { b: 1 } }], T0 + 2, 1)).rejects.toBeInstanceOf(StatusMoved);
      expect(await store().getDeviceState('D1')).toEqual({ deviceId: 'D1', status: { a: 1 }, version: 2, online: true });
      expect(await store().listMessages('S1', { deviceId: 'D1' })).toHaveLength(1);
      expect(await store().applyReports('D1', [{ status: { a: 1, b: 1 }, report: { b: 1 } }], T0 + 3, 2)).toBe(3);
    });

    it('stores a report only on the registration it came for: none on the device registered again under its id', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      const first = await registeredAgain(store(), 'D1', 'U1');
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 10);
      const stale = { runState: { currentState: 'RUNNING' } };

      // Alone, and among reports of other devices asked for at once (a group on PostgreSQL).
      await expect(store().applyReport('D1', stale, stale, T0 + 3, 1, first.secretHash)).rejects.toBeInstanceOf(DeviceNotRegistered);
      await expect(store().applyReports('D1', [{ status: stale, report: stale }], T0 + 3, undefined, first.secretHash)).rejects.toBeInstanceOf(DeviceNotRegistered);
      await addDevice(store(), 'D2', 'U1');
      const outcomes = await Promise.allSettled([
        store().applyReport('D1', stale, stale, T0 + 4, 1, first.secretHash),
        store().applyReport('D2', stale, stale, T0 + 4, 1, 'secret-of-D2'),
      ]);
      expect(outcomes).toMatchObject([{ status: 'rejected', reason: expect.any(DeviceNotRegistered) }, { status: 'fulfilled', value: 2 }]);
      // Gone altogether, it is the same.
      await store().unregisterDevice('D2', 'U1', T0 + 5);
      await expect(store().applyReport('D2', stale, stale, T0 + 6, 2, 'secret-of-D2')).rejects.toBeInstanceOf(DeviceNotRegistered);

      expect(await store().getDeviceState('D1')).toEqual({ deviceId: 'D1', status: newDevice('D1').status, version: 1, online: true });
      expect((await recorded(store(), 'S1', 'D1')).map((r) => r.message.pushType)).not.toContain('DEVICE_STATUS');
      expect(await store().applyReport('D1', stale, stale, T0 + 7, 1, 'secret-of-the-second-D1')).toBe(2);
    });

    it('records a push only for the registration it came for: none for the device registered again under its id', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      const first = await registeredAgain(store(), 'D1', 'U1');
      await addDevice(store(), 'D2', 'U1');
      for (const deviceId of ['D1', 'D2']) await store().addPushSubscription('S1', 'U1', deviceId, T0 + 2);

      // Alone, and among pushes of other devices asked for at once (a group commit on SQLite).
      await expect(store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 3, first.secretHash)).rejects.toBeInstanceOf(DeviceNotRegistered);
      const outcomes = await Promise.allSettled([
        store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 4, first.secretHash),
        store().recordPush('D2', 'WASHING_IS_COMPLETE', T0 + 4, 'secret-of-D2'),
      ]);
      expect(outcomes).toMatchObject([{ status: 'rejected', reason: expect.any(DeviceNotRegistered) }, { status: 'fulfilled' }]);
      // Gone altogether, it is the same.
      await store().unregisterDevice('D2', 'U1', T0 + 5);
      await expect(store().recordPush('D2', 'WASHING_IS_COMPLETE', T0 + 6, 'secret-of-D2')).rejects.toBeInstanceOf(DeviceNotRegistered);

      const pushes = async (deviceId: string) => (await recorded(store(), 'S1', deviceId)).filter((r) => r.payload.pushType === 'DEVICE_PUSH');
      expect(await pushes('D1')).toEqual([]);
      expect(await pushes('D2')).toHaveLength(1);
      await store().recordPush('D1', 'WASHING_IS_COMPLETE', T0 + 7, 'secret-of-the-second-D1');
      expect(await pushes('D1')).toHaveLength(1);
    });

    it('takes reports asked for at once, of many devices, together; refuses only those that fail', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      const devices = Array.from({ length: 20 }, (_, i) => `D${i}`);
      for (const deviceId of devices) {
        await addDevice(store(), deviceId, 'U1');
        await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt: T0 + 3_600_000 }, T0, 100);
      }
      const outcomes = await Promise.allSettled([
        ...devices.map((deviceId, i) => store().applyReport(deviceId, { n: i }, { n: i }, T0 + 1 + i)),
        store().applyReport('nope', { n: 0 }, { n: 0 }, T0 + 1),
        // Worked out from a version that is not D0's any more.
        store().applyReport('D0', { stale: true }, { stale: true }, T0 + 1, 5),
      ]);
      expect(outcomes.slice(0, 20)).toEqual(devices.map(() => ({ status: 'fulfilled', value: 2 })));
      expect(outcomes[20]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/nope/) } });
      expect(outcomes[21]).toMatchObject({ status: 'rejected', reason: expect.any(StatusMoved) });
      for (const [i, deviceId] of devices.entries()) {
        expect(await store().getDeviceState(deviceId)).toMatchObject({ status: { n: i }, version: 2 });
        // Each change's event, made at its own time.
        const events = (await recorded(store(), 'S1', deviceId)).filter((r) => r.message.pushType === 'DEVICE_STATUS');
        expect(events.map((r) => [r.payload.report, r.message.createdAt])).toEqual([[{ n: i }, T0 + 1 + i]]);
      }
    });

    it('keeps the exact text of statuses and event bodies written together, whatever their characters', async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      const texts = ['"quoted"', 'back\\slash', 'caf\u00e9 \u{1F9FA}', 'line\nbreak\u2028', '{"not":"json"}', 'lone \ud800 half', ''];
      for (const [i] of texts.entries()) {
        await addDevice(store(), `D${i}`, 'U1');
        await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: `D${i}`, expiresAt: T0 + 3_600_000 }, T0, 100);
      }
      await Promise.all(texts.map((text, i) => store().applyReport(`D${i}`, { label: text }, { label: text }, T0 + 1)));
      for (const [i, text] of texts.entries()) {
        expect(await store().getDeviceStatusJson(`D${i}`)).toMatchObject({ statusJson: JSON.stringify({ label: text }) });
        const [event] = (await recorded(store(), 'S1', `D${i}`)).filter((r) => r.message.pushType === 'DEVICE_STATUS');
        expect(event?.message.body).toContain(JSON.stringify({ label: text }));
        expect(event?.payload.report).toEqual({ label: text });
      }
    });

    it("keeps one device's reports asked for at once in the order they were asked for", async () => {
      await addService(store(), 'S1');
      await addUser(store(), 'U1');
      await connect(store(), 'S1', 'U1');
      await addDevice(store(), 'D1', 'U1');
      await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + 3_600_000 }, T0, 100);
      const versions = await Promise.all(Array.from({ length: 5 }, (_, n) => store().applyReport('D1', { n }, { n }, T0 + 1 + n)));
      expect(versions).toEqual([2, 3, 4, 5, 6]);
      expect((await store().getDeviceState('D1'))?.status).toEqual({ n: 4 });
      const events = (await recorded(store(), 'S1', 'D1')).filter((r) => r.message.pushType === 'DEVICE_STATUS').map((r) => r.message);
      expect(events.sort((a, b) => a.sequence - b.sequence).map((m) => JSON.parse(m.body).event.report)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    });

    it('takes several reports in one write, a version for each that is not empty', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      const reports = [
        { status: { a: 1 }, report: { a: 1 } },
        { status: { a: 1 }, report: {} },
        { status: { a: 2 }, report: { a: 2 } },
      ];
      expect(await store().applyReports('D1', reports, T0 + 1)).toBe(3);
      expect(await store().getDeviceState('D1')).toEqual({ deviceId: 'D1', status: { a: 2 }, version: 3, online: true });
      expect(await store().applyReports('D1', [{ status: { a: 2 }, report: {} }], T0 + 2)).toBe(3);
    });

    it('tracks whether a device is connected, and counts the connected ones', async () => {
      await addUser(store(), 'U1');
      await addDevice(store(), 'D1', 'U1');
      await store().registerDevice({ ...newDevice('D2'), online: false }, 'U1', T0);
      expect(await store().countOnlineDevices()).toBe(1);
      expect(await store().setOnline('D1', false)).toBe(true);
      expect(await store().setOnline('D2', true)).toBe(true);
      expect(await store().setOnline('D2', true)).toBe(true);
      expect(await store().getDeviceState('D1')).toMatchObject({ online: false, version: 1 });
      expect((await store().getDevice('D2'))?.online).toBe(true);
      expect(await store().countOnlineDevices()).toBe(1);
      expect(await store().setOnline('nope', true)).toBe(false);
    });

    it('changes the connection only of the registration it came for: not of the device registered again under its id', async () => {
      await addUser(store(), 'U1');
      const first = await registeredAgain(store(), 'D1', 'U1', { online: false });

      expect(await store().setOnline('D1', true, first.secretHash)).toBe(false);
      expect(await store().getDeviceState('D1')).toMatchObject({ online: false });
      expect(await store().setOnline('D2', true, 'secret-of-D2')).toBe(false);
      expect(await store().setOnline('D1', true, 'secret-of-the-second-D1')).toBe(true);
      expect(await store().getDeviceState('D1')).toMatchObject({ online: true });
    });
  });
}

/**
 * Registers `deviceId` to `owner`, unregisters it and registers it again with the secret `secret-of-the-second-{deviceId}`:
 * answers the first registration, whose messages must touch nothing of the second.
 */
async function registeredAgain(store: Store, deviceId: string, owner: string, second: Partial<NewDevice> = {}): Promise<Device> {
  const first = await addDevice(store, deviceId, owner);
  await store.unregisterDevice(deviceId, owner, T0 + 1);
  await store.registerDevice({ ...newDevice(deviceId), secretHash: `secret-of-the-second-${deviceId}`, ...second }, owner, T0 + 2);
  return first;
}
