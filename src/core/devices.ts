/**
 * What happens to devices, whoever asks: the partner API, the admin API, the CLI, the MQTT gateway
 * and the simulator all come through here, so a change takes one path and records its messages once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { checkConditions, diffStatus, getModel, mergeStatus, parsedProfile, validateCommand, validateReport, DEVICE_TYPES } from '../catalog/index.js';
import { statusOverBound } from '../catalog/limits.js';
import type { CatalogModel, DeviceStatus } from '../catalog/types.js';
import { fail } from '../errors.js';
import { andThen, type Eventually } from '../eventually.js';
import { hashSecret, isDeviceId, newDeviceId, randomId, type Clock } from '../ids.js';
import type { Connection, Device, DeviceState, Service } from './model.js';
import type { Store } from '../store/store.js';
import type { StatusChange } from '../store/areas/devices.js';
import type { Page } from '../store/areas/overview.js';
import type { LookupCache } from './cache.js';
import type { DeviceChannel } from './channel.js';
import { DeviceInputRefused, DeviceNotRegistered, StatusMoved, StreamLost } from './errors.js';
import { KeyedLock } from './lock.js';

const WASHTOWER_HALVES = new Set(['DEVICE_WASHTOWER_WASHER', 'DEVICE_WASHTOWER_DRYER']);

export interface NewDeviceInput {
  deviceType: string;
  modelName?: string;
  alias: string;
  deviceId?: string;
  groupId?: string;
  virtual?: boolean;
}

/**
 * The user's devices as a service sees them. Both are shared and never changed: the same objects
 * come back while neither the list, the service nor its subscriptions change, which lets GET /devices
 * keep its answer.
 */
export interface ServiceDeviceList {
  /** The user's devices of the service's allowed types, in the order they were registered to the user. */
  devices: readonly Device[];
  /** The devices for which the service holds an unexpired event subscription. */
  reportable: ReadonlySet<string>;
}

export interface DevicesDeps {
  store: Store;
  clock: Clock;
  /** Where commands go: the context's router, to the simulator for virtual appliances and the gateway for real devices. */
  channel: DeviceChannel;
  /** The context's cache of the partner lookups, which reads devices through it. */
  lookups: LookupCache;
  controlTimeoutMs: number;
  virtualByDefault: boolean;
}

export class Devices {
  /** Per device, one read-modify-write of its status at a time: a batch of reports, or a control's change. */
  private readonly lock = new KeyedLock();
  /** Per device, one control at a time, from its status read to its change stored (see `control`). */
  private readonly commands = new KeyedLock();
  /**
   * The partner checks read devices through this cache, and so do reports and pushes: each change of
   * a device record here is told to it.
   */
  private readonly lookups: LookupCache;
  /** Each cached user list by the allowed types it was filtered with (see `#visible`). */
  readonly #visibleLists = new WeakMap<readonly Device[], WeakMap<readonly string[], readonly Device[]>>();

  constructor(private readonly deps: DevicesDeps) {
    this.lookups = deps.lookups;
  }

  /** The catalog model a device was registered as. */
  modelOf(device: Pick<Device, 'deviceType' | 'modelName'>): CatalogModel {
    const model = getModel(device.deviceType, device.modelName);
    if (!model) throw new Error(`No catalog model ${device.deviceType}/${device.modelName}`);
    return model;
  }

