/**
 * Devices, their users and status; every change records its messages in the same transaction.
 * Lifecycle changes of one device lock its row first, so they take turns across nodes.
 */
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
  type MessageSpec,
  type Subscriber,
} from '../messages.js';
import { groupHalfTaken, pushNotRecorded, statusNotWritten, unknownDevice, type GroupHalf } from '../rules.js';
import type { Device, NewDevice } from '../../core/model.js';
import { area, type Sql } from './database.js';
import { recordMessages, recordMessagesAt } from './postgres-outbox.js';
import { BatchedReads } from './batched-reads.js';
import { ReportGroups, type Outcome } from './report-groups.js';
import { allowsType } from './postgres-subscriptions.js';
import type { DevicesArea, StatusChange } from '../areas/devices.js';
import { sharedWith } from './postgres-oauth.js';

/** A device with its users (the owner first) in one row, shaped as `Device`. */
export const DEVICE = `SELECT d.device_id AS "deviceId", d.device_type AS "deviceType", d.model_name AS "modelName", d.alias,
    d.group_id AS "groupId", d.secret_hash AS "secretHash", d.virtual, d.online,
    ARRAY(SELECT u.user_number FROM device_users u WHERE u.device_id = d.device_id ORDER BY u.id) AS "userNumbers",
    d.created_at AS "createdAt"
  FROM devices d`;

/** A taken id or an unknown owner fails a constraint, and the transaction writes nothing. */
async function registerDevice(sql: Sql, device: NewDevice, ownerUserNumber: string, at: number): Promise<Device> {
  return sql.transaction(async (tx) => {
    if (device.groupId !== null) {
      await lockUserForHalves(tx, ownerUserNumber);
      if (await hasGroupHalf(tx, ownerUserNumber, device)) throw groupHalfTaken(device, ownerUserNumber);
    }
    await tx.run(
      `WITH created AS (
         INSERT INTO devices (device_id, device_type, model_name, alias, group_id, secret_hash, virtual, online, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         RETURNING device_id
       )
       INSERT INTO device_states (device_id, status, version) SELECT device_id, $10, 1 FROM created`,
      device.deviceId,
      device.deviceType,
      device.modelName,
      device.alias,
      device.groupId,
      device.secretHash,
      device.virtual,
      device.online,
      at,
      JSON.stringify(device.status),
    );
    await addRegistration(tx, device.deviceId, ownerUserNumber, at);
    await announce(tx, 'DEVICE_REGISTERED', device, [ownerUserNumber], at);
    const { deviceId, deviceType, modelName, alias, groupId, secretHash, virtual, online } = device;
    return { deviceId, deviceType, modelName, alias, groupId, secretHash, virtual, online, userNumbers: [ownerUserNumber], createdAt: at };
  });
}

/**
 * Locks the user until the transaction ends, before hasGroupHalf reads its devices: registrations and
 * shares of a group's halves to the user take turns, each seeing those before it (a plain
 * registration, whose device_users row only key-shares the user, does not wait). false when the user
 * is unknown.
 */
async function lockUserForHalves(tx: Sql, userNumber: string): Promise<boolean> {
  return (await tx.one('SELECT 1 FROM users WHERE user_number = $1 FOR NO KEY UPDATE', userNumber)) !== undefined;
}

/**
 * Whether the user's devices have another of the device's type in its group (not the device itself:
 * sharing a device the user has already is no second half). The user is locked (lockUserForHalves).
 */
async function hasGroupHalf(tx: Sql, userNumber: string, device: GroupHalf): Promise<boolean> {
  const half = await tx.one(
    `SELECT 1 FROM device_users r JOIN devices d ON d.device_id = r.device_id
     WHERE r.user_number = $1 AND d.group_id = $2 AND d.device_type = $3 AND d.device_id <> $4`,
    userNumber,
    device.groupId,
    device.deviceType,
    device.deviceId,
  );
  return half !== undefined;
}

/**
 * false when the device or the user is unknown, or the device is already registered to the user.
 * Rejects a washtower half whose type the user's group has already, as registerDevice does.
 */
