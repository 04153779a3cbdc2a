/** Devices, their users and status; every change records its messages in the same transaction. */
import type { DeviceStatus } from '../../catalog/types.js';
import {
  isEmptyReport,
  lifecycleMessages,
  pushMessages,
  statusMessages,
  type DeviceFacts,
  type EventSubscriber,
  type LifecycleListener,
  type LifecyclePushType,
  type Subscriber,
} from '../messages.js';
import type { Device, DeviceState, DeviceType, NewDevice } from '../../core/model.js';
import type { Sql } from './database.js';
import { recordMessages } from './sqlite-outbox.js';
import { keptLookup } from './recording-lookups.js';
import { flag, parseJson, parseStatus, toDeviceWithUsers, type DeviceRow, type DeviceWithUsersRow } from './rows.js';
import { allowsType } from './sqlite-subscriptions.js';
import type { DevicesArea, DeviceStatusJson, StatusChange } from '../areas/devices.js';
import type { GroupCommit } from './group-commit.js';
import { ExpiringMap, LOOKUP_TTL_MS } from '../../core/cache.js';
import { groupHalfTaken, pushNotRecorded, statusNotWritten, unknownDevice, type GroupHalf } from '../rules.js';
import { sharedWith } from './sqlite-oauth.js';

/** Entries of the status cache at most: the oldest go first beyond it. */
const STATUS_CACHE_CAPACITY = 20_000;

/** Each database's statuses as last read or written (see sqliteDevices). */
const statusCaches = new WeakMap<Sql, ExpiringMap<string, DeviceStatusJson>>();

const DEVICE_COLUMNS = 'd.device_id, d.device_type, d.model_name, d.alias, d.group_id, d.secret_hash, d.virtual, d.online, d.created_at';