  /** Registers a device to a user with its model's default status; records DEVICE_REGISTERED. */
  async register(userNumber: string, input: NewDeviceInput): Promise<{ device: Device; deviceSecret: string }> {
    const { store, clock } = this.deps;
    if (!DEVICE_TYPES.includes(input.deviceType)) {
      throw fail('1102', `deviceType must be one of ${DEVICE_TYPES.join(', ')}; got ${JSON.stringify(input.deviceType)}.`);
    }
    const model = getModel(input.deviceType, input.modelName);
    if (!model) throw fail('1102', `modelName ${JSON.stringify(input.modelName)} is not a model of ${input.deviceType} in the catalog.`);
    const deviceId = input.deviceId ?? newDeviceId();
    if (!isDeviceId(deviceId)) throw fail('1102', `deviceId must be 1 to 128 of A-Z, a-z, 0-9, _ and -; got ${JSON.stringify(deviceId)}.`);
    checkAlias(input.alias);
    if (input.groupId !== undefined && !WASHTOWER_HALVES.has(input.deviceType)) {
      throw fail('1102', 'groupId is only for DEVICE_WASHTOWER_WASHER and DEVICE_WASHTOWER_DRYER.');
    }
    if (!(await store.getUser(userNumber))) throw fail('1202', `User ${userNumber} does not exist.`);
    if (await store.getDevice(deviceId)) throw fail('1102', `Device ${deviceId} is already registered.`);
    await this.checkGroupHalf(userNumber, input);
    const virtual = input.virtual ?? this.deps.virtualByDefault;
    const deviceSecret = randomId(24);
    // A half registered without a groupId starts a group of its own: random, as halves registered in
    // the same millisecond (one clock reading) would otherwise land in one group.
    const groupId = WASHTOWER_HALVES.has(input.deviceType) ? (input.groupId ?? randomId(8)) : null;
    const device = await store.registerDevice(
      {
        deviceId,
        deviceType: model.deviceType,
        modelName: model.modelName,
        alias: input.alias,
        groupId,
        secretHash: hashSecret(deviceSecret),
        virtual,
        online: virtual,
        status: structuredClone(model.defaultStatus),
      },
      userNumber,
      clock.now(),
    ).catch(async (error: unknown) => {
      // A call at the same time registered the id or the group's half, or deleted the user, since the
      // checks above (the store checks the half again as it writes): answered as those checks answer.
      if (!(await store.getUser(userNumber))) throw fail('1202', `User ${userNumber} does not exist.`);
      if (await store.getDevice(deviceId)) throw fail('1102', `Device ${deviceId} is already registered.`);
      await this.checkGroupHalf(userNumber, input);
      throw error;
    });
    await this.lookups.userChanged(userNumber);
    return { device, deviceSecret };
  }

  /**
   * A washtower is one washer and one dryer: clients pair the halves by groupId. 1102 when the user's
   * group has this half, for a device registered or shared to the user.
   */
  private async checkGroupHalf(userNumber: string, device: { deviceType: string; groupId?: string | null }): Promise<void> {
    if (device.groupId === undefined || device.groupId === null) return;
    const half = (await this.deps.store.listUserDevices(userNumber)).find((d) => d.groupId === device.groupId && d.deviceType === device.deviceType);
    if (half) throw fail('1102', `groupId ${JSON.stringify(device.groupId)} already has its ${device.deviceType}: ${half.deviceId}.`);
  }

  /**
   * GET /devices: the user's devices of the service's allowed types. The first call for a pair loads
   * the list for good (the precondition of every device operation, and the lifecycle subscription).
   */
  async listForService(service: Service, connection: Connection): Promise<ServiceDeviceList> {
    const { store, clock } = this.deps;
    const now = clock.now();
    // Only a disconnect undoes the load, and then the connection is gone: no write after the first.
    // The first marks the pair before it reads, from the store: a device registered or unregistered
    // meanwhile is then in the list as it is, or announced to the pair (its change saw the mark), or
    // both; never neither, as when the mark followed the read (or a list cached before the change).
    const first = connection.deviceListLoadedAt === null;
    if (first) await store.markDeviceListLoaded(service.serviceId, connection.userNumber, now);
    const owned = first ? await store.listUserDevices(connection.userNumber) : await this.lookups.listUserDevices(connection.userNumber);
    const devices = this.#visible(owned, service.allowedDevices);
    const reportable = await this.lookups.eventDeviceIds(service.serviceId, connection.userNumber, now);
    return { devices, reportable };
  }