async function shareDevice(sql: Sql, deviceId: string, userNumber: string, at: number): Promise<boolean> {
  return sql.transaction(async (tx) => {
    // The user before the device, in the order deleteUser locks them, so the two never deadlock. Locked
    // for halves whatever the device is, as its type and group are known only once it is locked: a
    // share then waits for other shares to the same user and registrations of halves to them, no more.
    if (!(await lockUserForHalves(tx, userNumber))) return false;
    const device = await lockDevice(tx, deviceId);
    if (!device) return false;
    if (device.groupId !== null && (await hasGroupHalf(tx, userNumber, device))) throw groupHalfTaken(device, userNumber);
    if (!(await addRegistration(tx, deviceId, userNumber, at))) return false;
    await announce(tx, 'DEVICE_REGISTERED', device, [userNumber], at);
    return true;
  });
}

/** false when the device is not registered to the user. */
export async function unregisterDevice(sql: Sql, deviceId: string, userNumber: string, at: number): Promise<boolean> {
  return sql.transaction(async (tx) => {
    const device = await lockDevice(tx, deviceId);
    if (!device?.userNumbers.includes(userNumber)) return false;
    // Its status row too, which a report locks before it reads the subscribers in a statement of its
    // own: a report coming meanwhile waits, then reads them without this user's.
    await tx.run('SELECT 1 FROM device_states WHERE device_id = $1 FOR NO KEY UPDATE', deviceId);
    // Announced with the alias and type it had; then the registration goes and the user's subscriptions cascade.
    await announce(tx, 'DEVICE_UNREGISTERED', device, [userNumber], at);
    await tx.run('DELETE FROM device_users WHERE device_id = $1 AND user_number = $2', deviceId, userNumber);
    if (device.userNumbers.length === 1) await tx.run('DELETE FROM devices WHERE device_id = $1', deviceId);
    return true;
  });
}

/** Renaming to the alias it already has changes nothing and tells nobody. */
async function renameDevice(sql: Sql, deviceId: string, alias: string, at: number): Promise<Device | undefined> {
  return sql.transaction(async (tx) => {
    const device = await lockDevice(tx, deviceId);
    if (!device || device.alias === alias) return device;
    await tx.run('UPDATE devices SET alias = $1 WHERE device_id = $2', alias, deviceId);
    const renamed = { ...device, alias };
    await announce(tx, 'DEVICE_ALIAS_CHANGED', renamed, renamed.userNumbers, at);
    return renamed;
  });
}

async function getDevice(sql: Sql, deviceId: string): Promise<Device | undefined> {
  return sql.one<Device>(`${DEVICE} WHERE d.device_id = $1`, deviceId);
}

/**
 * Locked until the transaction ends, then read. Two statements: a statement that waited for the lock
 * would still read the device's users as they were when it began, before the holder committed.
 */
async function lockDevice(tx: Sql, deviceId: string): Promise<Device | undefined> {
  if (!(await tx.one('SELECT 1 FROM devices WHERE device_id = $1 FOR UPDATE', deviceId))) return undefined;
  return getDevice(tx, deviceId);
}

/** Devices registered to the user, in the order they were registered to it. */
async function listUserDevices(sql: Sql, userNumber: string): Promise<Device[]> {
  return sql.all<Device>(`${DEVICE} JOIN device_users r ON r.device_id = d.device_id WHERE r.user_number = $1 ORDER BY r.id`, userNumber);
}

/** Every virtual appliance, oldest first, with its users. */
async function listVirtualDevices(sql: Sql): Promise<Device[]> {
  return sql.all<Device>(`${DEVICE} WHERE d.virtual ORDER BY d.created_at, d.device_id COLLATE "C"`);
}

/**
 * The device ids registered to the user, in the order a group of reports locks their status rows
 * (UPDATE_GROUP), so that unregistering them one by one never waits on such a group in a cycle.
 */