function registerDevice(sql: Sql, device: NewDevice, ownerUserNumber: string, at: number): Device {
  return sql.write(() => {
    if (device.groupId !== null && hasGroupHalf(sql, ownerUserNumber, device)) throw groupHalfTaken(device, ownerUserNumber);
    sql.run(
      `INSERT INTO devices (device_id, device_type, model_name, alias, group_id, secret_hash, virtual, online, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      device.deviceId,
      device.deviceType,
      device.modelName,
      device.alias,
      device.groupId,
      device.secretHash,
      flag(device.virtual),
      flag(device.online),
      at,
    );
    sql.run('INSERT INTO device_states (device_id, status, version) VALUES (?, ?, 1)', device.deviceId, JSON.stringify(device.status));
    addRegistration(sql, device.deviceId, ownerUserNumber, at);
    announce(sql, 'DEVICE_REGISTERED', device, ownerUserNumber, at);
    return mustGetDevice(sql, device.deviceId);
  });
}

/**
 * Whether the user's devices have another of the device's type in its group (not the device itself:
 * sharing a device the user has already is no second half).
 */
function hasGroupHalf(sql: Sql, userNumber: string, device: GroupHalf): boolean {
  return (
    sql.one(
      `SELECT 1 FROM device_users r JOIN devices d ON d.device_id = r.device_id
       WHERE r.user_number = ? AND d.group_id = ? AND d.device_type = ? AND d.device_id <> ?`,
      userNumber,
      device.groupId,
      device.deviceType,
      device.deviceId,
    ) !== undefined
  );
}

/**
 * false when the device or the user is unknown, or the device is already registered to the user.
 * Rejects a washtower half whose type the user's group has already, as registerDevice does.
 */
function shareDevice(sql: Sql, deviceId: string, userNumber: string, at: number): boolean {
  return sql.write(() => {
    const device = deviceRow(sql, deviceId);
    if (!device || !sql.one('SELECT 1 FROM users WHERE user_number = ?', userNumber)) return false;
    const half = { deviceId, deviceType: device.device_type, groupId: device.group_id };
    if (half.groupId !== null && hasGroupHalf(sql, userNumber, half)) throw groupHalfTaken(half, userNumber);
    if (!addRegistration(sql, deviceId, userNumber, at)) return false;
    announce(sql, 'DEVICE_REGISTERED', factsOf(device), userNumber, at);
    return true;
  });
}

/** false when the device is not registered to the user. */
export function unregisterDevice(sql: Sql, deviceId: string, userNumber: string, at: number): boolean {
  return sql.write(() => {
    const device = deviceRow(sql, deviceId);
    if (!device || !usersOf(sql, deviceId).includes(userNumber)) return false;
    // Announced with the alias and type it had; then the registration goes and the user's subscriptions cascade.
    announce(sql, 'DEVICE_UNREGISTERED', factsOf(device), userNumber, at);
    sql.run('DELETE FROM device_users WHERE device_id = ? AND user_number = ?', deviceId, userNumber);
    if (usersOf(sql, deviceId).length === 0) {
      sql.run('DELETE FROM devices WHERE device_id = ?', deviceId);
      // Also when a user is deleted through accounts: a control or report then finds no device.
      statusCaches.get(sql)?.delete(deviceId);
    }
    return true;
  });
}

/** Renaming to the alias it already has changes nothing and tells nobody. */
function renameDevice(sql: Sql, deviceId: string, alias: string, at: number): Device | undefined {
  return sql.write(() => {
    const device = deviceRow(sql, deviceId);
    if (!device) return undefined;
    if (device.alias !== alias) {
      sql.run('UPDATE devices SET alias = ? WHERE device_id = ?', alias, deviceId);
      const renamed = { ...factsOf(device), alias };
      for (const userNumber of usersOf(sql, deviceId)) announce(sql, 'DEVICE_ALIAS_CHANGED', renamed, userNumber, at);
    }
    return mustGetDevice(sql, deviceId);
  });
}

/** A device with its users, owner first, as a JSON array: one statement per read of devices. */
export const DEVICE_WITH_USERS = `SELECT ${DEVICE_COLUMNS},
    (SELECT json_group_array(u.user_number ORDER BY u.id) FROM device_users u WHERE u.device_id = d.device_id) AS user_numbers
  FROM devices d`;

function getDevice(sql: Sql, deviceId: string): Device | undefined {
  const row = sql.one<DeviceWithUsersRow>(`${DEVICE_WITH_USERS} WHERE d.device_id = ?`, deviceId);
  return row && toDeviceWithUsers(row);
}

function mustGetDevice(sql: Sql, deviceId: string): Device {
  const device = getDevice(sql, deviceId);
  if (!device) throw new Error(`Device ${deviceId} vanished inside its own transaction`);
  return device;
}

/** A device's columns (DEVICE_COLUMNS) then one of its users, as an array. */
type DeviceUserValues = [string, DeviceType, string, string, string | null, string, number, number, number, string];

/** Devices registered to the user, in the order they were registered to it. */
function listUserDevices(sql: Sql, userNumber: string): Device[] {
  // One row per device and user, owner first, as arrays: building an object of named columns per
  // row, and a JSON array of users per device, was most of the cost of reading a user's 12 devices.
  const rows = sql.rows<DeviceUserValues>(
    `SELECT ${DEVICE_COLUMNS}, u.user_number FROM device_users r
     JOIN devices d ON d.device_id = r.device_id
     JOIN device_users u ON u.device_id = r.device_id
     WHERE r.user_number = ? ORDER BY r.id, u.id`,
    userNumber,
  );
  const list: Device[] = [];
  let device: Device | undefined;
  for (const row of rows) {
    // A device's rows are consecutive (ordered by its registration to this user), one per user.
    if (device?.deviceId === row[0]) {
      device.userNumbers.push(row[9]);
      continue;
    }
    device = {
      deviceId: row[0],
      deviceType: row[1],
      modelName: row[2],
      alias: row[3],
      groupId: row[4],
      secretHash: row[5],
      virtual: row[6] === 1,
      online: row[7] === 1,
      createdAt: row[8],
      userNumbers: [row[9]],
    };
    list.push(device);
  }
  return list;
}

/** Every virtual appliance, oldest first, with its users. */
function listVirtualDevices(sql: Sql): Device[] {
  return sql.all<DeviceWithUsersRow>(`${DEVICE_WITH_USERS} WHERE d.virtual = 1 ORDER BY d.created_at, d.device_id`).map(toDeviceWithUsers);
}

/** The device ids registered to the user, oldest registration first. */
export function userDeviceIds(sql: Sql, userNumber: string): string[] {
  return sql.all<{ device_id: string }>('SELECT device_id FROM device_users WHERE user_number = ? ORDER BY id', userNumber).map((r) => r.device_id);
}

const DEVICE_STATE = 'SELECT s.status, s.version, d.online FROM device_states s JOIN devices d ON d.device_id = s.device_id WHERE s.device_id = ?';

function getDeviceStatusJson(sql: Sql, deviceId: string): DeviceStatusJson | undefined {
  const row = sql.one<{ status: string; version: number; online: number }>(DEVICE_STATE, deviceId);
  return row && { statusJson: row.status, version: row.version, online: row.online === 1 };
}

/**
 * The version after the reports (see DevicesArea.applyReports), and the status they left when they
 * changed it; throws for an unknown device.
 */
function applyReports(
  sql: Sql,
  deviceId: string,
  reports: StatusChange[],
  at: number,
  from?: number,
  secretHash?: string,
): { version: number; written?: DeviceStatusJson } {
  return sql.write(() => {
    const changes = reports.filter((change) => !isEmptyReport(change.report));
    if (changes.length === 0) return { version: versionOf(sql, deviceId) };
    // One write of the last status for them all: what the ones before left is never read by anyone.
    // The status row goes with its device (ON DELETE CASCADE), so the device's type comes with it.
    // Another process on the file (the admin CLI) may have written the status since it was read, or
    // registered the id again since the report came: the secret tells its registrations apart.
    const statusJson = JSON.stringify(changes[changes.length - 1]!.status);
    const updated = sql.one<{ version: number; device_type: DeviceType; online: number }>(
      `UPDATE device_states SET status = ?, version = version + ? WHERE device_id = ? AND (? IS NULL OR version = ?)
         AND (? IS NULL OR (SELECT secret_hash FROM devices d WHERE d.device_id = device_states.device_id) = ?)
       RETURNING version, (SELECT device_type FROM devices d WHERE d.device_id = device_states.device_id) AS device_type,
         (SELECT online FROM devices d WHERE d.device_id = device_states.device_id) AS online`,
      statusJson,
      changes.length,
      deviceId,
      from ?? null,
      from ?? null,
      secretHash ?? null,
      secretHash ?? null,
    );
    if (!updated) {
      const stored = sql.one<{ secret_hash: string }>('SELECT secret_hash FROM devices WHERE device_id = ?', deviceId);
      throw statusNotWritten(deviceId, stored?.secret_hash, from, secretHash);
    }
    const place = { deviceId, deviceType: updated.device_type };
    const subscribers = keptLookup(sql, 'event subscribers', deviceId, () => eventSubscribers(sql, place));
    recordMessages(sql, changes.flatMap((change) => statusMessages(place, change.report, subscribers, at)), at);
    return { version: updated.version, written: { statusJson, version: updated.version, online: updated.online === 1 } };
  });
}

function versionOf(sql: Sql, deviceId: string): number {
  const row = sql.one<{ version: number }>('SELECT version FROM device_states WHERE device_id = ?', deviceId);
  if (!row) throw unknownDevice(deviceId);
  return row.version;
}

/** An unknown device has no subscribers, so nothing is recorded for it (see DevicesArea.recordPush). */
function recordPush(sql: Sql, deviceId: string, pushCode: string, at: number, secretHash?: string): void {
  sql.write(() => {
    const device = deviceRow(sql, deviceId);
    // The id may have been registered again since the push came: the secret tells its registrations apart.
    if (secretHash !== undefined && device?.secret_hash !== secretHash) throw pushNotRecorded(deviceId);
    if (device) recordMessages(sql, pushMessages(devicePlace(device), pushCode, pushSubscribers(sql, device)), at);
  });
}

/** The secret tells the registrations of an id apart (see DevicesArea.setOnline). */
function setOnline(sql: Sql, deviceId: string, online: boolean, secretHash?: string): boolean {
  const secret = secretHash ?? null;
  return sql.run('UPDATE devices SET online = ? WHERE device_id = ? AND (? IS NULL OR secret_hash = ?)', flag(online), deviceId, secret, secret) === 1;
}

function setRealDevicesOffline(sql: Sql): string[] {
  return sql.write(() => sql.all<{ device_id: string }>('UPDATE devices SET online = 0 WHERE online = 1 AND virtual = 0 RETURNING device_id').map((r) => r.device_id));
}

function countOnlineDevices(sql: Sql): number {
  return sql.one<{ n: number }>('SELECT count(*) AS n FROM devices WHERE online = 1')?.n ?? 0;
}

function deviceRow(sql: Sql, deviceId: string): DeviceRow | undefined {
  return sql.one<DeviceRow>(`SELECT ${DEVICE_COLUMNS} FROM devices d WHERE d.device_id = ?`, deviceId);
}

/** The owner first, then the users it was shared with. */
function usersOf(sql: Sql, deviceId: string): string[] {
  return sql.all<{ user_number: string }>('SELECT user_number FROM device_users WHERE device_id = ? ORDER BY id', deviceId).map((r) => r.user_number);
}

/** false when the device is already registered to the user. */
function addRegistration(sql: Sql, deviceId: string, userNumber: string, at: number): boolean {
  return (
    sql.run(
      'INSERT INTO device_users (device_id, user_number, registered_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      deviceId,
      userNumber,
      at,
    ) === 1
  );
}

/** Records a lifecycle message of the device for the user to each service listening to that user. */
function announce(sql: Sql, pushType: LifecyclePushType, device: DeviceFacts, userNumber: string, at: number): void {
  recordMessages(sql, lifecycleMessages(pushType, device, userNumber, listenersOf(sql, userNumber, device.deviceId)), at);
}

function factsOf(device: DeviceRow): DeviceFacts {
  return { ...devicePlace(device), modelName: device.model_name, alias: device.alias };
}

function devicePlace(device: DeviceRow): { deviceId: string; deviceType: DeviceType } {
  return { deviceId: device.device_id, deviceType: device.device_type };
}

/** The services connected to the user that its share lets hear of the device (a revoked consent, DESIGN J). */
function listenersOf(sql: Sql, userNumber: string, deviceId: string): LifecycleListener[] {
  const rows = sql.all<{ service_id: string; allowed_devices: string; device_list_loaded_at: number | null }>(
    `SELECT c.service_id, s.allowed_devices, c.device_list_loaded_at
     FROM connections c JOIN services s ON s.service_id = c.service_id
     WHERE c.user_number = ? AND ${sharedWith('c.service_id', 'c.user_number', '?')} ORDER BY c.created_at, c.service_id`,
    userNumber,
    deviceId,
  );
  return rows.map((r) => ({
    serviceId: r.service_id,
    allowedDevices: parseJson<DeviceType[]>(r.allowed_devices),
    deviceListLoadedAt: r.device_list_loaded_at,
  }));
}

/**
 * Subscribers of services that still allow the device's type and pairs whose share holds it: narrowing
 * allowedDevices or a consent silences the others at once (DESIGN J).
 */
function pushSubscribers(sql: Sql, device: DeviceRow): Subscriber[] {
  return sql
    .all<{ service_id: string; user_number: string; created_at: number }>(
      `SELECT p.service_id, p.user_number, p.created_at FROM push_subscriptions p JOIN services s ON s.service_id = p.service_id
       WHERE p.device_id = ? AND ${allowsType('s', '?')} AND ${sharedWith('p.service_id', 'p.user_number', 'p.device_id')} ORDER BY p.id`,
      device.device_id,
      device.device_type,
    )
    .map((r) => ({ serviceId: r.service_id, userNumber: r.user_number, subscribedAt: r.created_at }));
}

/** As pushSubscribers. */
function eventSubscribers(sql: Sql, device: { deviceId: string; deviceType: DeviceType }): EventSubscriber[] {
  return sql
    .all<{ service_id: string; user_number: string; created_at: number; expires_at: number }>(
      `SELECT e.service_id, e.user_number, e.created_at, e.expires_at FROM event_subscriptions e JOIN services s ON s.service_id = e.service_id
       WHERE e.device_id = ? AND ${allowsType('s', '?')} AND ${sharedWith('e.service_id', 'e.user_number', 'e.device_id')} ORDER BY e.id`,
      device.deviceId,
      device.deviceType,
    )
    .map((r) => ({ serviceId: r.service_id, userNumber: r.user_number, subscribedAt: r.created_at, expiresAt: r.expires_at }));
}

/**
 * The devices area on SQLite. Reports and pushes, the hot path of devices, share commits (`reports`).
 * Written out, not bound by `area()`: these are the calls of every status read, control and report,
 * and each stays one direct call.
 */
export function sqliteDevices(sql: Sql, reports: GroupCommit, now: () => number = Date.now): DevicesArea {
  // Statuses as last read or written, for the status read, the control and the report (issue 16: the
  // status read's statement was a sixth of its CPU, a control's read a tenth). This process writes
  // every status on its file (SQLite is one node), and each write below drops its device's entry
  // inside its transaction, so an entry never outlives a write here, committed or rolled back; a
  // status write puts its own entry back once committed. The TTL bounds what the status read is not
  // told: another process on the file (the CLI). A control or a report goes on from the state it
  // reads, so that read first asks SQLite whether another connection committed since (data_version),
  // once per turn of the event loop: the controls and reports that arrive together share the answer
  // (a sixth of a control's statements when each asked). A commit made elsewhere during that turn is
  // as concurrent with them as one made between their read and their write, a turn later at least.
  const statuses = new ExpiringMap<string, DeviceStatusJson>(LOOKUP_TTL_MS, STATUS_CACHE_CAPACITY, now);
  statusCaches.set(sql, statuses);
  const changing = <T>(deviceId: string, write: () => T): T => {
    try {
      return write();
    } finally {
      statuses.delete(deviceId);
    }
  };
  let dataVersion: number | undefined;
  let askedThisTurn = false;
  const othersWrote = (): boolean => {
    if (askedThisTurn) return false;
    askedThisTurn = true;
    setImmediate(() => {
      askedThisTurn = false;
    });
    const seen = sql.one<{ data_version: number }>('PRAGMA data_version')?.data_version;
    const changed = seen !== dataVersion;
    dataVersion = seen;
    return changed;
  };
  /** The status as stored now, kept for the next read: from memory when held, else read and kept. */
  const statusJson = (deviceId: string): DeviceStatusJson | undefined => {
    const cached = statuses.get(deviceId);
    if (cached) return cached;
    const state = getDeviceStatusJson(sql, deviceId);
    if (state) statuses.set(deviceId, state);
    return state;
  };
  // A status written by a group is kept once the group committed, which the promise says: the next
  // control or report of the device reads it from memory. Nothing runs between the commit and this
  // callback (its microtask), so no other write of the device can come between.
  const applying = async (deviceId: string, changes: StatusChange[], at: number, from?: number, secretHash?: string): Promise<number> => {
    const { version, written } = await reports.run(() => changing(deviceId, () => applyReports(sql, deviceId, changes, at, from, secretHash)));
    if (written) statuses.set(deviceId, written);
    return version;
  };
  return {
    registerDevice: async (device, owner, at) => changing(device.deviceId, () => registerDevice(sql, device, owner, at)),
    shareDevice: async (deviceId, userNumber, at) => shareDevice(sql, deviceId, userNumber, at),
    unregisterDevice: async (deviceId, userNumber, at) => changing(deviceId, () => unregisterDevice(sql, deviceId, userNumber, at)),
    renameDevice: async (deviceId, alias, at) => renameDevice(sql, deviceId, alias, at),
    getDevice: async (deviceId) => getDevice(sql, deviceId),
    listUserDevices: async (userNumber) => listUserDevices(sql, userNumber),
    listVirtualDevices: async () => listVirtualDevices(sql),
    getDeviceState: async (deviceId) => {
      if (othersWrote()) statuses.clear();
      const state = statusJson(deviceId);
      return state && { deviceId, status: parseStatus(state.statusJson), version: state.version, online: state.online };
    },
    // At once: a status read served from memory takes no promise (see Eventually).
    getDeviceStatusJson: statusJson,
    // Dropped when the group runs the work, in its transaction (before that the entry is what is
    // committed), and kept again once the group committed.
    applyReport: (deviceId, status, report, at, from, secretHash) => applying(deviceId, [{ status, report }], at, from, secretHash),
    applyReports: applying,
    recordPush: (deviceId, pushCode, at, secretHash) => reports.run(() => recordPush(sql, deviceId, pushCode, at, secretHash)),
    setOnline: async (deviceId, online, secretHash) => changing(deviceId, () => setOnline(sql, deviceId, online, secretHash)),
    countOnlineDevices: async () => countOnlineDevices(sql),
    setRealDevicesOffline: async () => {
      const ids = setRealDevicesOffline(sql);
      for (const id of ids) statuses.delete(id);
      return ids;
    },
  };
}