  /** The devices of the allowed types, the same array for the same (cached) list and types. */
  #visible(owned: readonly Device[], allowed: readonly string[]): readonly Device[] {
    let byAllowed = this.#visibleLists.get(owned);
    if (byAllowed === undefined) this.#visibleLists.set(owned, (byAllowed = new WeakMap()));
    let visible = byAllowed.get(allowed);
    if (visible === undefined) byAllowed.set(allowed, (visible = owned.filter((device) => allowed.includes(device.deviceType))));
    return visible;
  }

  /** Every registered device by deviceId, a page at a time (the platform's view, not a service's). */
  async list(page: Page): Promise<Device[]> {
    return this.deps.store.listDevices(page);
  }

  async get(deviceId: string): Promise<Device> {
    const device = await this.deps.store.getDevice(deviceId);
    if (!device) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
    return device;
  }

  /**
   * The device as the lookup cache has it, for what needs only its model: a device that reports is
   * read on every report otherwise. The store still refuses to record for a device that is gone.
   */
  private async known(deviceId: string): Promise<Device> {
    const device = await this.lookups.getDevice(deviceId);
    if (!device) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
    return device;
  }

  async state(deviceId: string): Promise<DeviceState> {
    const state = await this.deps.store.getDeviceState(deviceId);
    if (!state) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
    return state;
  }

  /**
   * The status a partner may read, as its stored JSON text (answered without parsing it): refused
   * with 1222 while the device is not connected.
   */
  readableStatusJson(deviceId: string): Eventually<{ statusJson: string; version: number }> {
    return andThen(this.deps.store.getDeviceStatusJson(deviceId), (state) => {
      if (!state) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
      if (!state.online) throw fail('1222', `Device ${deviceId} is not connected.`);
      return state;
    });
  }

  /**
   * Control (DESIGN A.7): validate against the profile, check conditions when asked, send to the
   * device, and persist what it answers with its DEVICE_STATUS event. Returns the full new status.
   */
  async control(device: Device, command: unknown, conditional: boolean): Promise<DeviceState> {
    const model = this.modelOf(device);
    const profile = parsedProfile(model);
    const valid = validateCommand(profile, command);
    if (!valid.ok) throw fail(valid.refusal.code, valid.refusal.message);
    return this.commands.run(device.deviceId, async () => {
      const state = await this.state(device.deviceId);
      if (!state.online) throw fail('1222', `Device ${device.deviceId} is not connected.`);
      if (conditional) {
        const refusal = checkConditions(device.deviceType, profile, state.status, valid.value);
        if (refusal) throw fail(refusal.code, refusal.message);
      }
      // Not under the status lock: what the device reports before its answer is stored meanwhile, before the command's change.
      const outcome = await this.deps.channel.sendCommand(device, state.status, valid.value, this.deps.controlTimeoutMs);
      if (!outcome.ok) throw fail(outcome.code, outcome.message);
      // The device did answer, but a status over the bound is not kept: the command failed as far as the partner can know.
      const over = statusOverBound(outcome.status);
      if (over) throw fail('2208', `Device ${device.deviceId} answered with a status that cannot be kept: ${over}.`);
      // Taken in the turn its answer came in (no I/O before it): the device's reports after the answer wait for this write.
      return this.lock.run(device.deviceId, () => this.persist(device, state, outcome));
    });
  }

  /**
   * A device's report (MQTT, admin API or simulator): must fit the profile's readable values, and
   * leave the status within its bound (DESIGN J), else 1102. `registration` as `reports` takes it.
   */
  async report(deviceId: string, report: unknown, registration?: string): Promise<DeviceState> {
    const [outcome] = await this.reports(deviceId, [report], registration);
    if (outcome instanceof DeviceInputRefused) throw outcome;
    return outcome!;
  }

  /**
   * Reports of one device in the order it sent them, each taken as `report` takes it and all stored
   * in one write (the MQTT bridge hands over together those that came while the last were stored).
   * Per report, the state it left or why it was refused; an unknown device or a store failure
   * rejects them all, none stored. They are stored only on the registration they came for: the one
   * whose secret hash is `registration` (the device's connection was admitted with it), else the one
   * known now. One gone by then (the id unregistered, maybe registered again) rejects them all with
   * DeviceNotRegistered.
   *
   * `consuming` says whether the node still consumes the device stream they came on (external
   * broker): once it does not, they are not stored (StreamLost) but left to the node that does. It is
   * asked after each read of the status they are worked out from, and the write stores them only on
   * that version: so a report this node took before losing the stream is never merged over what the
   * next holder stored since (it gets the same reports again from the broker).
   */
  async reports(deviceId: string, reports: unknown[], registration?: string, consuming?: () => boolean): Promise<(DeviceState | DeviceInputRefused)[]> {
    const device = await this.known(deviceId);
    const profile = parsedProfile(this.modelOf(device));
    const valid = reports.map((report) => validateReport(profile, report));
    return this.lock.run(deviceId, () =>
      whileStatusMoves(async () => {
        const read = await this.state(deviceId);
        if (consuming && !consuming()) throw new StreamLost(deviceId);
        let state = read;
        const changes: StatusChange[] = [];
        // Each state as it will be once stored, but for its version: the store's, counted back from the last.
        const outcomes: ({ state: DeviceState; changesSoFar: number } | DeviceInputRefused)[] = [];
        for (const result of valid) {
          if (!result.ok) {
            outcomes.push(new DeviceInputRefused(result.refusal.message));
            continue;
          }
          const status = mergeStatus(profile, state.status, result.value);
          const over = statusOverBound(status);
          if (over) {
            outcomes.push(new DeviceInputRefused(`The report is refused: ${over}.`));
            continue;
          }
          const report = diffStatus(profile, state.status, status);
          if (report !== null) {
            changes.push({ status, report });
            state = { ...state, status };
          }
          outcomes.push({ state, changesSoFar: changes.length });
        }
        const registered = registration ?? device.secretHash;
        const version = changes.length ? await this.deps.store.applyReports(deviceId, changes, this.deps.clock.now(), read.version, registered) : state.version;
        return outcomes.map((outcome) =>
          outcome instanceof DeviceInputRefused ? outcome : { ...outcome.state, version: version - (changes.length - outcome.changesSoFar) },
        );
      }),
    );
  }

  /**
   * A notification the device raised: must be one of its profile's push codes, else 1102. Recorded
   * only for the registration it came for, as `reports` stores reports (`registration` and
   * `consuming` as it takes them). A push has no version to store it on: `consuming` is asked just
   * before the write, and one already sent when the stream goes to another node may be recorded twice.
   */
  async push(deviceId: string, pushCode: unknown, registration?: string, consuming?: () => boolean): Promise<void> {
    const device = await this.known(deviceId);
    const { pushCodes } = parsedProfile(this.modelOf(device));
    if (typeof pushCode !== 'string' || !pushCodes.includes(pushCode)) {
      const allowed = pushCodes.length ? pushCodes.join(', ') : 'none (this model raises no notifications)';
      throw new DeviceInputRefused(`pushCode must be one of ${allowed}; got ${JSON.stringify(pushCode)}.`);
    }
    if (consuming && !consuming()) throw new StreamLost(deviceId);
    await this.deps.store.recordPush(deviceId, pushCode, this.deps.clock.now(), registration ?? device.secretHash);
  }

  /**
   * Changed only on the registration whose secret hash is `registration` (the device's connection was
   * admitted with it), else on the one registered when it is stored; one gone rejects with DeviceNotRegistered.
   * `consuming` as `push` takes it.
   */
  async setConnection(deviceId: string, online: boolean, registration?: string, consuming?: () => boolean): Promise<void> {
    if (consuming && !consuming()) throw new StreamLost(deviceId);
    const known = await this.deps.store.setOnline(deviceId, online, registration);
    await this.lookups.deviceChanged(deviceId);
    if (!known) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
  }

  /**
   * Marks every real device offline, as a broker that starts finds them: none connected yet. How
   * many were online.
   */
  async setRealDevicesOffline(): Promise<number> {
    const ids = await this.deps.store.setRealDevicesOffline();
    for (const deviceId of ids) await this.lookups.deviceChanged(deviceId);
    return ids.length;
  }

  // Lifecycle calls of the admin API and the CLI; the store records the A.8 messages of each.

  /** Renames a device; records DEVICE_ALIAS_CHANGED. */
  async rename(deviceId: string, alias: string): Promise<Device> {
    checkAlias(alias);
    const device = await this.deps.store.renameDevice(deviceId, alias, this.deps.clock.now());
    await this.lookups.deviceChanged(deviceId);
    if (!device) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
    return device;
  }

  /**
   * Registers an existing device to one more user of the home; records DEVICE_REGISTERED. A washtower
   * half is refused as registering it would be when the user's group has that half.
   */
  async share(deviceId: string, userNumber: string): Promise<void> {
    await this.checkGroupHalf(userNumber, await this.checkShareable(deviceId, userNumber));
    const shared = await this.deps.store.shareDevice(deviceId, userNumber, this.deps.clock.now()).catch(async (error: unknown) => {
      // A call at the same time registered or shared the group's half to the user since the checks (the
      // store checks the half again as it writes): answered as those checks now answer.
      await this.checkGroupHalf(userNumber, await this.checkShareable(deviceId, userNumber));
      throw error;
    });
    await this.lookups.deviceChanged(deviceId);
    await this.lookups.userChanged(userNumber);
    if (shared) return;
    // A call at the same time shared it, or removed the user or the device, since the check: answered as things now are.
    await this.checkShareable(deviceId, userNumber);
    throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
  }

  /** The device, unless 1202 for an unknown user, 1205 for an unknown device, 1102 for a device the user has already. */
  private async checkShareable(deviceId: string, userNumber: string): Promise<Device> {
    const device = await this.userDevice(deviceId, userNumber, false);
    if (device.userNumbers.includes(userNumber)) throw fail('1102', `Device ${deviceId} is already registered to user ${userNumber}.`);
    return device;
  }

  /** Unregisters a device from one user (the device goes when no user is left); records DEVICE_UNREGISTERED. */
  async unregister(deviceId: string, userNumber: string): Promise<void> {
    await this.userDevice(deviceId, userNumber, true);
    const unregistered = await this.deps.store.unregisterDevice(deviceId, userNumber, this.deps.clock.now());
    await this.lookups.deviceChanged(deviceId);
    if (!unregistered) throw new DeviceNotRegistered(`Device ${deviceId} is not registered to user ${userNumber}.`);
  }

  /** The device, once the user exists (1202) and the device too (1205) — registered to that user when `owned`. */
  private async userDevice(deviceId: string, userNumber: string, owned: boolean): Promise<Device> {
    if (!(await this.deps.store.getUser(userNumber))) throw fail('1202', `User ${userNumber} does not exist.`);
    const device = await this.deps.store.getDevice(deviceId);
    if (!device) throw new DeviceNotRegistered(`Device ${deviceId} is not registered.`);
    if (owned && !device.userNumbers.includes(userNumber)) throw new DeviceNotRegistered(`Device ${deviceId} is not registered to user ${userNumber}.`);
    return device;
  }

  /**
   * Stores a device's answer to the command sent with `state`, on the registration it was sent to
   * (else DeviceNotRegistered). A report stored meanwhile (by this node or another) is older than the
   * answer, so the answer is made again on the status as stored: what that report changed and the
   * answer did not, stays, and what the device answered wins, even a value `state` had already.
   */
  private async persist(device: Device, state: DeviceState, outcome: { status: DeviceStatus; answered: DeviceStatus | null; report?: DeviceStatus | null }): Promise<DeviceState> {
    const profile = parsedProfile(this.modelOf(device));
    const change = outcome.report === undefined ? diffStatus(profile, state.status, outcome.status) : outcome.report;
    return whileStatusMoves(async (first) => {
      // The first was checked by the caller.
      if (first && change !== null) {
        const version = await this.deps.store.applyReport(device.deviceId, outcome.status, change, this.deps.clock.now(), state.version, device.secretHash);
        return { ...state, status: outcome.status, version };
      }
      // Tried again, or an answer that changes nothing on `state`: the status as stored may still differ from it.
      const before = await this.state(device.deviceId);
      if (before.version === state.version || outcome.answered === null) return before;
      const after = mergeStatus(profile, before.status, outcome.answered);
      const over = statusOverBound(after);
      if (over) throw fail('2208', `Device ${device.deviceId} answered with a status that cannot be kept: ${over}.`);
      const report = diffStatus(profile, before.status, after);
      if (report === null) return before;
      const version = await this.deps.store.applyReport(device.deviceId, after, report, this.deps.clock.now(), before.version, device.secretHash);
      return { ...before, status: after, version };
    });
  }
}

/**
 * Each try reads the status afresh; this many in a row that others overtook is a fault, not a race.
 * Two nodes each working through a queue of one device's reports overtook each other 10 times in a
 * row under load: after each loss a try waits a random while, longer each time, so that one gets through.
 */
const STATUS_TRIES = 30;

/** Runs `write` again while the status it was worked out from moved on before it was stored (StatusMoved). */
async function whileStatusMoves<T>(write: (first: boolean) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await write(tries === 1);
    } catch (error) {
      if (!(error instanceof StatusMoved) || tries === STATUS_TRIES) throw error;
      await sleep(Math.random() * tries);
    }
  }
}

/** An alias is what a partner shows its user for the device: spaces alone would show nothing. */
function checkAlias(alias: string): void {
  if (alias.trim() === '') throw fail('1102', `alias must have a character other than spaces; got ${JSON.stringify(alias)}.`);
}