export async function userDeviceIds(sql: Sql, userNumber: string): Promise<string[]> {
  const rows = await sql.all<{ deviceId: string }>('SELECT device_id AS "deviceId" FROM device_users WHERE user_number = $1 ORDER BY device_id', userNumber);
  return rows.map((r) => r.deviceId);
}

interface StateRow {
  deviceId: string;
  status: string;
  version: number;
  online: boolean;
}

const DEVICE_STATES = `SELECT s.device_id AS "deviceId", s.status, s.version, d.online FROM device_states s JOIN devices d ON d.device_id = s.device_id
  WHERE s.device_id = ANY ($1::text[])`;

/** The states of devices asked for in one turn, read together (batched-reads.ts). */
function stateReads(sql: Sql): BatchedReads<StateRow> {
  return new BatchedReads(async (deviceIds) => {
    const rows = await sql.all<StateRow>(DEVICE_STATES, deviceIds);
    return new Map(rows.map((row) => [row.deviceId, row]));
  });
}

/**
 * The version after the reports (see DevicesArea.applyReports); throws for an unknown device. The
 * status row stays locked until commit, so the reports of one device, and the order of their
 * messages, take turns.
 */
async function applyReports(sql: Sql, deviceId: string, reports: StatusChange[], at: number, from?: number, secretHash?: string): Promise<number> {
  const changes = reports.filter((change) => !isEmptyReport(change.report));
  if (changes.length === 0) {
    const state = await sql.one<{ version: number }>('SELECT version FROM device_states WHERE device_id = $1', deviceId);
    if (!state) throw unknownDevice(deviceId);
    return state.version;
  }
  return sql.transaction(async (tx) => {
    // One write of the last status for them all: what the ones before left is never read by anyone.
    // The status was read outside this transaction: another node may have written it since (its
    // report, a control through it), and writing over that would lose its change; or registered the
    // id again since the report came, which the secret tells apart.
    const updated = await tx.one<{ version: number; deviceType: string }>(
      `UPDATE device_states s SET status = $2, version = s.version + $3 FROM devices d
       WHERE s.device_id = $1 AND d.device_id = s.device_id AND ($4::integer IS NULL OR s.version = $4)
         AND ($5::text IS NULL OR d.secret_hash = $5)
       RETURNING s.version, d.device_type AS "deviceType"`,
      deviceId,
      JSON.stringify(changes[changes.length - 1]!.status),
      changes.length,
      from ?? null,
      secretHash ?? null,
    );
    if (!updated) {
      const stored = await storedSecrets(tx, [deviceId]);
      throw statusNotWritten(deviceId, stored.get(deviceId), from, secretHash);
    }
    // Only services that still allow the device's type, and pairs whose share holds it: narrowing
    // allowedDevices or a consent silences the others at once (DESIGN J).
    const subscribers = await tx.all<EventSubscriber>(
      `SELECT e.service_id AS "serviceId", e.user_number AS "userNumber", e.created_at AS "subscribedAt", e.expires_at AS "expiresAt"
       FROM event_subscriptions e JOIN services s ON s.service_id = e.service_id
       WHERE e.device_id = $1 AND ${allowsType('s', '$2')} AND ${sharedWith('e.service_id', 'e.user_number', 'e.device_id')} ORDER BY e.id`,
      deviceId,
      updated.deviceType,
    );
    const place = { deviceId, deviceType: updated.deviceType };
    await recordMessages(tx, changes.flatMap((change) => statusMessages(place, change.report, subscribers, at)), at);
    return updated.version;
  });
}

/** A device's reports as one caller asked for them, with changes only (see applyReports). */
interface ReportCall {
  deviceId: string;
  changes: StatusChange[];
  at: number;
  from: number | undefined;
  secretHash: string | undefined;
}

/**
 * The group's status writes in one statement. Its status rows are locked first, all of them and in
 * the order of their keys, so that two groups of two nodes never wait on each other in a cycle: the
 * count is one row, which the UPDATE joins, so it is whole before any row is updated. A row whose
 * version is not the one its caller read, or whose device is not the registration its caller wrote
 * for, is left as it is (see applyReports). The writes come as one JSON array ($2), as the messages
 * do (see recordMessagesAt).
 */
const UPDATE_GROUP = `WITH v AS (
    SELECT * FROM json_to_recordset($2::json) AS v (device_id text, status text, n integer, expected integer, secret_hash text)
  ), locked AS (
    SELECT count(*) FROM (SELECT 1 FROM device_states WHERE device_id = ANY ($1::text[]) ORDER BY device_id FOR UPDATE) l
  )
  UPDATE device_states s SET status = v.status, version = s.version + v.n
  FROM v CROSS JOIN locked, devices d
  WHERE s.device_id = v.device_id AND d.device_id = s.device_id AND (v.expected IS NULL OR s.version = v.expected)
    AND (v.secret_hash IS NULL OR d.secret_hash = v.secret_hash)
  RETURNING s.device_id AS "deviceId", s.version, d.device_type AS "deviceType"`;

/** The event subscribers of each device of the group (their types given), as applyReports reads them for one. */
const GROUP_SUBSCRIBERS = `SELECT e.device_id AS "deviceId", e.service_id AS "serviceId", e.user_number AS "userNumber",
    e.created_at AS "subscribedAt", e.expires_at AS "expiresAt"
  FROM event_subscriptions e JOIN unnest($1::text[], $2::text[]) AS v (device_id, device_type) ON v.device_id = e.device_id
    JOIN services s ON s.service_id = e.service_id
  WHERE ${allowsType('s', 'v.device_type')} AND ${sharedWith('e.service_id', 'e.user_number', 'e.device_id')} ORDER BY e.id`;

/**
 * The reports of a group (one call per device) in one transaction of three statements: the calls'
 * versions, or why one was refused (an unknown device, a status moved since it was read), which
 * leaves the others to commit. When the transaction fails as a whole, each call runs alone, so that
 * only the one at fault is refused (with the retries of a transaction of its own). A group of one
 * is a report alone: its statements are applyReports', cheaper to plan than the group's.
 */
async function applyReportGroup(sql: Sql, calls: ReportCall[]): Promise<Array<Outcome<number>>> {
  const alone = (call: ReportCall): Promise<Outcome<number>> =>
    applyReports(sql, call.deviceId, call.changes, call.at, call.from, call.secretHash).then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
  if (calls.length === 1) return [await alone(calls[0]!)];
  try {
    return await sql.transaction((tx) => writeReportGroup(tx, calls));
  } catch {
    return Promise.all(calls.map(alone));
  }
}

async function writeReportGroup(tx: Sql, calls: ReportCall[]): Promise<Array<Outcome<number>>> {
  const writes = calls.map((c) => ({
    device_id: c.deviceId,
    status: JSON.stringify(c.changes[c.changes.length - 1]!.status),
    n: c.changes.length,
    expected: c.from ?? null,
    secret_hash: c.secretHash ?? null,
  }));
  const updated = await tx.all<{ deviceId: string; version: number; deviceType: string }>(
    UPDATE_GROUP,
    calls.map((c) => c.deviceId),
    JSON.stringify(writes),
  );
  const written = new Map(updated.map((row) => [row.deviceId, row]));
  const subscribers = new Map<string, EventSubscriber[]>();
  if (updated.length > 0) {
    const rows = await tx.all<EventSubscriber & { deviceId: string }>(
      GROUP_SUBSCRIBERS,
      updated.map((row) => row.deviceId),
      updated.map((row) => row.deviceType),
    );
    for (const { deviceId, ...subscriber } of rows) {
      const listening = subscribers.get(deviceId);
      if (listening) listening.push(subscriber);
      else subscribers.set(deviceId, [subscriber]);
    }
  }
  const made = calls.flatMap((call) => {
    const row = written.get(call.deviceId);
    if (!row) return [];
    const place = { deviceId: call.deviceId, deviceType: row.deviceType };
    const listening = subscribers.get(call.deviceId) ?? [];
    return call.changes.flatMap((change) => statusMessages(place, change.report, listening, call.at).map((spec) => ({ spec, at: call.at })));
  });
  await recordMessagesAt(tx, made);
  const refused = calls.filter((call) => !written.has(call.deviceId));
  const stored = refused.length > 0 ? await storedSecrets(tx, refused.map((call) => call.deviceId)) : new Map<string, string>();
  return calls.map((call): Outcome<number> => {
    const row = written.get(call.deviceId);
    if (row) return { ok: true, value: row.version };
    return { ok: false, error: statusNotWritten(call.deviceId, stored.get(call.deviceId), call.from, call.secretHash) };
  });
}

/** The secret each of the devices is registered with now, for those registered. */
async function storedSecrets(sql: Sql, deviceIds: string[]): Promise<Map<string, string>> {
  const rows = await sql.all<{ deviceId: string; secretHash: string }>(
    'SELECT device_id AS "deviceId", secret_hash AS "secretHash" FROM devices WHERE device_id = ANY ($1::text[])',
    deviceIds,
  );
  return new Map(rows.map((row) => [row.deviceId, row.secretHash]));
}

interface PushRow {
  deviceType: string;
  serviceId: string | null;
  userNumber: string | null;
  subscribedAt: number | null;
}

/** An unknown device has no subscribers, so nothing is recorded for it (see DevicesArea.recordPush). */
async function recordPush(sql: Sql, deviceId: string, pushCode: string, at: number, secretHash?: string): Promise<void> {
  await sql.transaction(async (tx) => {
    // The device row key-share locked until commit, in a statement before the read: an unregistration
    // (it locks the row FOR UPDATE first) cannot commit between the read and the messages, and one
    // holding the row already is waited for, so that the read, whose snapshot is taken after, sees
    // what it left: no device, or no subscriptions of the user it was unregistered from.
    await tx.run('SELECT 1 FROM devices WHERE device_id = $1 FOR KEY SHARE', deviceId);
    // The device's type and its subscribers in one read; no subscriber gives one row of nulls. Only
    // services that still allow the device's type, and pairs whose share holds it: narrowing allowedDevices
    // or a consent silences the others at once (DESIGN J). The id may have been registered again since
    // the push came: the secret tells its registrations apart.
    const rows = await tx.all<PushRow>(
      `SELECT d.device_type AS "deviceType", p.service_id AS "serviceId", p.user_number AS "userNumber", p.created_at AS "subscribedAt"
       FROM devices d LEFT JOIN push_subscriptions p ON p.device_id = d.device_id
         AND EXISTS (SELECT 1 FROM services s WHERE s.service_id = p.service_id AND ${allowsType('s', 'd.device_type')})
         AND ${sharedWith('p.service_id', 'p.user_number', 'p.device_id')}
       WHERE d.device_id = $1 AND ($2::text IS NULL OR d.secret_hash = $2) ORDER BY p.id`,
      deviceId,
      secretHash ?? null,
    );
    const deviceType = rows[0]?.deviceType;
    if (deviceType === undefined) {
      if (secretHash !== undefined) throw pushNotRecorded(deviceId);
      return;
    }
    const subscribers = rows.flatMap(({ serviceId, userNumber, subscribedAt }): Subscriber[] =>
      serviceId !== null && userNumber !== null && subscribedAt !== null ? [{ serviceId, userNumber, subscribedAt }] : [],
    );
    await recordMessages(tx, pushMessages({ deviceId, deviceType }, pushCode, subscribers), at);
  });
}

/** The secret tells the registrations of an id apart (see DevicesArea.setOnline). */
async function setOnline(sql: Sql, deviceId: string, online: boolean, secretHash?: string): Promise<boolean> {
  const updated = await sql.run('UPDATE devices SET online = $1 WHERE device_id = $2 AND ($3::text IS NULL OR secret_hash = $3)', online, deviceId, secretHash ?? null);
  return updated === 1;
}

async function setRealDevicesOffline(sql: Sql): Promise<string[]> {
  return (await sql.all<{ device_id: string }>('UPDATE devices SET online = false WHERE online AND NOT virtual RETURNING device_id')).map((r) => r.device_id);
}

async function countOnlineDevices(sql: Sql): Promise<number> {
  return (await sql.one<{ n: number }>('SELECT count(*)::integer AS n FROM devices WHERE online'))?.n ?? 0;
}

/** false when the device is already registered to the user. */
async function addRegistration(sql: Sql, deviceId: string, userNumber: string, at: number): Promise<boolean> {
  const inserted = await sql.run(
    'INSERT INTO device_users (device_id, user_number, registered_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    deviceId,
    userNumber,
    at,
  );
  return inserted === 1;
}

/** Records a lifecycle message of the device for each of the users to every service listening to that user. */
async function announce(sql: Sql, pushType: LifecyclePushType, device: DeviceFacts, userNumbers: string[], at: number): Promise<void> {
  const listeners = await listenersOf(sql, userNumbers, device.deviceId);
  const specs: MessageSpec[] = userNumbers.flatMap((userNumber) =>
    lifecycleMessages(pushType, device, userNumber, listeners.filter((l) => l.userNumber === userNumber)),
  );
  await recordMessages(sql, specs, at);
}

interface Listener extends LifecycleListener {
  userNumber: string;
}

/**
 * The services connected to each of the users, in the order they connected, that the user's share
 * lets hear of the device. Their connections stay locked (shared) until the change commits: a pair's
 * first device list, marked on the connection before it is read (Devices.listForService), then waits
 * for the change and lists it, where without the lock it could neither list it (not yet committed)
 * nor be told of it (not yet marked when this was read).
 */
async function listenersOf(sql: Sql, userNumbers: string[], deviceId: string): Promise<Listener[]> {
  return sql.all<Listener>(
    `SELECT c.user_number AS "userNumber", c.service_id AS "serviceId", s.allowed_devices AS "allowedDevices",
            c.device_list_loaded_at AS "deviceListLoadedAt"
     FROM connections c JOIN services s ON s.service_id = c.service_id
     WHERE c.user_number = ANY($1::text[]) AND ${sharedWith('c.service_id', 'c.user_number', '$2')}
     ORDER BY c.created_at, c.service_id COLLATE "C"
     FOR SHARE OF c`,
    userNumbers,
    deviceId,
  );
}

/** The reports of this process, written a group at a time (report-groups.ts). */
export type DeviceReports = ReportGroups<ReportCall, number>;

export function deviceReports(sql: Sql): DeviceReports {
  return new ReportGroups((calls) => applyReportGroup(sql, calls));
}

/** The devices area on PostgreSQL; its reports go through `groups`. */
export function postgresDevices(sql: Sql, groups: DeviceReports): DevicesArea {
  const states = stateReads(sql);
  // Reports that change nothing write nothing, as applyReports has it, and need no group.
  const applying = async (deviceId: string, reported: StatusChange[], at: number, from?: number, secretHash?: string): Promise<number> => {
    const changes = reported.filter((change) => !isEmptyReport(change.report));
    if (changes.length === 0) return applyReports(sql, deviceId, changes, at, from, secretHash);
    return groups.run({ deviceId, changes, at, from, secretHash });
  };
  return {
    ...area(sql, {
      registerDevice, shareDevice, unregisterDevice, renameDevice, getDevice, listUserDevices, listVirtualDevices,
      recordPush, setOnline, countOnlineDevices, setRealDevicesOffline,
    }),
    getDeviceState: async (deviceId) => {
      const row = await states.read(deviceId);
      // The store wrote this JSON itself, so its shape is known.
      return row && { deviceId, status: JSON.parse(row.status) as DeviceStatus, version: row.version, online: row.online };
    },
    getDeviceStatusJson: async (deviceId) => {
      const row = await states.read(deviceId);
      return row && { statusJson: row.status, version: row.version, online: row.online };
    },
    applyReport: (deviceId, status, report, at, from, secretHash) => applying(deviceId, [{ status, report }], at, from, secretHash),
    applyReports: applying,
  };
}
